"""The events of a table log (table-log.md, v1) as frozen pydantic models.

One model per event type, joined in one union discriminated on ``type``
(:data:`Event`, validated by :data:`EVENT_ADAPTER`). Leaves are strict: an
int field refuses ``"3"``, ``3.5`` and ``true``; a bool refuses ``0``/``1``;
a str refuses numbers. Containers are lax so that a dict from ``orjson``
validates exactly like the JSON text. Unknown extra fields are ignored.

Tiles are read as names in either order (``"36"`` = ``"63"``) and stored as
tile ids (see :mod:`replay.tiles`); :func:`dump_event` writes them back high
half first, in the exact line format of the log. The one place where the
order means something is a hand's first tile ("36" puts 3 on the left end):
:class:`Play` keeps the name as written in ``face`` and writes it back as is
when ``end`` is None.

>>> e = EVENT_ADAPTER.validate_json(
...     '{"type":"play","match":"m-1","seq":4,"ts":"2026-11-02T18:04:05.120Z",'
...     '"hand":1,"seat":1,"tile":"36","end":"left","extra":"ignored"}')
>>> e.tile, e.end, e.ts_ms
(21, 'left', 1793642645120)
>>> dump_event(e)
'{"type":"play","match":"m-1","seq":4,"ts":"2026-11-02T18:04:05.120Z","hand":1,"seat":1,"tile":"63","end":"left"}'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from functools import cached_property
from typing import Annotated, Any, Final, Literal, TypeAlias

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    WithJsonSchema,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from replay.tiles import Tile, parse_tile, tile_name

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_MODELS",
    "EVENT_TYPES",
    "RFC3339_PATTERN",
    "Deal",
    "Draw",
    "Event",
    "HandCancelled",
    "HandEnd",
    "HandEvent",
    "LeadDraw",
    "LeadYield",
    "MatchEnd",
    "MatchStart",
    "Pass",
    "Play",
    "RedealClaim",
    "Reveal",
    "SeatChange",
    "SeatInfo",
    "TileField",
    "dump_event",
    "schema",
    "schema_text",
    "ts_to_ms",
]


# -- field types -------------------------------------------------------------


# The names of the tiles (both orders) and their ids: parse_tile's lookup,
# inlined, since this runs for every tile of every line.
_TILE_IDS: Final[dict[str, Tile]] = {
    f"{a}{b}": parse_tile(f"{a}{b}") for a in "0123456" for b in "0123456"
}


def _validate_tile(value: Any) -> Tile:
    try:
        return _TILE_IDS[value]  # = parse_tile(value)
    except (KeyError, TypeError):  # what parse_tile turns into TileError
        # A custom error type keeps the message free of pydantic's
        # "Value error, " prefix: the reader shows it as is.
        raise PydanticCustomError("tile", "not a tile: {text}", {"text": repr(value)}) from None


#: A tile: read from a two-digit name in either order, stored as its id.
TileField: TypeAlias = Annotated[
    int,
    PlainValidator(_validate_tile),
    PlainSerializer(tile_name, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "pattern": "^[0-6]{2}$"}),
]

# Bounds are the store's column types (seats TINYINT, the rest INTEGER): a
# value past them is a bad value of the field, not a crash further down.
INT32_MAX: Final = 2**31 - 1
Seat: TypeAlias = Annotated[StrictInt, Field(ge=0, le=127)]
HandNo: TypeAlias = Annotated[StrictInt, Field(ge=1, le=INT32_MAX)]
Seq: TypeAlias = Annotated[StrictInt, Field(ge=0, le=INT32_MAX)]
Points: TypeAlias = Annotated[StrictInt, Field(ge=-INT32_MAX, le=INT32_MAX)]

# RFC 3339 date-time, including the number of days of each month and leap
# years, so that the (Rust) pattern alone decides validity and no Python
# call is needed per line. Seconds may be 60 (leap second).
# Years 0001 to 9999 (year 0000 is no year of the calendar Python and the
# store count in); `_in_range` refuses the few times of years 0001 and 9999
# whose instant (offset or leap second applied) falls outside them.
_YEAR = r"(?:\d{3}[1-9]|\d{2}[1-9]\d|\d[1-9]\d{2}|[1-9]\d{3})"
_DATE = (
    rf"(?:{_YEAR}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)"
    r"|(?:0[13578]|1[02])-31)"
    r"|(?:\d{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29)"
)
_TIME = r"(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
RFC3339_PATTERN: Final = rf"^{_DATE}[Tt]{_TIME}$"

_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
#: The first and last millisecond of years 0001 to 9999, UTC.
FIRST_MS: Final = (date(1, 1, 1).toordinal() - date(1970, 1, 1).toordinal()) * 86_400_000
LAST_MS: Final = (date(9999, 12, 31).toordinal() + 1 - date(1970, 1, 1).toordinal()) * 86_400_000 - 1


def _in_range(ts: str) -> str:
    """A time whose instant is in years 0001 to 9999, UTC (only a time of
    year 0001 or 9999 can fall outside: its offset or a leap second moves it).

    >>> _in_range("9999-12-31T23:59:59Z")
    '9999-12-31T23:59:59Z'
    >>> _in_range("9999-12-31T23:00:00-05:00")
    Traceback (most recent call last):
    pydantic_core._pydantic_core.PydanticCustomError: the time 9999-12-31T23:00:00-05:00 falls outside years 0001 to 9999 (UTC)
    """
    if ts.startswith(("0001-01-01", "9999-12-31")) and not FIRST_MS <= ts_to_ms(ts) <= LAST_MS:
        raise PydanticCustomError("time_range", "the time {ts} falls outside years 0001 to 9999 (UTC)", {"ts": ts})
    return ts


Timestamp: TypeAlias = Annotated[
    StrictStr,
    Field(pattern=RFC3339_PATTERN, json_schema_extra={"format": "date-time"}),
    AfterValidator(_in_range),
]


def ts_to_ms(ts: str) -> int:
    """Milliseconds since the Unix epoch of an RFC 3339 time (already validated).

    Fractions beyond the millisecond are cut; a leap second counts as the
    first millisecond of the next minute.

    >>> ts_to_ms("1970-01-01T00:00:01.5Z"), ts_to_ms("1970-01-01T01:00:00+01:00")
    (1500, 0)
    """
    days = date(int(ts[0:4]), int(ts[5:7]), int(ts[8:10])).toordinal() - _EPOCH_ORDINAL
    secs = ((days * 24 + int(ts[11:13])) * 60 + int(ts[14:16])) * 60 + int(ts[17:19])
    ms = 0
    i = 19
    if ts[i] == ".":
        j = i + 1
        while ts[j].isdigit():
            j += 1
        ms = int((ts[i + 1 : j] + "00")[:3])
        i = j
    if ts[i] not in "Zz":
        offset = int(ts[i + 1 : i + 3]) * 60 + int(ts[i + 4 : i + 6])
        secs -= offset * 60 if ts[i] == "+" else -offset * 60
    return secs * 1000 + ms


# -- models ------------------------------------------------------------------


class _Frozen(BaseModel):
    # Not strict as a whole: the leaves are (StrictInt, StrictStr, ...), the
    # containers are not, so JSON arrays and Python lists both make tuples.
    model_config = ConfigDict(frozen=True, extra="ignore", strict=False)


class SeatInfo(_Frozen):
    """One seat of ``match_start.seats``."""

    seat: Seat
    player: StrictStr
    name: StrictStr | None = None


class _EventBase(_Frozen):
    type: str
    match: Annotated[StrictStr, Field(min_length=1)]
    seq: Seq
    ts: Timestamp

    @cached_property
    def ts_ms(self) -> int:
        """``ts`` as milliseconds since the Unix epoch (for TIME_ORDER)."""
        return ts_to_ms(self.ts)


class HandEvent(_EventBase):
    """Base of the events that belong to a hand."""

    hand: HandNo


class MatchStart(_EventBase):
    """First event of a match. ``scheme`` and ``anchor`` are checked later
    (a missing anchor or another scheme is COMMIT_MISSING, not a schema error),
    and so are ``rules`` (RULES_UNKNOWN)."""

    type: Literal["match_start"]
    v: Annotated[StrictInt, Field(ge=1, le=1)]
    table: StrictStr
    profile: StrictStr
    rules: dict[str, Any]
    seats: tuple[SeatInfo, ...]
    scheme: StrictStr | None = None
    anchor: StrictStr | None = None
    beacon: StrictStr | None = None
    rematch_of: StrictStr | None = None


class LeadDraw(HandEvent):
    """The draw for the first lead: ``(seat, tile)`` pairs in drawing order."""

    type: Literal["lead_draw"]
    draws: tuple[tuple[Seat, TileField], ...]


class Deal(HandEvent):
    """First event of each hand: the hands as dealt, by seat."""

    type: Literal["deal"]
    client_seeds: tuple[StrictStr, ...]
    hands: tuple[tuple[TileField, ...], ...]
    stock: Annotated[StrictInt, Field(ge=0, le=INT32_MAX)]
    leader: Seat


class RedealClaim(HandEvent):
    type: Literal["redeal_claim"]
    seat: Seat


class HandCancelled(HandEvent):
    type: Literal["hand_cancelled"]
    reason: StrictStr


class LeadYield(HandEvent):
    type: Literal["lead_yield"]
    seat: Seat
    to: Seat


class Play(HandEvent):
    """A tile played; ``end`` is null for the first tile of the hand."""

    type: Literal["play"]
    seat: Seat
    tile: TileField
    end: Literal["left", "right"] | None = None
    #: The tile as written: its order matters for the hand's first tile,
    #: whose first digit goes on the left end ("36": 3 left, 6 right).
    face: SkipJsonSchema[Annotated[StrictStr, Field(validation_alias="tile", exclude=True)]]

    @property
    def ends(self) -> tuple[int, int]:
        """The (left, right) numbers this tile shows when it opens the hand.

        >>> e = EVENT_ADAPTER.validate_python({"type": "play", "match": "m", "seq": 1,
        ...     "ts": "2026-11-02T18:04:05Z", "hand": 1, "seat": 0, "tile": "36"})
        >>> e.tile == parse_tile("63"), e.ends
        (True, (3, 6))
        """
        return int(self.face[0]), int(self.face[1])


class Pass(HandEvent):
    type: Literal["pass"]
    seat: Seat


class Draw(HandEvent):
    """One tile drawn from the boneyard."""

    type: Literal["draw"]
    seat: Seat
    tile: TileField


class HandEnd(HandEvent):
    """The server's claim about a hand; ``winner`` is a seat, null for a tie."""

    type: Literal["hand_end"]
    result: Literal["domino", "block"]
    winner: Seat | None
    points: tuple[Points, ...]
    score: tuple[Points, ...]
    notes: tuple[StrictStr, ...] = ()


