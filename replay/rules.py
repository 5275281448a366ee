"""Table rules as data: one frozen `Rules` value per match.

Every option of the rules page is a field with the values it allows; a
profile is a named set of overrides on the `international` defaults, and
`resolve(profile, overrides)` turns a log's `match_start` into one `Rules`
value or raises `RulesError` naming the bad profile, option or value.

>>> r = resolve("puerto_rico")
>>> (r.first_lead, r.later_lead, r.block_end, r.target_points)
('double_six', 'winner', 'all_pass', 200)
>>> resolve("international", {"match_end": {"kind": "points", "target": 50}}).target_points
50
>>> resolve("international", {"players": 3})
Traceback (most recent call last):
...
replay.rules.RulesError: teams = pairs needs 4 players
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError


class RulesError(ValueError):
    """A profile, option, value or combination the rules page does not allow.

    `option` names the offending option (or None for the profile itself).
    """

    def __init__(self, message: str, *, option: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.option = option
        self.value = value


_STRICT = ConfigDict(frozen=True, extra="forbid", strict=True)
# Bounded so that a match's points stay far inside the store's INTEGER columns.
LIMIT = 1_000_000
NonNeg = Annotated[int, Field(ge=0, le=LIMIT, strict=True)]
Positive = Annotated[int, Field(ge=1, le=LIMIT)]


class PointsEnd(BaseModel):
    """A side with `target` or more points after a hand wins."""

    model_config = _STRICT
    kind: Literal["points"] = "points"
    target: Positive


class ChivaEnd(BaseModel):
    """A side that wins `wins` hands while another side has none wins."""

    model_config = _STRICT
    kind: Literal["chiva"] = "chiva"
    wins: Positive


class RoundsEnd(BaseModel):
    """First side to win `target` hands; it wins if the other won `loser_min`."""

    model_config = _STRICT
    kind: Literal["rounds"] = "rounds"
    target: Positive
    loser_min: NonNeg


class MiloEnd(BaseModel):
    """First side to `target` milo points."""

    model_config = _STRICT
    kind: Literal["milo"] = "milo"
    target: Positive


class FixedEnd(BaseModel):
    """Exactly `hands` hands are played; the fewest points win."""

    model_config = _STRICT
    kind: Literal["fixed"] = "fixed"
    hands: Positive


MatchEnd = Annotated[
    PointsEnd | ChivaEnd | RoundsEnd | MiloEnd | FixedEnd, Field(discriminator="kind")
]

FirstLead = Literal["double_six", "highest_double", "draw_for_lead", "bayamon_draw", "drawn_double"]


class Rules(BaseModel):
    """Every option of the rules page, with the `international` defaults."""

    model_config = _STRICT

    players: Literal[2, 3, 4] = 4
    teams: Literal["pairs", "individual"] = "pairs"
    stock: Literal["none", "draw", "doubles_aside"] = "none"
    first_lead: FirstLead = "draw_for_lead"
    later_lead: Literal["rotate", "winner"] = "rotate"
    block_lead: Literal["winner_lowest", "blocker", "rotate"] = "winner_lowest"
    tie_lead: Literal["rotate", "double_six_holder", "blocker"] = "rotate"
    lead_to_partner: bool = False
    block_end: Literal["immediate", "all_pass"] = "immediate"
    block_winner: Literal["side_total", "lowest_hand", "blocker_vs_right"] = "side_total"
    block_tie: Literal["no_score", "first_side_wins", "last_side_wins"] = "no_score"
    count: Literal["all", "opponents"] = "all"
    round_down: Literal[0, 5, 10] = 0
    capicua_bonus: NonNeg = 0
    chuchazo_bonus: NonNeg = 0
    chuchazo_when_both_ends: Literal["chuchazo", "dominao"] = "chuchazo"
    ones_bonus: NonNeg = 0
    first_block_bonus: NonNeg = 0
    # JSON gives lists; the container may be lax, its items stay strict ints
    hand_bonuses: tuple[NonNeg, ...] = Field(default=(), strict=False)
    pass_bonus: tuple[NonNeg, NonNeg] | None = Field(default=None, strict=False)
    scoring: Literal["pips", "milo", "royal_rumble"] = "pips"
    # a log gives match_end as a whole object: every field of its kind is required
    match_end: MatchEnd = Field(default_factory=lambda: PointsEnd(target=200))
    redeal: Literal["none", "five_doubles_claim", "five_doubles_auto"] = "none"
    next_match_lead: Literal["rotate_first"] = "rotate_first"

    @field_validator("players", "round_down", mode="before")
    @classmethod
    def _exact_int(cls, v: Any) -> Any:
        # Literal ints match by equality, so False would pass as 0 and 4.0 as 4
        if type(v) is not int:
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        return v

    @model_validator(mode="after")
    def _combinations(self) -> Rules:
        for option, message in self.conflicts():
            raise ValueError(f"{option}: {message}")
        return self

    def conflicts(self) -> list[tuple[str, str]]:
        """The combinations the rules page rules out, as (option, reason)."""
        out: list[tuple[str, str]] = []
        individual = self.teams == "individual"
        if self.teams == "pairs" and self.players != 4:
            out.append(("teams", "teams = pairs needs 4 players"))
        if self.stock == "doubles_aside" and self.players != 3:
            out.append(("stock", "stock = doubles_aside needs 3 players"))
        if self.stock == "draw" and self.block_end == "immediate":
            out.append(("block_end", "stock = draw needs block_end = all_pass"))
        full_deal = self.players == 4 and self.stock == "none"
        if self.first_lead == "double_six" and not full_deal:
            out.append(("first_lead", "first_lead = double_six needs 4 players and stock = none"))
        if self.tie_lead == "double_six_holder" and not full_deal:
            out.append(
                ("tie_lead", "tie_lead = double_six_holder needs 4 players and stock = none")
            )
        if self.first_lead == "drawn_double" and self.stock != "doubles_aside":
            out.append(("first_lead", "first_lead = drawn_double needs stock = doubles_aside"))
        if individual and self.block_tie != "no_score":
            out.append(("block_tie", f"block_tie = {self.block_tie} needs teams = pairs"))
        if individual and self.lead_to_partner:
            out.append(("lead_to_partner", "lead_to_partner needs teams = pairs"))
        if individual and self.pass_bonus is not None:
            out.append(("pass_bonus", "pass_bonus needs teams = pairs"))
        if self.scoring != "pips":
            for name in ("capicua_bonus", "chuchazo_bonus", "ones_bonus", "first_block_bonus"):
                if getattr(self, name):
                    out.append((name, f"{name} needs scoring = pips"))
            if any(self.hand_bonuses):
                out.append(("hand_bonuses", "hand_bonuses needs scoring = pips"))
            if self.pass_bonus is not None:
                out.append(("pass_bonus", "pass_bonus needs scoring = pips"))
            if self.round_down:
                out.append(("round_down", "round_down needs scoring = pips"))
        if self.scoring == "royal_rumble" and not individual:
            out.append(("scoring", "scoring = royal_rumble needs teams = individual"))
        return out

    # Derived facts the engine asks for often.

    @property
    def sides(self) -> int:
        """Number of sides: 2 in pair games, one per seat otherwise."""
        return 2 if self.teams == "pairs" else self.players

    def side_of(self, seat: int) -> int:
        """The side a seat plays for."""
        return seat % 2 if self.teams == "pairs" else seat

    @property
    def dealt_tiles(self) -> int:
        """Tiles dealt into hands (7 a seat)."""
        return 7 * self.players

    @property
    def stock_size(self) -> int:
        """Tiles left undealt: the boneyard under `draw`, else out of play."""
        if self.stock == "doubles_aside":
            return 0
        return 28 - self.dealt_tiles

    @property
    def target_points(self) -> int | None:
        """The points target of a `points` match, else None."""
        return self.match_end.target if isinstance(self.match_end, PointsEnd) else None

    @property
    def lead_draw_used(self) -> bool:
        """Whether the first hand's leader comes from a `lead_draw`."""
        return self.first_lead in ("draw_for_lead", "bayamon_draw", "drawn_double")

    def overrides(self) -> dict[str, Any]:
        """The options that differ from `international`, as JSON values."""
        base = _DEFAULT.model_dump(mode="json")
        mine = self.model_dump(mode="json")
        return {k: v for k, v in mine.items() if base[k] != v}


