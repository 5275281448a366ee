"""Odd input that once ended a run or split the two readers: times at the
edges of the calendar, an exception inside the validator, special files in a
folder, a byte-order mark, every line-ending form."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay.findings import FindingCode
from replay.validate.run import validate_paths
from tests.conftest import needs_native

ROOT = Path(__file__).resolve().parent.parent
MILO = ROOT / "sample_logs" / "milo.jsonl"


def _events(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in path.read_bytes().splitlines()]


def _write(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events))
    return path


def _first_match(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first = events[0]["match"]
    return [e for e in events if e["match"] == first]


def _digest(report: Any, anon: bool = False) -> list[Any]:
    """A report's matches as JSON, the files' folder left out (with `anon`, their name too)."""
    out = []
    for m in report.to_json()["matches"]:
        for f in m["findings"]:
            f["file"] = f["file"] and ("" if anon else Path(f["file"]).name)
        out.append(m)
    return out


def _pure(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REPLAY_PURE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "replay", *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


# -- times the schema accepts are times the pipeline handles ---------------------------

ODD_TIMES = (
    "0000-01-01T00:00:00Z",  # no year 0 in the calendar
    "0000-02-29T00:00:00Z",
    "9999-12-31T23:00:00-05:00",  # year 10000 in UTC
    "0001-01-01T00:30:00+01:00",  # year 0 in UTC
    "9999-12-31T23:59:60Z",  # a leap second into year 10000
)
EDGE_TIMES = ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2016-12-31T23:59:60Z")


@pytest.fixture(scope="module")
def odd_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Beside the untouched milo.jsonl, copies of its first match (renamed)
    with one odd time: on its first line, or on every line."""
    folder = tmp_path_factory.mktemp("times")
    (folder / "milo.jsonl").write_bytes(MILO.read_bytes())
    first = _first_match(_events(MILO))
    for k, ts in enumerate(ODD_TIMES + EDGE_TIMES):
        mine = [{**e, "match": f"{e['match']}-t{k}"} for e in first]
        if k % 2:
            mine = [{**e, "ts": ts} for e in mine]
        else:
            mine[0]["ts"] = ts
        _write(folder / f"t{k}.jsonl", mine)
    return folder


def test_a_time_outside_the_calendar_is_a_finding_on_its_line(odd_folder: Path) -> None:
    report = validate_paths([odd_folder])
    by_id = {m.match: m for m in report.matches}
    for k, ts in enumerate(ODD_TIMES):
        m = by_id[f"m-11000-0001-t{k}"]
        bad = [f for f in m.findings if f.code == FindingCode.SCHEMA_ERROR and ts in f.message]
        assert bad and bad[0].line == 1 and bad[0].file and bad[0].file.endswith(f"t{k}.jsonl"), (ts, m.findings)
    for k in range(len(ODD_TIMES), len(ODD_TIMES) + len(EDGE_TIMES)):
        m = by_id[f"m-11000-0001-t{k}"]
        assert not any(f.code == FindingCode.SCHEMA_ERROR for f in m.findings), m.findings
    # the untouched file's matches are validated as they are alone (the copies
    # share its seeds: SEED_REUSED aside)
    for m in validate_paths([MILO]).matches:
        got = by_id[m.match]
        assert [h.to_json() for h in got.hands] == [h.to_json() for h in m.hands]
        assert [f.code for f in got.findings if f.code != "SEED_REUSED"] == [f.code for f in m.findings]


@needs_native
def test_the_pure_reader_and_the_scanner_agree_on_odd_times(odd_folder: Path) -> None:
    fast = orjson.loads(_digest_json(validate_paths([odd_folder])))
    got = _pure(["validate", str(odd_folder), "--json"])
    assert got.returncode == 1, got.stderr
    assert fast == orjson.loads(got.stdout)


def _digest_json(report: Any) -> bytes:
    return orjson.dumps(report.to_json())