class Reveal(HandEvent):
    type: Literal["reveal"]
    server_seed: StrictStr


class SeatChange(_EventBase):
    """A seat taken over by another player or a (marked) bot."""

    type: Literal["seat_change"]
    seat: Seat
    player: StrictStr
    bot: StrictBool
    hand: HandNo | None = None


class MatchEnd(_EventBase):
    """Last event of a match; ``winner`` is a side, null for a tie or abandon."""

    type: Literal["match_end"]
    result: Literal["win", "tie", "abandoned"]
    winner: Seat | None
    score: tuple[Points, ...]
    notes: tuple[StrictStr, ...] = ()


Event: TypeAlias = Annotated[
    MatchStart
    | LeadDraw
    | Deal
    | RedealClaim
    | HandCancelled
    | LeadYield
    | Play
    | Pass
    | Draw
    | HandEnd
    | Reveal
    | SeatChange
    | MatchEnd,
    Field(discriminator="type"),
]

#: Validates one event of any type (``validate_json`` on a line).
EVENT_ADAPTER: Final[TypeAdapter[Event]] = TypeAdapter(Event)

#: The model of each event type, by its ``type``.
EVENT_MODELS: Final[dict[str, type[_EventBase]]] = {
    m.model_fields["type"].annotation.__args__[0]: m  # type: ignore[union-attr]
    for m in (
        MatchStart,
        LeadDraw,
        Deal,
        RedealClaim,
        HandCancelled,
        LeadYield,
        Play,
        Pass,
        Draw,
        HandEnd,
        Reveal,
        SeatChange,
        MatchEnd,
    )
}

