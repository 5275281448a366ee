"""The streaming reader: records, bad lines, line accounting, gzip, folders."""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
import shutil
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from replay import reader as rd
from replay.events import EVENT_ADAPTER, Deal, Play
from replay.reader import (
    BadLine,
    EventLine,
    FileStats,
    LogReader,
    Record,
    UsageError,
    iter_paths,
    parse_line,
    read_lines,
)

EXAMPLES = Path(__file__).resolve().parent / "data" / "examples"
TS = "2026-11-02T18:04:05.120Z"


def ev_line(seq: int, match: str = "m-1", **extra: object) -> str:
    body = {"type": "pass", "match": match, "seq": seq, "ts": TS, "hand": 1, "seat": 0}
    body.update(extra)
    return json.dumps(body, separators=(",", ":"))


def read_all(path: Path | str) -> tuple[list[Record], FileStats]:
    reader = LogReader(path)
    records = list(reader.records())
    return records, reader.stats


def bad(records: list[Record]) -> list[BadLine]:
    return [r for r in records if isinstance(r, BadLine)]


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- one line ----------------------------------------------------------------


def test_good_line_is_an_event_line() -> None:
    rec = parse_line(ev_line(4), "f.jsonl", 9)
    assert isinstance(rec, EventLine)
    assert (rec.file, rec.line, rec.event.seq, rec.raw) == ("f.jsonl", 9, 4, ev_line(4))


def test_schema_error_names_the_field_and_keeps_match_seq_hand() -> None:
    line = '{"type":"play","match":"m-1","seq":12,"ts":"' + TS + '","hand":2,"seat":1,"tile":"7x"}'
    rec = parse_line(line, "f", 12)
    assert isinstance(rec, BadLine)
    assert rec.code == "SCHEMA_ERROR"
    assert rec.message == "line 12: field 'tile': not a tile: '7x'"
    assert (rec.match, rec.seq, rec.hand, rec.raw) == ("m-1", 12, 2, line)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"seat": "0"}, "'seat'"),
        ({"seq": 1.5}, "'seq'"),
        ({"hand": True}, "'hand'"),
        ({"ts": "yesterday"}, "'ts': not an RFC 3339 time"),
        ({"seat": None}, "'seat'"),
    ],
)
def test_schema_error_messages(change: dict[str, object], field: str) -> None:
    line = json.dumps({**json.loads(ev_line(3)), **change})
    rec = parse_line(line, "f", 1)
    assert isinstance(rec, BadLine) and rec.code == "SCHEMA_ERROR"
    assert f"field {field}" in rec.message
    assert rec.match == "m-1"


def test_nested_fields_are_named_with_their_place() -> None:
    deal = (
        '{"type":"deal","match":"m","seq":1,"ts":"' + TS + '","hand":1,"client_seeds":[""],'
        '"hands":[["00","61"],["62","77"]],"stock":0,"leader":0}'
    )
    rec = parse_line(deal)
    assert isinstance(rec, BadLine)
    assert rec.message == "line 0: field 'hands[1][1]': not a tile: '77'"
    start = (
        '{"type":"match_start","match":"m","seq":0,"ts":"' + TS + '","v":1,"table":"t",'
        '"profile":"p","rules":{},"seats":[{"seat":0,"player":"a"},{"seat":1}]}'
    )
    rec = parse_line(start)
    assert isinstance(rec, BadLine) and rec.message == "line 0: field 'seats[1].player': missing"


def test_missing_field() -> None:
    rec = parse_line(ev_line(3).replace(',"seat":0', ""), "f", 2)
    assert isinstance(rec, BadLine)
    assert (rec.code, rec.message) == ("SCHEMA_ERROR", "line 2: field 'seat': missing")
    no_tile = parse_line('{"type":"draw","match":"m","seq":1,"ts":"' + TS + '","hand":1,"seat":0}')
    assert isinstance(no_tile, BadLine) and no_tile.message.endswith("field 'tile': missing")


