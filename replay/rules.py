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

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Annotated, Any, Literal, Self

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


# -- the options that cross into C, as small ints -----------------------------
#
# Each enum lists an option's values in the order of its `Literal` in
# `Rules` (a test holds the two together); a member's name is the log's
# spelling in capitals. `Rules` keeps the strings, as the log and the
# store's JSON spell them; `spec_of(rules)` turns them into these ints for
# the scorers and the solvers (and replay/_rules.h gives C the same ints).


class Option(IntEnum):
    """An option value as the C code takes it; `of` reads the log's spelling.

    >>> Stock.of("doubles_aside"), Stock.DRAW.spelling, int(Scoring.of("milo"))
    (<Stock.DOUBLES_ASIDE: 2>, 'draw', 1)
    """

    @classmethod
    def of(cls, spelling: str) -> Self:
        """The member the log spells `spelling`."""
        return cls[spelling.upper()]

    @property
    def spelling(self) -> str:
        """The value as the log and the JSON spell it."""
        return self.name.lower()


class Teams(Option):
    PAIRS = 0
    INDIVIDUAL = 1


class Stock(Option):
    NONE = 0
    DRAW = 1
    DOUBLES_ASIDE = 2


class FirstLead(Option):
    DOUBLE_SIX = 0
    HIGHEST_DOUBLE = 1
    DRAW_FOR_LEAD = 2
    BAYAMON_DRAW = 3
    DRAWN_DOUBLE = 4


class LaterLead(Option):
    ROTATE = 0
    WINNER = 1


class BlockLead(Option):
    WINNER_LOWEST = 0
    BLOCKER = 1
    ROTATE = 2


class TieLead(Option):
    ROTATE = 0
    DOUBLE_SIX_HOLDER = 1
    BLOCKER = 2


class BlockEnd(Option):
    IMMEDIATE = 0
    ALL_PASS = 1


class BlockWinner(Option):
    SIDE_TOTAL = 0
    LOWEST_HAND = 1
    BLOCKER_VS_RIGHT = 2


class BlockTie(Option):
    NO_SCORE = 0
    FIRST_SIDE_WINS = 1
    LAST_SIDE_WINS = 2


class Count(Option):
    ALL = 0
    OPPONENTS = 1


class ChuchazoWhenBothEnds(Option):
    CHUCHAZO = 0
    DOMINAO = 1


class Scoring(Option):
    PIPS = 0
    MILO = 1
    ROYAL_RUMBLE = 2


class EndKind(Option):
    """`match_end.kind`."""

    POINTS = 0
    CHIVA = 1
    ROUNDS = 2
    MILO = 3
    FIXED = 4


#: The enum of each option of `Rules` that crosses into C.
OPTION_ENUMS: dict[str, type[Option]] = {
    "teams": Teams,
    "stock": Stock,
    "first_lead": FirstLead,
    "later_lead": LaterLead,
    "block_lead": BlockLead,
    "tie_lead": TieLead,
    "block_end": BlockEnd,
    "block_winner": BlockWinner,
    "block_tie": BlockTie,
    "count": Count,
    "chuchazo_when_both_ends": ChuchazoWhenBothEnds,
    "scoring": Scoring,
}



MatchEnd = Annotated[
    PointsEnd | ChivaEnd | RoundsEnd | MiloEnd | FixedEnd, Field(discriminator="kind")
]


