"""The native path of validate_paths (replay.canonical_reader + replay.validate.fast_path) gives the
pure path's report, exactly: same files, top-level findings and match reports
(dataclass equality), on the sample logs, simulated logs of every profile,
planted defects, logs cut into small buffers, split over files, gzip and
broken gzip, and randomly damaged logs.

The pure path is the same process with ``replay.validate.run.native`` set to
None (LogReader + MatchReplayer), as REPLAY_PURE=1 would give. Under
REPLAY_PURE=1 (or without the C build) the pure path runs alone, the path
production takes then; the tests of the fast path itself skip, or fail
where CI expects the build (tests/conftest.py).
"""

from __future__ import annotations

import gzip
import random
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

import replay.canonical_reader as scan_mod
import replay.reader as reader_mod
import replay.validate.run as V
from replay.findings import ValidationReport
from replay.reader import MAX_LINE_BYTES
from replay.rules import PROFILES
from replay.simulate import DEFECTS, SimConfig, defect_log, simulate, write_lines
from tests.conftest import needs_native, require_native

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
DEFECT_SAMPLES = ROOT / "sample_logs_defects"
SAMPLE_FILES = sorted(
    p for d in (SAMPLES, DEFECT_SAMPLES) for p in d.rglob("*") if p.name.endswith((".jsonl", ".jsonl.gz"))
)


@contextmanager
def pure() -> Iterator[None]:
    saved = V.native
    V.native = None
    try:
        yield
    finally:
        V.native = saved


def _diff(a: ValidationReport, b: ValidationReport) -> str:
    """Where two reports first differ (for the assertion message)."""
    if a.files != b.files:
        return f"files: {a.files} vs {b.files}"
    if a.findings != b.findings:
        return f"top findings: {a.findings} vs {b.findings}"
    if len(a.matches) != len(b.matches):
        return f"{len(a.matches)} vs {len(b.matches)} matches"
    for x, y in zip(a.matches, b.matches, strict=True):
        if x != y:
            for name in x.__dataclass_fields__:
                if getattr(x, name) != getattr(y, name):
                    return f"match {x.match} field {name}: {getattr(x, name)!r:.600} vs {getattr(y, name)!r:.600}"
    return "equal"


def both(paths: Sequence[str | Path]) -> tuple[ValidationReport, ValidationReport]:
    fast = V.validate_paths(paths)
    if V.native is None:  # the pure build: its one path is the reference
        return fast, fast
    with pure():
        ref = V.validate_paths(paths)
    return fast, ref


def assert_same(paths: Sequence[str | Path]) -> ValidationReport:
    fast, ref = both(paths)
    assert fast == ref, _diff(fast, ref)
    return ref


@pytest.fixture
def count_fast(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts fast_report's answers (reports vs None) during the test."""
    require_native("counting the fast path's answers")
    counts = {"fast": 0, "declined": 0}
    real: Callable[..., Any] = V.fast_report

    def counting(*args: Any, **kw: Any) -> Any:
        rep = real(*args, **kw)
        counts["fast" if rep is not None else "declined"] += 1
        return rep

    monkeypatch.setattr(V, "fast_report", counting)
    return counts


def sim_lines(profile: str, seed: int, *, matches: int = 3, tables: int = 2, **kw: Any) -> list[bytes]:
    return list(simulate(SimConfig(profiles=(profile,), matches=matches, seed=seed, tables=tables, **kw)))


def write(path: Path, lines: Sequence[bytes], *, end: bytes = b"\n") -> Path:
    path.write_bytes(b"\n".join(lines) + end)
    return path


# -- sample logs ---------------------------------------------------------------------


def test_sample_logs_at_once(count_fast: dict[str, int]) -> None:
    assert len(SAMPLE_FILES) > 50
    rep = assert_same([SAMPLES, DEFECT_SAMPLES])
    assert len(rep.files) == len(SAMPLE_FILES)
    assert {m.verdict for m in rep.matches} >= {"valid", "invalid"}
    assert count_fast["fast"] > 50  # and the fast path did the work


def test_defect_samples_at_once() -> None:
    rep = assert_same([DEFECT_SAMPLES])
    assert sum(m.verdict == "invalid" for m in rep.matches) > 20


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=[str(p.relative_to(ROOT)) for p in SAMPLE_FILES])
def test_sample_log_alone(path: Path) -> None:
    rep = assert_same([path])
    assert rep.files[0].lines > 0