def test_missing_type_is_a_schema_error_in_its_match() -> None:
    rec = parse_line('{"match":"m-2","seq":5,"hand":1,"seat":0}', "f", 1)
    assert isinstance(rec, BadLine)
    assert (rec.code, rec.match, rec.seq, rec.hand) == ("SCHEMA_ERROR", "m-2", 5, 1)
    assert "field 'type': missing" in rec.message
    rec = parse_line('{"type":7,"match":"m-2"}')
    assert isinstance(rec, BadLine) and rec.code == "SCHEMA_ERROR" and "'type'" in rec.message


def test_unknown_event() -> None:
    rec = parse_line(ev_line(6).replace('"pass"', '"bid"'), "f", 3)
    assert isinstance(rec, BadLine)
    assert (rec.code, rec.match, rec.seq, rec.hand) == ("UNKNOWN_EVENT", "m-1", 6, 1)
    assert "'bid'" in rec.message


def test_unreadable_match_seq_hand_are_none() -> None:
    rec = parse_line('{"type":"pass","match":5,"seq":-1,"hand":true}')
    assert isinstance(rec, BadLine)
    assert (rec.match, rec.seq, rec.hand) == (None, None, None)
    rec = parse_line('{"type":"pass","match":"","seq":"1","hand":0}')
    assert isinstance(rec, BadLine) and (rec.match, rec.seq, rec.hand) == (None, None, None)


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("not json", "not JSON"),
        ('{"type":"pass",', "not JSON"),
        ("[1, 2]", "not a JSON object (got an array)"),
        ('"pass"', "not a JSON object (got a string)"),
        ("42", "not a JSON object (got a number)"),
        ("null", "not a JSON object (got null)"),
        ('{"a":1}{"b":2}', "not JSON"),
    ],
)
def test_malformed_lines(line: str, what: str) -> None:
    rec = parse_line(line, "f", 7)
    assert isinstance(rec, BadLine)
    assert rec.code == "MALFORMED_LINE"
    assert rec.message.startswith(f"line 7: {what}")
    assert (rec.match, rec.seq, rec.hand, rec.raw) == (None, None, None, line)


def test_duplicate_keys_last_one_wins_as_in_the_union() -> None:
    # The fast path peeks at the first "type"; the model's Literal makes it
    # fall back to the union, which takes the last one.
    rec = parse_line(ev_line(2).replace('"type":"pass"', '"type":"play"', 1))
    assert isinstance(rec, BadLine)  # a play without a tile
    twice = ev_line(2).replace('"type":"pass"', '"type":"play"')[:-1] + ',"type":"pass"}'
    assert twice.startswith('{"type":"play",')
    rec = parse_line(twice)
    assert isinstance(rec, EventLine) and rec.event.type == "pass"


# -- one file ----------------------------------------------------------------


def test_example_logs_read_cleanly() -> None:
    counts = {}
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        records, stats = read_all(path)
        assert not bad(records)
        assert stats == FileStats(str(path), len(records), 0)
        assert [r.line for r in records] == list(range(1, len(records) + 1))
        counts[path.name] = stats.lines
    assert counts == {"domena-2p-to-40.jsonl": 99, "international-to-50.jsonl": 201}


def test_str_and_path_are_both_accepted() -> None:
    path = EXAMPLES / "domena-2p-to-40.jsonl"
    a = [r.raw for r in read_lines(path)]
    b = [r.raw for r in read_lines(str(path))]
    assert a == b and len(a) == 99


@pytest.mark.parametrize(
    ("data", "lines", "events"),
    [
        (b"", 0, 0),
        (b"\n", 1, 0),
        (b"\n\n", 2, 0),
        (b"A", 1, 1),
        (b"A\n", 1, 1),
        (b"A\nA", 2, 2),
        (b"A\n\nA\n", 3, 2),
        (b"A\r\n \t\r\nA\r\n", 3, 2),
        (b"A\r\nA", 2, 2),
        (b"  \nA\n\t\n", 3, 1),
    ],
)
def test_blank_lines_are_skipped_but_counted(
    tmp_path: Path, data: bytes, lines: int, events: int
) -> None:
    path = write(tmp_path, "x.jsonl", data.replace(b"A", ev_line(1).encode()))
    records, stats = read_all(path)
    assert stats == FileStats(str(path), lines, 0)
    assert len(records) == events
    assert all(isinstance(r, EventLine) and r.raw == ev_line(1) for r in records)