#: The ``type`` values of table-log.md; any other is UNKNOWN_EVENT.
EVENT_TYPES: Final[frozenset[str]] = frozenset(EVENT_MODELS)


def schema() -> dict[str, Any]:
    """JSON schema of one log line (the union of all event types)."""
    out = EVENT_ADAPTER.json_schema()
    out = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Table log event (v1)",
        "description": "One line of a table log (JSON Lines); see table-log.md.",
        **out,
    }
    return out


# -- writing -----------------------------------------------------------------

_HEAD: Final = ("type", "match", "seq", "ts")
# Written even when None: the first tile's end, and a tie's winner.
_KEEP_NONE: Final = frozenset({"end", "winner"})


def _seats(seats: tuple[SeatInfo, ...]) -> list[dict[str, Any]]:
    return [
        {"seat": s.seat, "player": s.player}
        if s.name is None
        else {"seat": s.seat, "player": s.player, "name": s.name}
        for s in seats
    ]


_WRITERS: Final[dict[str, Callable[[Any], Any]]] = {
    "tile": tile_name,
    "hands": lambda hands: [[tile_name(t) for t in h] for h in hands],
    "draws": lambda draws: [[s, tile_name(t)] for s, t in draws],
    "seats": _seats,
}

# Field names of each model in log order (type, match, seq, ts, then the
# rest as declared), computed once.
_FIELDS: Final[dict[type[BaseModel], tuple[str, ...]]] = {
    m: _HEAD + tuple(f for f in m.model_fields if f not in _HEAD) for m in EVENT_MODELS.values()
}