_DEFAULT = Rules()
OPTION_NAMES: frozenset[str] = frozenset(Rules.model_fields)


@dataclass(frozen=True)
class Profile:
    """A named preset: overrides on the `international` defaults.

    `estimates` names the options whose value the rules page marks as an
    estimate (the sources leave the cell open), so reports can say so.
    """

    name: str
    sources: tuple[str, ...]
    overrides: Mapping[str, Any]
    estimates: frozenset[str] = frozenset()
    shutout_note: str = "shutout"
    summary: str = ""
    rules: Rules = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", _build(self.name, self.overrides, {}))


def _build(profile: str, base: Mapping[str, Any], overrides: Mapping[str, Any]) -> Rules:
    data = {**base, **overrides}
    try:
        return Rules.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = err.get("loc") or ()
        option = str(loc[0]) if loc else None
        if err["type"] == "extra_forbidden":
            # inside match_end the loc carries the kind tag: match_end.points.x
            name = ".".join(str(p) for p in (loc[:1] + loc[2:] if len(loc) > 2 else loc))
            raise RulesError(f"unknown option {name!r}", option=option) from None
        if err["type"] == "value_error":
            # a combination ruled out: our message already reads "option: reason"
            option, _, reason = str(err["ctx"]["error"]).partition(": ")
            raise RulesError(reason, option=option) from None
        where = ".".join(str(p) for p in loc if not isinstance(p, int) or len(loc) == 1)
        value = data.get(option) if option else None
        raise RulesError(
            f"option {where or option!r}: bad value {value!r} ({err['msg']})",
            option=option,
            value=value,
        ) from None