def test_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    data = f"\n{ev_line(0)}\r\n\n  \nnot json\n{ev_line(1)}".encode()
    records, stats = read_all(write(tmp_path, "x.jsonl", data))
    assert [(r.line, type(r).__name__) for r in records] == [
        (2, "EventLine"),
        (5, "BadLine"),
        (6, "EventLine"),
    ]
    assert stats.lines == 6 and stats.bad_lines == 1


def test_each_kind_of_bad_line_counts(tmp_path: Path) -> None:
    lines = [ev_line(0), "[]", ev_line(1, seat="x"), ev_line(2).replace("pass", "nap"), ev_line(3)]
    records, stats = read_all(write(tmp_path, "x.jsonl", "\n".join(lines).encode()))
    assert [getattr(r, "code", "ok") for r in records] == [
        "ok",
        "MALFORMED_LINE",
        "SCHEMA_ERROR",
        "UNKNOWN_EVENT",
        "ok",
    ]
    assert stats.bad_lines == 3 and stats.lines == 5


def test_leading_whitespace_is_still_json(tmp_path: Path) -> None:
    records, _ = read_all(write(tmp_path, "x.jsonl", f"  {ev_line(0)} \t".encode()))
    assert isinstance(records[0], EventLine) and records[0].event.seq == 0


def test_invalid_utf8_is_malformed_and_never_crashes(tmp_path: Path) -> None:
    broken = ev_line(5).encode().replace(b'"seat"', b'"s\xffat"')
    data = b"\n".join([ev_line(4).encode(), broken, b"\xc3\x28", ev_line(6).encode()])
    records, stats = read_all(write(tmp_path, "x.jsonl", data))
    assert stats == FileStats(str(tmp_path / "x.jsonl"), 4, 2)
    first, second = bad(records)
    assert first.code == second.code == "MALFORMED_LINE"
    assert first.line == 2 and "not UTF-8" in first.message
    assert (first.match, first.seq) == ("m-1", 5)  # still given to its match
    assert "\ufffd" in first.raw
    assert second.match is None
    assert isinstance(records[-1], EventLine) and records[-1].event.seq == 6


def test_non_ascii_text_is_fine(tmp_path: Path) -> None:
    line = (
        '{"type":"seat_change","match":"m-ñ","seq":1,"ts":"'
        + TS
        + '","seat":0,"player":"José ✓","bot":false}'
    )
    records, _ = read_all(write(tmp_path, "x.jsonl", line.encode()))
    assert isinstance(records[0], EventLine)
    assert records[0].event.player == "José ✓" and records[0].raw == line


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_lines_across_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    path = EXAMPLES / "international-to-50.jsonl"
    data = path.read_bytes().replace(b"\n", b"\r\n\n", 5)
    copy = write(tmp_path, "x.jsonl", data)
    expected, expected_stats = read_all(copy)
    monkeypatch.setattr(rd, "_CHUNK", chunk)
    records, stats = read_all(copy)
    assert records == expected and stats == expected_stats
    assert stats.lines == 206 and stats.bad_lines == 0


def test_too_long_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rd, "_CHUNK", 16)
    monkeypatch.setattr(rd, "MAX_LINE_BYTES", 200)
    long = ev_line(1, pad="x" * 500)
    data = "\n".join([ev_line(0), long, ev_line(2), long]).encode()
    records, stats = read_all(write(tmp_path, "x.jsonl", data))
    assert [getattr(r, "code", "ok") for r in records] == [
        "ok",
        "MALFORMED_LINE",
        "ok",
        "MALFORMED_LINE",
    ]
    assert "longer than 200 bytes" in bad(records)[0].message
    assert stats.lines == 4 and stats.bad_lines == 2


def test_stats_after_stopping_early(tmp_path: Path) -> None:
    path = write(tmp_path, "x.jsonl", "\n".join(ev_line(i) for i in range(10)).encode())
    reader = LogReader(path)
    it = reader.records()
    for rec in it:
        if rec.line == 3:
            break
    it.close()
    assert reader.stats.lines == 3
    with pytest.raises(RuntimeError, match="only once"):
        next(reader.records())


