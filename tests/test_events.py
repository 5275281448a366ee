"""Event models of the table log: validation, strictness, writing, schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from replay import events as ev
from replay.events import EVENT_ADAPTER, EVENT_TYPES, dump_event, schema, schema_text, ts_to_ms
from replay.tiles import TileError, parse_tile

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = Path(__file__).resolve().parent / "data" / "examples"
TS = "2026-11-02T18:04:05.120Z"
HEAD = f'"match":"m-1","seq":5,"ts":"{TS}"'

# One line per event type, exactly as the log writes it (tiles high half
# first, optional None fields left out, `end` and `winner` written as null).
CANONICAL: dict[str, str] = {
    "match_start": '{"type":"match_start","match":"m-1","seq":0,"ts":"' + TS + '","v":1,'
    '"table":"t-1","profile":"international","rules":{"match_end":{"kind":"points","target":50}},'
    '"seats":[{"seat":0,"player":"p-1","name":"Ana"},{"seat":1,"player":"p-2"}],'
    '"scheme":"deal-v1","anchor":"ab12","beacon":"b-9","rematch_of":"m-0"}',
    "lead_draw": '{"type":"lead_draw",' + HEAD + ',"hand":1,"draws":[[0,"62"],[1,"65"],[0,"00"]]}',
    "deal": '{"type":"deal",' + HEAD + ',"hand":1,"client_seeds":["","ab"],'
    '"hands":[["61","20"],["63","52"]],"stock":14,"leader":1}',
    "redeal_claim": '{"type":"redeal_claim",' + HEAD + ',"hand":2,"seat":3}',
    "hand_cancelled": '{"type":"hand_cancelled",' + HEAD + ',"hand":2,"reason":"five_doubles"}',
    "lead_yield": '{"type":"lead_yield",' + HEAD + ',"hand":1,"seat":0,"to":2}',
    "play": '{"type":"play",' + HEAD + ',"hand":1,"seat":1,"tile":"63","end":"left"}',
    "pass": '{"type":"pass",' + HEAD + ',"hand":1,"seat":2}',
    "draw": '{"type":"draw",' + HEAD + ',"hand":1,"seat":0,"tile":"22"}',
    "hand_end": '{"type":"hand_end",' + HEAD + ',"hand":1,"result":"block","winner":null,'
    '"points":[0,0],"score":[10,0],"notes":["capicua"]}',
    "reveal": '{"type":"reveal",' + HEAD + ',"hand":1,"server_seed":"ee86"}',
    "seat_change": '{"type":"seat_change",'
    + HEAD
    + ',"seat":1,"player":"bot-1","bot":true,"hand":3}',
    "match_end": '{"type":"match_end",' + HEAD + ',"result":"tie","winner":null,"score":[50,50]}',
}


def parse(line: str) -> Any:
    return EVENT_ADAPTER.validate_json(line)


def obj(kind: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(CANONICAL[kind])
    return result


def refused(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Locations of the errors (empty if accepted), JSON and Python alike."""
    locs: list[list[tuple[Any, ...]]] = []
    for validate in (
        lambda: EVENT_ADAPTER.validate_json(json.dumps(data)),
        lambda: EVENT_ADAPTER.validate_python(data),
    ):
        try:
            validate()
        except ValidationError as exc:
            locs.append(sorted({e["loc"] for e in exc.errors()}))
        else:
            locs.append([])
    assert locs[0] == locs[1], "JSON and Python validation disagree"
    return locs[0]


def test_event_types_are_the_table_of_the_spec() -> None:
    assert set(CANONICAL) == EVENT_TYPES
    assert set(ev.EVENT_MODELS) == EVENT_TYPES


@pytest.mark.parametrize("kind", sorted(CANONICAL))
def test_each_type_round_trips_exactly(kind: str) -> None:
    event = parse(CANONICAL[kind])
    assert event.type == kind
    assert isinstance(event, ev.EVENT_MODELS[kind])
    assert dump_event(event) == CANONICAL[kind]
    assert parse(dump_event(event)) == event


def test_example_logs_are_written_back_byte_for_byte() -> None:
    lines = [s for f in sorted(EXAMPLES.glob("*.jsonl")) for s in f.read_text().splitlines()]
    assert len(lines) == 300
    for line in lines:
        assert dump_event(parse(line)) == line