_DOUBLE_SIX = {"first_lead": "double_six"}
_WINNER = {"later_lead": "winner"}
_ALL_PASS = {"block_end": "all_pass"}
_DOSCIENTOS = {**_DOUBLE_SIX, **_WINNER, **_ALL_PASS}
_PR_2P = {
    "players": 2,
    "teams": "individual",
    "stock": "draw",
    "first_lead": "highest_double",
    **_WINNER,
    **_ALL_PASS,
}


def _points(n: int) -> dict[str, Any]:
    return {"match_end": {"kind": "points", "target": n}}


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in [
        Profile("international", ("000",), {}, summary="Latin partnership, the platform default"),
        Profile("puerto_rico", ("000", "004"), _DOSCIENTOS, shutout_note="chiva"),
        Profile(
            "venezuela",
            ("000",),
            {**_DOUBLE_SIX, "count": "opponents", **_points(100)},
            estimates=frozenset({"count", "match_end"}),
            shutout_note="zapato",
        ),
        Profile(
            "colombia",
            ("000",),
            {
                **_DOUBLE_SIX,
                "count": "opponents",
                "redeal": "five_doubles_claim",
                **_points(100),
            },
            estimates=frozenset({"count", "match_end"}),
        ),
        Profile(
            "mexico",
            ("000",),
            {**_DOUBLE_SIX, "count": "opponents", **_points(100)},
            estimates=frozenset({"count", "match_end"}),
        ),
        Profile(
            "dominican",
            ("000", "002"),
            {**_DOUBLE_SIX, **_WINNER, "capicua_bonus": 25},
            estimates=frozenset({"first_lead", "capicua_bonus"}),
        ),
        Profile(
            "la_plaza",
            ("002",),
            {
                **_DOUBLE_SIX,
                **_WINNER,
                "block_lead": "blocker",
                "tie_lead": "blocker",
                **_points(100),
            },
        ),
        Profile(
            "pagat",
            ("003",),
            {**_DOUBLE_SIX, **_ALL_PASS, "count": "opponents", **_points(100)},
        ),
        Profile("doscientos", ("003", "004"), _DOSCIENTOS, shutout_note="chiva"),
        Profile(
            "quinientos",
            ("003", "004"),
            {
                **_DOSCIENTOS,
                "capicua_bonus": 100,
                "chuchazo_bonus": 100,
                "hand_bonuses": [100, 75, 50, 25],
                **_points(500),
            },
            shutout_note="chiva",
        ),
        Profile(
            "pase_sureno",
            ("003", "004"),
            {**_DOSCIENTOS, "pass_bonus": [20, 10], "round_down": 10},
            shutout_note="chiva",
        ),
        Profile(
            "south_american",
            ("003",),
            {
                **_DOUBLE_SIX,
                "count": "opponents",
                "redeal": "five_doubles_auto",
                "match_end": {"kind": "rounds", "target": 10, "loser_min": 5},
            },
        ),
        Profile(
            "milo",
            ("003",),
            {**_DOUBLE_SIX, "scoring": "milo", "match_end": {"kind": "milo", "target": 5}},
        ),
        Profile(
            "chiva",
            ("004",),
            {**_DOSCIENTOS, "match_end": {"kind": "chiva", "wins": 4}},
        ),
        Profile(
            "domena_2p",
            ("001",),
            {**_PR_2P, "count": "opponents", **_points(100)},
        ),
        Profile(
            "domena_4p",
            ("001",),
            {
                **_DOSCIENTOS,
                "block_winner": "lowest_hand",
                "count": "opponents",
                **_points(100),
            },
            estimates=frozenset({"block_end"}),
        ),
        Profile("pr_2p", ("004",), _PR_2P),
        Profile("pr_3p", ("004",), {**_PR_2P, "players": 3}),
        Profile(
            "doubles_in_boneyard",
            ("004",),
            {
                "players": 3,
                "teams": "individual",
                "stock": "doubles_aside",
                "first_lead": "drawn_double",
                **_WINNER,
                **_ALL_PASS,
                "count": "opponents",
                **_points(200),
            },
        ),
        Profile(
            "royal_rumble",
            ("004",),
            {
                "teams": "individual",
                **_DOUBLE_SIX,
                **_WINNER,
                **_ALL_PASS,
                "scoring": "royal_rumble",
                "match_end": {"kind": "fixed", "hands": 7},
            },
            estimates=frozenset({"first_lead"}),
        ),
    ]
}


def resolve(profile: str, overrides: Mapping[str, Any] | None = None) -> Rules:
    """The rules of a table: a profile's values with the log's overrides on top.

    >>> resolve("pase_sureno").pass_bonus
    (20, 10)
    >>> resolve("nope")
    Traceback (most recent call last):
    ...
    replay.rules.RulesError: unknown profile 'nope'
    >>> resolve("international", {"round_down": 3})
    Traceback (most recent call last):
    ...
    replay.rules.RulesError: option 'round_down': bad value 3 (Input should be 0, 5 or 10)
    """
    try:
        base = PROFILES[profile]
    except (KeyError, TypeError):
        raise RulesError(f"unknown profile {profile!r}", value=profile) from None
    if not overrides:
        return base.rules
    if not isinstance(overrides, Mapping):
        raise RulesError(f"rules must be an object, not {overrides!r}", value=overrides)
    return _build(profile, base.overrides, overrides)