def test_unopenable_file_is_one_bad_line(tmp_path: Path) -> None:
    records, stats = read_all(tmp_path)  # a folder cannot be read as a file
    (rec,) = records
    assert isinstance(rec, BadLine) and rec.code == "MALFORMED_LINE" and rec.line == 1
    assert "cannot open" in rec.message
    assert stats == FileStats(str(tmp_path), 1, 1)


# -- gzip --------------------------------------------------------------------


def test_gzip_by_suffix_and_by_magic(tmp_path: Path) -> None:
    source = EXAMPLES / "domena-2p-to-40.jsonl"
    plain, plain_stats = read_all(source)
    packed = gzip.compress(source.read_bytes())
    for name in ("x.jsonl.gz", "x.jsonl"):  # the content decides
        records, stats = read_all(write(tmp_path, name, packed))
        assert [r.raw for r in records] == [r.raw for r in plain]
        assert (stats.lines, stats.bad_lines) == (plain_stats.lines, 0)


def test_gzip_of_several_members(tmp_path: Path) -> None:
    data = gzip.compress(f"{ev_line(0)}\n".encode()) + gzip.compress(f"\n{ev_line(1)}".encode())
    records, stats = read_all(write(tmp_path, "x.jsonl.gz", data))
    assert [r.line for r in records] == [1, 3] and stats.lines == 3 and stats.bad_lines == 0


def test_empty_gzip_names(tmp_path: Path) -> None:
    assert read_all(write(tmp_path, "empty.jsonl.gz", b""))[1].lines == 0
    assert read_all(write(tmp_path, "z.jsonl.gz", gzip.compress(b"")))[1].lines == 0


def test_gz_name_without_gzip_content(tmp_path: Path) -> None:
    records, stats = read_all(write(tmp_path, "x.jsonl.gz", ev_line(0).encode()))
    (rec,) = records
    assert isinstance(rec, BadLine) and "not a gzip file" in rec.message
    assert stats.bad_lines == 1