# -- simulated logs ------------------------------------------------------------------


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_simulated_profile(profile: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Several seeds, interleaved tables, rematches, seat changes, late reveals;
    one seed with abandoned matches (the fast path's answers counted where it runs)."""
    count_fast = request.getfixturevalue("count_fast") if V.native is not None else None
    for seed, kw in ((1, {}), (2, {"tables": 3}), (3, {"abandon_rate": 0.1})):
        p = write(tmp_path / f"{profile}-{seed}.jsonl", sim_lines(profile, seed, **kw))
        rep = assert_same([p])
        assert len(rep.matches) >= 3
    # the equality above would be empty if the fast path never answered
    assert count_fast is None or count_fast["fast"] > 0


@pytest.mark.parametrize(
    "overrides",
    [
        {"lead_to_partner": True, "block_end": "all_pass"},
        {"stock": "draw", "block_end": "all_pass"},
        {"players": 3, "teams": "individual", "first_lead": "bayamon_draw"},
        {"players": 2, "teams": "individual", "first_lead": "highest_double"},
    ],
    ids=["yield+all_pass", "draw+all_pass", "3p_bayamon", "2p_highest_double"],
)
def test_simulated_overrides(overrides: dict[str, Any], tmp_path: Path) -> None:
    lines = list(simulate(SimConfig(profiles=("international",), overrides=overrides, matches=4, seed=8, tables=2)))
    assert_same([write(tmp_path / "o.jsonl", lines)])


def test_clean_international_mostly_fast(tmp_path: Path, count_fast: dict[str, int]) -> None:
    p = write(tmp_path / "intl.jsonl", sim_lines("international", 21, matches=12, tables=3))
    rep = assert_same([p])
    assert all(m.verdict == "valid" for m in rep.matches)
    assert count_fast["fast"] + count_fast["declined"] == len(rep.matches) == 12
    # fast_report runs once in the native pass: most clean matches must be fast
    assert count_fast["fast"] >= 0.75 * len(rep.matches), count_fast


def test_fast_report_declines_in_the_pure_pass(count_fast: dict[str, int], tmp_path: Path) -> None:
    p = write(tmp_path / "x.jsonl", sim_lines("international", 4, matches=2, tables=1))
    with pure():
        V.validate_paths([p])
    assert count_fast == {"fast": 0, "declined": 0}
    V.validate_paths([p])
    assert count_fast["fast"] == 2


# -- planted defects -----------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(DEFECTS))
def test_planted_defect(code: str, tmp_path: Path) -> None:
    for seed in (0, 3):
        p = write(tmp_path / f"{code}-{seed}.jsonl", defect_log(code, seed))
        rep = assert_same([p])
        found = {f.code for f in rep.findings} | {f.code for m in rep.matches for f in m.findings}
        assert set(DEFECTS[code]) <= found, (code, found)


def test_defects_among_clean_matches(tmp_path: Path, count_fast: dict[str, int]) -> None:
    """Every defect log riffled into clean matches, in one file (each log's order kept)."""
    rnd = random.Random(5)
    mixed = sim_lines("international", 31, matches=6, tables=3)
    for code in sorted(DEFECTS):
        mixed = _riffle(mixed, defect_log(code, 1), rnd)
    rep = assert_same([write(tmp_path / "mixed.jsonl", mixed)])
    assert sum(m.verdict == "valid" for m in rep.matches) >= 6
    assert sum(m.verdict != "valid" for m in rep.matches) >= 20
    assert count_fast["fast"] >= 4


def _riffle(a: list[bytes], b: list[bytes], rnd: random.Random) -> list[bytes]:
    """a and b merged at random, each in its own order."""
    out: list[bytes] = []
    i = j = 0
    while i < len(a) or j < len(b):
        if j == len(b) or (i < len(a) and rnd.random() < len(a) / (len(a) + len(b))):
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out


# -- files, buffers, gzip ------------------------------------------------------------


def test_match_split_over_two_files(tmp_path: Path, count_fast: dict[str, int]) -> None:
    lines = sim_lines("domena_2p", 6, matches=3, tables=1)
    cut = len(lines) // 2  # in the middle of the second match, most likely in a hand
    a = write(tmp_path / "a.jsonl", lines[:cut])
    b = write(tmp_path / "b.jsonl", lines[cut:])
    rep = assert_same([a, b])
    split = [m for m in rep.matches if len(m.files) == 2]
    assert split and all(m.verdict == "valid" for m in rep.matches)
    # and the same as the whole file read at once, but for the file names
    whole = assert_same([write(tmp_path / "whole.jsonl", lines)])
    assert [(m.match, m.verdict, m.score, m.hands) for m in whole.matches] == [
        (m.match, m.verdict, m.score, m.hands) for m in rep.matches
    ]
    # reversed order of the files: the second half first
    assert_same([b, a])


@needs_native
@pytest.mark.parametrize("chunk", [None, 1000])
def test_small_buffers_cut_matches_and_hands(
    chunk: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = sim_lines("international", 9, matches=6, tables=3)
    if chunk is None:  # the reader's 256 KiB chunks: a file of several of them
        lines = lines + sim_lines("pr_3p", 10, matches=6, tables=3) + sim_lines("domena_2p", 11, matches=8, tables=2)
    p = write(tmp_path / "cut.jsonl", lines)
    want = assert_same([p])
    monkeypatch.setattr(scan_mod, "BUFFER_BYTES", 4096)
    if chunk is not None:
        monkeypatch.setattr(reader_mod, "_CHUNK", chunk)
    else:
        assert p.stat().st_size > 3 * 256 * 1024
    _, sources, _ = scan_mod.scan_paths([p])
    assert max(len(s.segments) for srcs in sources.values() for s in srcs) > 1
    got = assert_same([p])
    assert got == want


def test_gzip_input(tmp_path: Path) -> None:
    lines = sim_lines("puerto_rico", 12, matches=3, tables=2)
    plain = write(tmp_path / "p.jsonl", lines)
    gz = tmp_path / "p.jsonl.gz"
    write_lines(lines, gz)
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    rep = assert_same([gz])
    ref = assert_same([plain])
    assert [m.hands for m in rep.matches] == [m.hands for m in ref.matches]
    assert rep.files[0].lines == ref.files[0].lines == len(lines)
    # gzip named .jsonl: recognised by its header
    hidden = tmp_path / "gz-inside.jsonl"
    hidden.write_bytes(gz.read_bytes())
    assert_same([hidden])


@pytest.mark.parametrize("buffer", [None, 4096])
def test_truncated_gzip(buffer: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = sim_lines("international", 13, matches=4, tables=2)
    data = gzip.compress(b"\n".join(lines) + b"\n", mtime=0)
    if buffer is not None:
        monkeypatch.setattr(scan_mod, "BUFFER_BYTES", buffer)
        monkeypatch.setattr(reader_mod, "_CHUNK", 2048)
    for frac in (0.3, 0.77, 0.999):
        p = tmp_path / f"t{frac}.jsonl.gz"
        p.write_bytes(data[: int(len(data) * frac)])
        rep = assert_same([p])
        assert rep.findings and rep.findings[-1].code == "MALFORMED_LINE"
        assert rep.files[0].bad_lines >= 1
    # a corrupt byte in the middle of the stream
    bad = bytearray(data)
    bad[len(bad) // 2] ^= 0xFF
    p = tmp_path / "corrupt.jsonl.gz"
    p.write_bytes(bytes(bad))
    rep = assert_same([p])
    assert any(f.code == "MALFORMED_LINE" for f in rep.findings)
    # named .gz without a gzip header
    p = tmp_path / "fake.jsonl.gz"
    p.write_bytes(b"\n".join(lines[:5]))
    assert_same([p])


def test_line_ends_and_blank_lines(tmp_path: Path) -> None:
    lines = sim_lines("mexico", 14, matches=2, tables=1)
    assert_same([write(tmp_path / "crlf.jsonl", [x + b"\r" for x in lines])])
    assert_same([write(tmp_path / "nofinal.jsonl", lines, end=b"")])
    spaced = [y for x in lines for y in (x, b"", b"  \t")]
    assert_same([write(tmp_path / "blank.jsonl", spaced)])
    assert_same([write(tmp_path / "empty.jsonl", [], end=b"")])


# -- randomly damaged logs -----------------------------------------------------------

_EDITS = [
    (b'"left"', b'"right"'), (b'"right"', b'"left"'), (b'"end":null', b'"end":"left"'),
    (b'"domino"', b'"block"'), (b'"block"', b'"domino"'), (b'"winner":null', b'"winner":0'),
    (b'Z"', b'+00:00"'), (b'"pass"', b'"draw"'), (b'"reveal"', b'"revea1"'),
    (b'"notes":["', b'"notes":["x","'), (b'"bot":false', b'"bot":true'),
]  # fmt: skip


def _damage(lines: list[bytes], rnd: random.Random) -> list[bytes]:
    out = list(lines)
    i = rnd.randrange(len(out))
    line = out[i]
    what = rnd.randrange(10)
    if what == 0 and line:
        j = rnd.randrange(len(line))
        line = line[:j] + bytes([rnd.choice(b'0123456789",:{}[] -abcelnrtux')]) + line[j + 1 :]
    elif what == 1:
        del out[i]
        return out
    elif what == 2:
        out.insert(i, line)
        return out
    elif what == 3 and i + 1 < len(out):
        out[i], out[i + 1] = out[i + 1], out[i]
        return out
    elif what == 4:
        line = line.replace(b",", b", ", 1)
    elif what == 5:
        line = line[:-1] + b',"extra":[1]}'
    elif what == 6:
        nums = list(re.finditer(rb"\d+", line))
        if nums:
            m = rnd.choice(nums)
            v = int(m.group())
            v = rnd.choice([v + 1, max(v - 1, 0), 0, 2**31 - 1, 2**31, 127, 128])
            line = line[: m.start()] + str(v).encode() + line[m.end() :]
    elif what == 7:
        tiles = list(re.finditer(rb'"[0-6][0-6]"', line))
        if tiles:
            m = rnd.choice(tiles)
            t = m.group()
            new = b'"' + t[2:3] + t[1:2] + b'"' if rnd.random() < 0.5 else b'"%d%d"' % (rnd.randrange(7), rnd.randrange(7))
            line = line[: m.start()] + new + line[m.end() :]
    elif what == 8:
        for old, new in rnd.sample(_EDITS, len(_EDITS)):
            if old in line:
                line = line.replace(old, new, 1)
                break
    else:
        m = re.search(rb'"seat":(\d)', line)
        if m:  # another seat, within the table (a seat past it crashes both paths)
            n = 2 if b"domena_2p" in line else 4
            line = line[: m.start(1)] + str((int(m.group(1)) + 1) % n).encode() + line[m.end(1) :]
    out[i] = line
    return out


@pytest.mark.parametrize("profile", ["international", "domena_2p", "pr_3p", "colombia"])
def test_damaged_logs(profile: str, tmp_path: Path) -> None:
    base = sim_lines(profile, 40, matches=2, tables=2)
    rnd = random.Random(profile)
    invalid = 0
    for k in range(50):
        lines = base
        for _ in range(rnd.choice([1, 1, 2, 3])):
            lines = _damage(lines, rnd)
        p = write(tmp_path / f"d{k}.jsonl", lines, end=b"\n" if k % 5 else b"")
        rep = assert_same([p])
        invalid += any(m.verdict != "valid" for m in rep.matches) or bool(rep.findings)
    assert invalid > 10  # the damage was seen


# -- found mismatches (see the report) -----------------------------------------------


def test_line_of_two_carriage_returns(tmp_path: Path) -> None:
    lines = sim_lines("international", 15, matches=1, tables=1)
    p = tmp_path / "crcr.jsonl"
    p.write_bytes(b"\n".join(lines[:5]) + b"\n\r\r\n" + b"\n".join(lines[5:]) + b"\n")
    fast, ref = both([p])
    assert ref.files[0].bad_lines == 1 and ref.findings[0].code == "MALFORMED_LINE"
    assert fast == ref, _diff(fast, ref)


def test_line_of_max_bytes_before_carriage_return(tmp_path: Path) -> None:
    head = b'{"type":"chat","match":"m-long","seq":0,"pad":"'
    line = head + b"x" * (MAX_LINE_BYTES - len(head) - 2) + b'"}'
    assert len(line) == MAX_LINE_BYTES
    p = tmp_path / "long.jsonl"
    p.write_bytes(line + b"\r\n")
    fast, ref = both([p])
    assert [f.code for f in ref.findings] == ["MALFORMED_LINE"]  # too long, with its \r
    assert fast == ref, _diff(fast, ref)


def test_line_of_max_bytes(tmp_path: Path) -> None:
    """Without \\r both paths agree at the limit and just past it."""
    head = b'{"type":"chat","match":"m-long","seq":0,"pad":"'
    for size, code in ((MAX_LINE_BYTES, "UNKNOWN_EVENT"), (MAX_LINE_BYTES + 1, "MALFORMED_LINE")):
        line = head + b"x" * (size - len(head) - 2) + b'"}'
        p = tmp_path / f"long{size}.jsonl"
        p.write_bytes(line + b"\n")
        rep = assert_same([p])
        found = [f.code for f in rep.findings] + [f.code for m in rep.matches for f in m.findings]
        assert found == [code]


def test_duplicate_ts_key_on_a_line_left_to_python(tmp_path: Path) -> None:
    lines = sim_lines("international", 16, matches=1, tables=1)
    last = orjson.loads(lines[-1])
    assert last["type"] == "match_end"
    lines[-1] = lines[-1][:-1] + b',"ts":"2020-01-01T00:00:00.000Z"}'
    fast, ref = both([write(tmp_path / "dup.jsonl", lines)])
    assert [f.code for f in ref.matches[0].findings] == ["TIME_ORDER"]
    assert fast == ref, _diff(fast, ref)


@needs_native
def test_a_declined_match_takes_back_only_its_own_rows() -> None:
    """A match that declines after its hands were replayed (no match_end)
    leaves the moves sink exactly as the matches before it left it."""
    from replay.canonical_reader import scan_buffer
    from replay.validate.fast_path import MoveColumns, fast_report

    lines = sim_lines("international", 11, matches=3, tables=3)
    by_match: dict[str, list[bytes]] = {}
    for raw in lines:
        by_match.setdefault(orjson.loads(raw)["match"], []).append(raw)
    (a, b, c) = by_match.values()
    assert b[-1].find(b'"match_end"') > 0
    srcs = [next(iter(scan_buffer(b"\n".join(x) + b"\n", "t.jsonl").sources.values())) for x in (a, b[:-1], c)]

    def sink_of(sources: Sequence[Any]) -> tuple[list[bytes], list[Any], dict[Any, Any], list[bool]]:
        sink = MoveColumns()
        got = [fast_report(s, moves=sink) is not None for s in sources]
        return [bytes(col) for col in sink.cols], sink.matches, dict(sink.hands), got

    cols, matches, hands, got = sink_of(srcs)
    assert got == [True, False, True]
    assert {m for m, _ in hands} == {srcs[0].match, srcs[2].match}
    assert (cols, matches, hands) == sink_of([srcs[0], srcs[2]])[:3]