def dump_event(event: Event) -> str:
    """One compact JSON line (no newline) in the exact format of the log.

    Tiles are written high half first; optional fields that are None (or
    empty ``notes``) are left out, except ``end`` and ``winner``.

    >>> e = EVENT_ADAPTER.validate_python({"type": "hand_end", "match": "m", "seq": 9,
    ...     "ts": "2026-11-02T18:04:05Z", "hand": 1, "result": "block", "winner": None,
    ...     "points": [0, 0], "score": [0, 0]})
    >>> dump_event(e)
    '{"type":"hand_end","match":"m","seq":9,"ts":"2026-11-02T18:04:05Z","hand":1,"result":"block","winner":null,"points":[0,0],"score":[0,0]}'
    """
    out: dict[str, Any] = {}
    values = event.__dict__
    for name in _FIELDS[type(event)]:
        if name == "face":
            continue
        value = values[name]
        if value is None:
            if name in _KEEP_NONE:
                out[name] = None
            continue
        if name == "notes" and not value:
            continue
        writer = _WRITERS.get(name)
        out[name] = value if writer is None else writer(value)
    if type(event) is Play and event.end is None:
        out["tile"] = event.face  # the opening tile keeps its orientation
    return orjson.dumps(out).decode()


def schema_text() -> str:
    """:func:`schema` as written to docs/table-log.schema.json (and printed by
    ``replay schema``): indented JSON and a final newline."""
    return json.dumps(schema(), indent=2) + "\n"


if __name__ == "__main__":  # python -m replay.events > docs/table-log.schema.json
    import sys

    sys.stdout.write(schema_text())