class Rules(BaseModel):
    """Every option of the rules page, with the `international` defaults."""

    model_config = _STRICT

    players: Literal[2, 3, 4] = 4
    teams: Literal["pairs", "individual"] = "pairs"
    stock: Literal["none", "draw", "doubles_aside"] = "none"
    first_lead: Literal["double_six", "highest_double", "draw_for_lead", "bayamon_draw", "drawn_double"] = (
        "draw_for_lead"
    )
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
            out += self._pips_only()
        if self.scoring == "royal_rumble" and not individual:
            out.append(("scoring", "scoring = royal_rumble needs teams = individual"))
        return out

    def _pips_only(self) -> list[tuple[str, str]]:
        """The options of pip scoring that are set (a conflict under another scoring)."""
        out: list[tuple[str, str]] = []
        for name in ("capicua_bonus", "chuchazo_bonus", "ones_bonus", "first_block_bonus"):
            if getattr(self, name):
                out.append((name, f"{name} needs scoring = pips"))
        if any(self.hand_bonuses):
            out.append(("hand_bonuses", "hand_bonuses needs scoring = pips"))
        if self.pass_bonus is not None:
            out.append(("pass_bonus", "pass_bonus needs scoring = pips"))
        if self.round_down:
            out.append(("round_down", "round_down needs scoring = pips"))
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


# -- the rules as the scorers and solvers take them ---------------------------


@dataclass(frozen=True, slots=True)
class RulesSpec:
    """A `Rules` value as ints: what `replay.match`'s scoring, the solvers
    and the C `Scorer`/`Solver` read (by field name), built once per
    `Rules` by :func:`spec_of`.

    The options keep their names; `end_kind`, `end_a` and `end_b` are
    `match_end` (the target, wins or hands; and `loser_min`).

    >>> s = spec_of(resolve("pase_sureno"))
    >>> s.players, s.sides, s.scoring, s.block_end, s.pass_bonus, s.end_kind, s.end_a
    (4, 2, <Scoring.PIPS: 0>, <BlockEnd.ALL_PASS: 1>, (20, 10), <EndKind.POINTS: 0>, 200)
    >>> spec_of(resolve("pase_sureno")) is s
    True
    """

    players: int
    teams: Teams
    stock: Stock
    first_lead: FirstLead
    later_lead: LaterLead
    block_lead: BlockLead
    tie_lead: TieLead
    block_end: BlockEnd
    block_winner: BlockWinner
    block_tie: BlockTie
    count: Count
    round_down: int
    capicua_bonus: int
    chuchazo_bonus: int
    chuchazo_when_both_ends: ChuchazoWhenBothEnds
    ones_bonus: int
    first_block_bonus: int
    hand_bonuses: tuple[int, ...]
    pass_bonus: tuple[int, int] | None
    scoring: Scoring
    end_kind: EndKind
    end_a: int
    end_b: int

    @property
    def pairs(self) -> bool:
        return self.teams is Teams.PAIRS

    @property
    def sides(self) -> int:
        """Number of sides: 2 in pair games, one per seat otherwise."""
        return 2 if self.teams is Teams.PAIRS else self.players


@functools.lru_cache(maxsize=512)
def spec_of(rules: Rules) -> RulesSpec:
    """The `RulesSpec` of `rules` (made once per value)."""
    end = rules.match_end
    if isinstance(end, ChivaEnd):
        kind, a, b = EndKind.CHIVA, end.wins, 0
    elif isinstance(end, RoundsEnd):
        kind, a, b = EndKind.ROUNDS, end.target, end.loser_min
    elif isinstance(end, MiloEnd):
        kind, a, b = EndKind.MILO, end.target, 0
    elif isinstance(end, FixedEnd):
        kind, a, b = EndKind.FIXED, end.hands, 0
    else:
        kind, a, b = EndKind.POINTS, end.target, 0
    options = {name: enum.of(getattr(rules, name)) for name, enum in OPTION_ENUMS.items()}
    return RulesSpec(
        players=rules.players,
        round_down=rules.round_down,
        capicua_bonus=rules.capicua_bonus,
        chuchazo_bonus=rules.chuchazo_bonus,
        ones_bonus=rules.ones_bonus,
        first_block_bonus=rules.first_block_bonus,
        hand_bonuses=tuple(rules.hand_bonuses),
        pass_bonus=(rules.pass_bonus[0], rules.pass_bonus[1]) if rules.pass_bonus is not None else None,
        end_kind=kind,
        end_a=a,
        end_b=b,
        **options,  # type: ignore[arg-type]
    )