def test_ingest_stores_every_file_beside_odd_times(odd_folder: Path, tmp_path: Path) -> None:
    import duckdb

    from replay.ingest import ingest

    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(odd_folder)], db=db, workers=0, analysis=(0, 0))
    with duckdb.connect(str(db), read_only=True) as conn:
        stored = dict(conn.execute("SELECT match, verdict FROM matches").fetchall())
        times = conn.execute("SELECT min(started), max(started) FROM hands").fetchone()
    want = {m.match for m in validate_paths([MILO]).matches}
    assert want <= set(stored)
    assert {f"m-11000-0001-t{k}" for k in range(len(ODD_TIMES) + len(EDGE_TIMES))} <= set(stored)
    assert times is not None and times[0].year >= 1 and times[1].year <= 9999
    # and served: the times at the calendar's ends, and the filters up to them
    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app(db, deepen=0)) as c:
        players = [p["player"] for p in c.get("/api/players").json()["players"]]
        urls = ["/matches", "/api/matches.csv", "/fairness", "/leaderboard", "/findings",
                "/matches/m-11000-0001-t5", "/matches/m-11000-0001-t6/hands/1",
                "/api/matches?date_from=0001-01-01&date_to=9999-12-31", "/api/hands?date_to=9999-12-31",
                "/fairness?date_to=9999-12-31", f"/players/{players[0]}?date_to=9999-12-31",
                f"/api/players/{players[0]}?date_from=0001-01-01&date_to=9999-12-31",
                f"/api/skill/months.csv?player={players[0]}&date_to=9999-12-31"]
        for url in urls:
            assert c.get(url).status_code == 200, url