def test_fields_are_typed_values() -> None:
    start = parse(CANONICAL["match_start"])
    assert start.seats[0] == ev.SeatInfo(seat=0, player="p-1", name="Ana")
    assert start.seats[1].name is None
    assert start.rules == {"match_end": {"kind": "points", "target": 50}}
    lead = parse(CANONICAL["lead_draw"])
    assert lead.draws == ((0, parse_tile("62")), (1, parse_tile("65")), (0, 0))
    deal = parse(CANONICAL["deal"])
    assert deal.hands == (
        (parse_tile("61"), parse_tile("20")),
        (parse_tile("63"), parse_tile("52")),
    )
    assert deal.client_seeds == ("", "ab")
    end = parse(CANONICAL["hand_end"])
    assert (end.winner, end.points, end.score, end.notes) == (None, (0, 0), (10, 0), ("capicua",))


def test_tiles_read_in_either_order_and_written_high_first() -> None:
    line = CANONICAL["draw"].replace('"22"', '"36"')
    event = parse(line)
    assert event.tile == parse_tile("63") == 21
    assert '"tile":"63"' in dump_event(event)
    deal = parse(CANONICAL["deal"].replace('"61"', '"16"'))
    assert deal.hands[0][0] == parse_tile("61")
    assert dump_event(deal) == CANONICAL["deal"]


def test_the_opening_tile_keeps_its_orientation() -> None:
    # "36" as first tile puts 3 on the left end: writing "63" would flip it.
    line = CANONICAL["play"].replace('"63","end":"left"', '"36","end":null')
    event = parse(line)
    assert (event.tile, event.end, event.face, event.ends) == (21, None, "36", (3, 6))
    assert dump_event(event) == line
    omitted = parse(line.replace(',"end":null', ""))
    assert omitted.end is None
    assert dump_event(omitted) == line  # `end` is written as null


def test_optional_fields_default_and_are_left_out() -> None:
    data = obj("match_start")
    for name in ("anchor", "scheme", "beacon", "rematch_of"):
        del data[name]
    data["seats"][0].pop("name")
    start = EVENT_ADAPTER.validate_python(data)
    # A missing anchor or scheme is COMMIT_MISSING for the validator, not a schema error.
    assert (start.anchor, start.scheme, start.beacon, start.rematch_of) == (None, None, None, None)
    assert dump_event(start) == json.dumps(data, separators=(",", ":"))

    change = EVENT_ADAPTER.validate_python({**obj("seat_change"), "hand": None})
    assert change.hand is None and '"hand"' not in dump_event(change)

    data = obj("hand_end")
    del data["notes"]
    end = EVENT_ADAPTER.validate_python(data)
    assert end.notes == ()
    assert dump_event(end) == json.dumps(data, separators=(",", ":"))
    assert '"winner":null' in dump_event(end)


def test_winner_is_required_even_if_null() -> None:
    for kind in ("hand_end", "match_end"):
        data = obj(kind)
        del data["winner"]
        assert refused(data) == [(kind, "winner")]


def test_unknown_extra_fields_are_ignored() -> None:
    data = {**obj("play"), "latency_ms": 12, "client": {"v": "2.1"}}
    event = EVENT_ADAPTER.validate_python(data)
    assert event == parse(CANONICAL["play"])
    assert "latency_ms" not in dump_event(event)


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("play", "seq", "3"),
        ("play", "seq", 3.5),
        ("play", "seq", 3.0),
        ("play", "seq", True),
        ("play", "seq", -1),
        ("play", "hand", 0),
        ("play", "seat", "1"),
        ("play", "seat", -1),
        ("play", "tile", 63),
        ("play", "tile", "7x"),
        ("play", "tile", "636"),
        ("play", "end", "middle"),
        ("play", "end", "LEFT"),
        ("play", "match", ""),
        ("play", "match", 7),
        ("play", "ts", 1793642645),
        ("seat_change", "bot", 1),
        ("seat_change", "bot", "true"),
        ("match_start", "v", True),
        ("match_start", "v", 2),
        ("match_start", "rules", []),
        ("match_start", "anchor", 12),
        ("deal", "stock", -1),
        ("deal", "client_seeds", "ab"),
        ("hand_end", "result", "tie"),
        ("hand_end", "points", [1.5, 0]),
        ("match_end", "result", "domino"),
        ("match_end", "notes", "chiva"),
    ],
)
def test_strict_types_refuse(kind: str, field: str, value: Any) -> None:
    data = {**obj(kind), field: value}
    locs = refused(data)
    assert locs, f"{field}={value!r} was accepted"
    assert all(loc[:2] == (kind, field) for loc in locs)