def _big_log() -> bytes:
    # Incompressible enough that a cut in the middle loses whole lines.
    rng = random.Random(7)
    lines = [ev_line(i, note=rng.randbytes(40).hex()) for i in range(2000)]
    return ("\n".join(lines) + "\n").encode()


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    data = _big_log()
    packed = gzip.compress(data)
    path = write(tmp_path, "x.jsonl.gz", packed[: len(packed) // 2])
    records, stats = read_all(path)
    *good, last = records
    assert len(good) > 500
    assert all(isinstance(r, EventLine) for r in good)
    assert [r.event.seq for r in good if isinstance(r, EventLine)] == list(range(len(good)))
    assert isinstance(last, BadLine) and last.code == "MALFORMED_LINE"
    assert last.line == len(good) + 1
    assert "truncated gzip" in last.message
    # The unfinished line is kept as raw text, for the person who reads the report.
    assert data.decode().split("\n")[len(good)].startswith(last.raw)
    assert stats == FileStats(str(path), len(good) + 1, 1)


def test_truncated_gzip_trailer(tmp_path: Path) -> None:
    packed = gzip.compress(f"{ev_line(0)}\n{ev_line(1)}\n".encode())
    records, stats = read_all(write(tmp_path, "x.jsonl.gz", packed[:-4]))
    assert [type(r).__name__ for r in records] == ["EventLine", "EventLine", "BadLine"]
    assert stats == FileStats(str(tmp_path / "x.jsonl.gz"), 3, 1)


def test_corrupt_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    packed = bytearray(gzip.compress(_big_log()))
    middle = len(packed) // 2
    packed[middle : middle + 64] = bytes(64)
    records, stats = read_all(write(tmp_path, "x.jsonl.gz", bytes(packed)))
    # Deflate cannot tell garbage from data: what it inflated after the damage
    # shows as bad lines, and the CRC check at the end stops the file.
    *read, last = records
    assert isinstance(last, BadLine) and last.code == "MALFORMED_LINE"
    assert "corrupt or unreadable gzip" in last.message and "CRC" in last.message
    assert all(isinstance(r, EventLine) for r in read[:900])
    assert [r.line for r in records] == sorted({r.line for r in records})
    assert stats.lines == last.line and stats.bad_lines == len(bad(records))


# -- folders -----------------------------------------------------------------


def test_folders_are_searched_recursively_and_sorted(tmp_path: Path) -> None:
    for rel in [
        "b/2.jsonl",
        "b/10.jsonl.gz",
        "a.jsonl",
        "c/d/e.jsonl",
        "notes.txt",
        "report.json",
        ".hidden.jsonl",
        ".git/x.jsonl",
        "c/old.jsonl.bak",
    ]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    found = [p.relative_to(tmp_path).as_posix() for p in iter_paths([tmp_path])]
    assert found == ["a.jsonl", "b/10.jsonl.gz", "b/2.jsonl", "c/d/e.jsonl"]
    # Files named explicitly are read whatever their name, once each.
    again = list(iter_paths([str(tmp_path / "notes.txt"), tmp_path, tmp_path / "a.jsonl"]))
    assert [p.name for p in again] == ["notes.txt", "a.jsonl", "10.jsonl.gz", "2.jsonl", "e.jsonl"]


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(UsageError, match="nope.jsonl") as err:
        iter_paths([EXAMPLES, missing])  # raised at once, before any reading
    assert err.value.path == str(missing)


def test_folder_of_examples(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "logs")
    gz = tmp_path / "logs" / "more" / "intl.jsonl.gz"
    gz.parent.mkdir()
    gz.write_bytes(gzip.compress((EXAMPLES / "international-to-50.jsonl").read_bytes()))
    totals = {}
    for path in iter_paths([tmp_path]):
        records, stats = read_all(path)
        assert stats.bad_lines == 0 and all(isinstance(r, EventLine) for r in records)
        totals[path.name] = stats.lines
        kinds = {type(r.event) for r in records if isinstance(r, EventLine)}
        assert Deal in kinds and Play in kinds
    assert totals == {
        "domena-2p-to-40.jsonl": 99,
        "international-to-50.jsonl": 201,
        "intl.jsonl.gz": 201,
    }


# -- robustness ----------------------------------------------------------------

CODES = {"MALFORMED_LINE", "SCHEMA_ERROR", "UNKNOWN_EVENT"}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
field_names = st.sampled_from(["type", "match", "seq", "ts", "hand", "seat", "tile", "end", "x"])


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(
        [ev_line(1), ev_line(2).replace('"pass"', '"play"')[:-1] + ',"tile":"36"}']
    ),
    changes=st.dictionaries(field_names, json_values, max_size=3),
)
def test_any_json_object_gives_a_record(base: str, changes: dict[str, object]) -> None:
    rec = parse_line(json.dumps({**json.loads(base), **changes}), "f", 1)
    if isinstance(rec, BadLine):
        assert rec.code in CODES and rec.message.startswith("line 1: ")
        assert "\n" not in rec.message
    else:
        assert rec.event.type in ("pass", "play")


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_never_crash_the_reader(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "x.jsonl"
    path.write_bytes(data)
    records, stats = read_all(path)
    assert stats.bad_lines == len(bad(records)) and all(r.code in CODES for r in bad(records))
    if data[:2] == b"\x1f\x8b":  # a gzip header: read as far as it inflates (its lines are not these)
        return
    if rd.not_a_log(data, complete=True):  # read no further: one error, as an unreadable file
        assert stats.lines == stats.bad_lines == 1 and len(records) == 1
        assert rd.NOT_A_LOG in records[0].message  # type: ignore[union-attr]
        return
    body = data.removeprefix(rd.BOM)  # a byte-order mark opening the file is no part of line 1
    assert stats.lines == body.count(b"\n") + (0 if body.endswith(b"\n") or not body else 1)


def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    line = (EXAMPLES / "international-to-50.jsonl").read_text().splitlines()[2]  # a deal
    path = write(tmp_path, "big.jsonl", ((line + "\n") * 20_000).encode())
    tracemalloc.start()
    try:
        n = sum(1 for _ in read_lines(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 20_000
    assert path.stat().st_size > 6_000_000
    assert peak < 2_000_000, peak


# -- fast paths give the canonical records -------------------------------------


def _reference(text: str, file: str, line: int) -> Record:
    """A line as the union alone reads it: no peeking, no fast EventLine."""
    try:
        return EventLine(file, line, EVENT_ADAPTER.validate_json(text), text)
    except ValidationError as exc:
        return rd._bad_line(text, file, line, exc)


def _assert_same_record(got: Record, want: Record) -> None:
    assert type(got) is type(want)
    assert got == want and repr(got) == repr(want)
    assert dataclasses.astuple(got) == dataclasses.astuple(want)
    if isinstance(got, EventLine) and isinstance(want, EventLine):
        a, b = got.event, want.event
        assert type(a) is type(b)
        assert a.__dict__ == b.__dict__ and list(a.__dict__) == list(b.__dict__)
        assert a.model_fields_set == b.model_fields_set
        assert (a.__pydantic_extra__, a.__pydantic_private__) == (None, None)
        assert a.model_dump() == b.model_dump()
        if a.type != "match_start":  # its `rules` dict makes it unhashable
            assert hash(a) == hash(b) and hash(got) == hash(want)
        assert a.ts_ms == b.ts_ms


def test_fast_event_line_is_an_event_line() -> None:
    event = EVENT_ADAPTER.validate_json(ev_line(4))
    fast = rd._event_line("f.jsonl", 9, event, ev_line(4))
    slow = EventLine("f.jsonl", 9, event, ev_line(4))
    _assert_same_record(fast, slow)
    assert not hasattr(fast, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.line = 10  # type: ignore[misc]
    assert dataclasses.replace(fast, line=10) == EventLine("f.jsonl", 10, event, ev_line(4))


_TS_VALUES = [TS, "2026-11-02T18:04:05Z", "2024-02-29T00:00:00+05:30", "2025-02-29T00:00:00Z",
              "2026-11-02T18:04:05", "2026-11-02T18:04:05Z\n", "٢٠٢٦-11-02T18:04:05Z", ""]  # fmt: skip
_ODD_VALUES: st.SearchStrategy[object] = st.sampled_from(
    [None, True, False, 0, 1, -1, 3, 2**63, 10**30, 1.0, 1.5, "", "1", "36", "63", "77", "636",
     "left", "right", "LEFT", "m", "m-\u00f1", "a\u0000b", [], {}, ["63"], *_TS_VALUES]
)  # fmt: skip
_MOVE_KEYS = st.sampled_from(["type", "match", "seq", "ts", "hand", "seat", "tile", "end", "x"])


@st.composite
def _move_lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["play", "pass", "draw"]))
    body: dict[str, object] = {
        "type": kind,
        "match": draw(st.sampled_from(["m-1", "m-\u00f1", 'm\\"x'])),
        "seq": draw(st.integers(0, 2**40)),
        "ts": draw(st.sampled_from(_TS_VALUES[:3])),
        "hand": draw(st.integers(1, 300)),
        "seat": draw(st.integers(0, 3)),
    }
    if kind != "pass":
        body["tile"] = draw(st.sampled_from(["63", "36", "00", "66", "01"]))
    if kind == "play":
        body["end"] = draw(st.sampled_from([None, "left", "right"]))
    for _ in range(draw(st.integers(0, 2))):  # slightly broken, or not
        key = draw(_MOVE_KEYS)
        if draw(st.booleans()):
            body[key] = draw(_ODD_VALUES)
        else:
            body.pop(key, None)
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 9)) == 0:
        text = json.dumps(body)  # spaces after separators
    if draw(st.integers(0, 9)) == 0:
        text = text[:-1] + ',"type":"' + kind + '"}'  # a duplicate key
    return text


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_move_lines(), min_size=1, max_size=8), crlf=st.booleans())
def test_reader_fast_paths_give_the_canonical_records(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], crlf: bool
) -> None:
    path = tmp_path_factory.mktemp("fast") / "x.jsonl"
    path.write_bytes(("\r\n" if crlf else "\n").join(lines).encode())
    records, stats = read_all(path)
    assert len(records) == len(lines)
    for n, (rec, text) in enumerate(zip(records, lines, strict=True), 1):
        _assert_same_record(rec, _reference(text, str(path), n))
        _assert_same_record(parse_line(text, str(path), n), _reference(text, str(path), n))
    assert stats == FileStats(str(path), len(lines), len(bad(records)))


def test_reader_fast_paths_on_the_examples() -> None:
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        records, _ = read_all(path)
        for rec in records:
            _assert_same_record(rec, _reference(rec.raw, rec.file, rec.line))