# -- one failing match never ends the run -----------------------------------------------


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The validator raises on the second match of milo.jsonl, on both paths."""
    from replay.validate import fast_path, replayer

    victim = _events(MILO)[0]["match"].replace("0001", "0002")
    real_deal = replayer.MatchReplayer.on_deal
    real_fast = fast_path._FastMatch.run

    def on_deal(self: Any, e: Any) -> None:
        if self.match_id == victim and e.hand == 2:
            raise ZeroDivisionError("planted")
        real_deal(self, e)

    def fast_run(self: Any) -> Any:
        if self.src.match == victim:
            raise KeyError("planted")
        return real_fast(self)

    monkeypatch.setattr(replayer.MatchReplayer, "on_deal", on_deal)
    monkeypatch.setattr(fast_path._FastMatch, "run", fast_run)
    yield victim


def test_an_exception_in_one_match_is_a_finding_and_the_rest_goes_on(planted: str) -> None:
    report = validate_paths([MILO])
    by_id = {m.match: m for m in report.matches}
    hit = by_id[planted]
    assert hit.verdict == "invalid" and [f.code for f in hit.findings] == [FindingCode.INTERNAL_ERROR]
    f = hit.findings[0]
    assert "ZeroDivisionError: planted" in f.message and f.file == str(MILO)
    deal2 = next(i for i, e in enumerate(_events(MILO), 1) if e["match"] == planted and e.get("hand") == 2)
    assert f.line == deal2  # the line it was at
    assert len(report.matches) == len({e["match"] for e in _events(MILO)})


def test_an_exception_in_one_match_stores_every_other(planted: str, tmp_path: Path) -> None:
    import duckdb

    from replay.ingest import ingest

    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(MILO)], db=db, workers=0, analysis=(0, 0))
    with duckdb.connect(str(db), read_only=True) as conn:
        stored = {m: (v, h) for m, v, h in conn.execute("SELECT match, verdict, hands FROM matches").fetchall()}
        codes = conn.execute("SELECT code, file, line FROM findings WHERE match = ?", [planted]).fetchall()
    clean = {m.match: (m.verdict, len(m.hands)) for m in validate_paths([MILO]).matches}
    assert stored.pop(planted) == ("invalid", 0)
    assert [c for c, _, _ in codes] == ["INTERNAL_ERROR"] and codes[0][2] > 0
    clean.pop(planted)
    assert stored == clean


# -- special files, a byte-order mark, line endings ----------------------------------------


def _milo_lines(n: int = 40) -> list[bytes]:
    raws = MILO.read_bytes().splitlines()
    first = orjson.loads(raws[0])["match"]
    return [r for r in raws if orjson.loads(r)["match"] == first][:n]


def test_a_named_pipe_in_a_folder_is_skipped_with_a_note(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from replay.reader import iter_paths

    (tmp_path / "good.jsonl").write_bytes(b"\n".join(_milo_lines()) + b"\n")
    os.mkfifo(tmp_path / "pipe.jsonl")  # no writer: opening it would wait for ever
    with caplog.at_level("WARNING", logger="replay.reader"):
        assert [p.name for p in iter_paths([tmp_path])] == ["good.jsonl"]
    assert "pipe.jsonl: a named pipe, not a regular file" in caplog.text
    # validate and ingest, each in a process with a time limit
    got = _pure(["validate", str(tmp_path)])
    assert got.returncode == 1 and "a named pipe" in got.stderr
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    db = tmp_path / "store" / "replay.duckdb"
    done = subprocess.run([sys.executable, "-m", "replay", "ingest", str(tmp_path), "--db", str(db), "--no-analysis"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0 and "a named pipe" in done.stderr, done.stderr


def test_a_byte_order_mark_starts_a_file_and_nothing_else(tmp_path: Path) -> None:
    lines = _milo_lines()
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b"\n".join(lines) + b"\n")
    want = _digest(validate_paths([plain]), anon=True)
    for name, data in (("bom.jsonl", b"\xef\xbb\xbf" + plain.read_bytes()),
                       ("bom.jsonl.gz", __import__("gzip").compress(b"\xef\xbb\xbf" + plain.read_bytes()))):
        path = tmp_path / "one" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        assert _digest(validate_paths([path]), anon=True) == want, name
        path.unlink()
    # a BOM on line 2 stays part of that line: a bad line
    (tmp_path / "mid.jsonl").write_bytes(lines[0] + b"\n\xef\xbb\xbf" + b"\n".join(lines[1:]) + b"\n")
    mid = validate_paths([tmp_path / "mid.jsonl"])
    assert [(f.code, f.line) for f in mid.findings] == [("MALFORMED_LINE", 2)]


def _ending_variants() -> dict[str, bytes]:
    lines = _milo_lines(30)
    seps = {"lf": [b"\n"], "crlf": [b"\r\n"], "cr": [b"\r"], "mixed": [b"\n", b"\r\n", b"\r"],
            "lf-crlf": [b"\n", b"\r\n"], "cr-lf": [b"\r", b"\n"], "crcrlf": [b"\r\r\n"]}
    out = {}
    for name, cycle in seps.items():
        for tail in ("end", "noend"):
            for bom in ("", "-bom"):
                key = f"{name}-{tail}{bom}"
                mine = [r.replace(b'"m-11000-0001"', f'"m-{key}"'.encode()) for r in lines]
                body = b"".join(r + cycle[i % len(cycle)] for i, r in enumerate(mine))
                if tail == "noend":
                    body = body.rstrip(b"\r\n")
                out[key] = (b"\xef\xbb\xbf" if bom else b"") + body
    return out


@needs_native
def test_the_scanner_and_the_pure_reader_agree_on_every_line_ending(tmp_path: Path) -> None:
    for key, data in _ending_variants().items():
        (tmp_path / f"{key}.jsonl").write_bytes(data)
    fast = orjson.loads(orjson.dumps(validate_paths([tmp_path]).to_json()))
    pure = _pure(["validate", str(tmp_path), "--json"])
    assert pure.stdout, pure.stderr
    slow = orjson.loads(pure.stdout)
    assert fast["files"] == slow["files"]
    assert fast["findings"] == slow["findings"]
    assert {m["match"]: m for m in fast["matches"]} == {m["match"]: m for m in slow["matches"]}
    assert all(m["match"] for m in fast["matches"])  # no match with an empty id
    lf = {m["match"]: m for m in fast["matches"]}
    # LF, CR LF and any mix of the two read alike, a BOM or not, a last line end or not
    for key in ("crlf-end", "lf-crlf-end", "lf-end-bom", "crlf-noend-bom"):
        a, b = lf["m-lf-end"], lf[f"m-{key}"]
        assert a["hands"] == b["hands"] and [f["code"] for f in a["findings"]] == [f["code"] for f in b["findings"]]