@pytest.mark.parametrize(
    "ts",
    [
        "2026-11-02T18:04:05Z",
        "2026-11-02t18:04:05.1z",
        "2026-11-02T18:04:05.123456789+05:30",
        "2024-02-29T00:00:00Z",
        "2000-02-29T00:00:00Z",
        "2026-12-31T23:59:60Z",
    ],
)
def test_rfc3339_times_are_accepted(ts: str) -> None:
    assert not refused({**obj("pass"), "ts": ts})


@pytest.mark.parametrize(
    "ts",
    [
        "2026-11-02T18:04:05",  # no offset
        "2026-11-02 18:04:05Z",  # not RFC 3339's T
        "2026-11-02T18:04Z",
        "2026-02-30T00:00:00Z",
        "2025-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-11-02T24:00:00Z",
        "2026-11-02T18:04:05+0100",
        "20261102T180405Z",
        " 2026-11-02T18:04:05Z",
    ],
)
def test_non_rfc3339_times_are_refused(ts: str) -> None:
    assert refused({**obj("pass"), "ts": ts}) == [("pass", "ts")]


def test_ts_ms_orders_times_across_offsets() -> None:
    assert ts_to_ms("1970-01-01T00:00:00Z") == 0
    assert ts_to_ms("1970-01-01T00:00:00.9999Z") == 999
    assert ts_to_ms("1970-01-01T01:00:00+01:00") == 0
    assert ts_to_ms("1969-12-31T23:00:00-01:00") == 0
    assert ts_to_ms("2026-11-07T04:59:43.843Z") == 1_794_027_583_843
    a = parse(CANONICAL["pass"].replace(TS, "2026-11-02T19:00:00+01:00"))
    b = parse(CANONICAL["pass"].replace(TS, "2026-11-02T18:00:00.001Z"))
    assert a.ts_ms < b.ts_ms
    assert a.ts == "2026-11-02T19:00:00+01:00"  # the original string is kept


def test_models_are_frozen() -> None:
    event = parse(CANONICAL["play"])
    with pytest.raises(ValidationError):
        event.seat = 2
    deal = parse(CANONICAL["deal"])
    assert isinstance(deal.hands, tuple) and isinstance(deal.hands[0], tuple)
    assert hash(event) == hash(parse(CANONICAL["play"]))


def test_discriminator_errors() -> None:
    with pytest.raises(ValidationError) as missing:
        EVENT_ADAPTER.validate_python({"match": "m", "seq": 1})
    assert missing.value.errors()[0]["type"] == "union_tag_not_found"
    with pytest.raises(ValidationError) as unknown:
        EVENT_ADAPTER.validate_python({"type": "nap", "match": "m", "seq": 1})
    assert unknown.value.errors()[0]["type"] == "union_tag_invalid"


def test_schema_shows_tiles_as_two_digit_strings() -> None:
    s = schema()
    assert set(s["discriminator"]["mapping"]) == EVENT_TYPES
    tile = {"pattern": "^[0-6]{2}$", "type": "string"}
    play = s["$defs"]["Play"]["properties"]
    assert {k: play["tile"][k] for k in tile} == tile
    assert "face" not in play  # internal: the tile as written
    assert s["$defs"]["Deal"]["properties"]["hands"]["items"]["items"] == tile
    assert s["$defs"]["LeadDraw"]["properties"]["draws"]["items"]["prefixItems"][1] == tile
    assert s["$defs"]["Play"]["properties"]["ts"]["format"] == "date-time"
    assert s["$defs"]["HandEnd"]["required"][-2:] == ["points", "score"]


def test_committed_schema_is_the_generated_one() -> None:
    committed = (ROOT / "docs" / "table-log.schema.json").read_text()
    assert committed == schema_text(), (
        "docs/table-log.schema.json is stale: python -m replay.events > docs/table-log.schema.json"
    )
    assert json.loads(committed) == schema()


@pytest.mark.parametrize(
    "value",
    [f"{a}{b}" for a in "0167x " for b in "0156-"]
    + ["", "6", "636", "\uff16\uff13", 63, 6.3, True, None, [], ["63"], {}, {"63": 1}, b"63"],
)
def test_tile_validation_is_parse_tile(value: Any) -> None:
    try:
        expected: Any = parse_tile(value)
    except TileError:
        expected = f"not a tile: {value!r}"
    data = {**obj("draw"), "tile": value}
    try:
        got: Any = EVENT_ADAPTER.validate_python(data).tile
    except ValidationError as exc:
        (err,) = exc.errors()
        assert (err["type"], err["loc"]) == ("tile", ("draw", "tile"))
        got = err["msg"]
    assert got == expected
