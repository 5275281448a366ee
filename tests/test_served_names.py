"""What the pages say about where things come from and when: files named from
the folder ingested (never a server path), dates as UTC days whatever the
server's zone."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

ROOT = Path(__file__).resolve().parent.parent
DEFECTS = ROOT / "sample_logs_defects"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    from replay.ingest import ingest

    base = tmp_path_factory.mktemp("names")
    logs = base / "deep" / "server" / "incoming"
    logs.mkdir(parents=True)
    for name in ("MALFORMED_LINE.jsonl", "SCHEMA_ERROR.jsonl", "FALSE_PASS.jsonl"):
        shutil.copy(DEFECTS / name, logs / name)
    (logs / "junk.jsonl").write_bytes(b'{"type":"play"}\nnot json\n')  # lines of no match
    lone = base / "elsewhere" / "lone.jsonl"
    lone.parent.mkdir()
    shutil.copy(DEFECTS / "NOT_YOUR_TURN.jsonl", lone)
    db = base / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(logs), str(lone)], db=db, workers=0, analysis=(0, 0))
    with TestClient(create_app(db)) as client:
        yield client, base


def test_findings_name_files_from_the_folder_given(served: tuple[TestClient, Path]) -> None:
    client, base = served
    rows = client.get("/api/findings", params={"per_page": 1000}).json()["findings"]
    files = {r["file"] for r in rows if r["file"]}
    assert "incoming/MALFORMED_LINE.jsonl" in files and "incoming/junk.jsonl" in files
    assert "lone.jsonl" in files
    pages = ["/findings", "/api/findings", "/api/findings.csv", "/", "/matches", "/api/matches"]
    matches = client.get("/api/matches").json()["matches"]
    for m in matches:
        pages += [f"/matches/{m['match']}", f"/api/matches/{m['match']}"]
    root = str(base)
    for url in pages:
        r = client.get(url)
        assert r.status_code == 200, url
        assert root not in r.text and "/deep/server" not in r.text, url


def test_a_path_an_older_ingest_kept_is_shown_by_its_name(tmp_path: Path) -> None:
    from replay.ingest import ingest

    src = tmp_path / "srv" / "logs" / "MALFORMED_LINE.jsonl"
    src.parent.mkdir(parents=True)
    shutil.copy(DEFECTS / "MALFORMED_LINE.jsonl", src)
    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    # as a store filled before kept it: the path as given
    ingest([str(src)], db=db, workers=0, analysis=(0, 0), labels={str(src): str(src)})
    with TestClient(create_app(db)) as client:
        rows = client.get("/api/findings").json()["findings"]
        assert {r["file"] for r in rows if r["file"]} == {"MALFORMED_LINE.jsonl"}
        for url in ("/findings", "/api/findings.csv", *(f"/matches/{r['match']}" for r in rows if r["match"])):
            assert str(tmp_path) not in client.get(url).text, url


# -- dates are UTC days -------------------------------------------------------------------

_DUMP = """
import hashlib, json, sys
from fastapi.testclient import TestClient
from api.app import create_app
urls = json.loads(sys.argv[2])
with TestClient(create_app(sys.argv[1])) as c:
    out = {}
    for u in urls:
        r = c.get(u)
        out[u] = [r.status_code, hashlib.sha256(r.content).hexdigest(), len(r.content)]
print(json.dumps(out))
"""


def _answers(db: Path, urls: list[str], tz: str) -> dict[str, list[object]]:
    env = {**os.environ, "TZ": tz, "PYTHONPATH": str(ROOT)}
    got = subprocess.run([sys.executable, "-c", _DUMP, str(db), json.dumps(urls)], capture_output=True, text=True,
                         env=env, timeout=600, check=False)
    assert got.returncode == 0, got.stderr
    answers: dict[str, list[object]] = json.loads(got.stdout)
    return answers


def test_date_filters_bind_utc_days_whatever_the_server_zone(tmp_path: Path) -> None:
    from replay.ingest import ingest

    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(ROOT / "sample_logs" / "international.jsonl"), str(ROOT / "sample_logs" / "milo.jsonl")],
           db=db, workers=0, analysis=(0, 0))
    with TestClient(create_app(db)) as c:
        rows = c.get("/api/matches").json()["matches"]
        days = sorted({r["started"][:10] for r in rows})
        player = c.get("/api/players").json()["players"][0]["player"]
    assert days == ["2026-11-04", "2026-11-05"]
    urls = []
    for d in days:
        for q in (f"date_from={d}&date_to={d}", f"date_from={d}", f"date_to={d}"):
            urls += [f"/api/matches?{q}", f"/matches?{q}", f"/api/matches.csv?{q}", f"/api/hands?{q}",
                     f"/api/hands.csv?{q}", f"/api/moves?{q}&per_page=50", f"/api/fairness?{q}",
                     f"/api/players/{player}?{q}", f"/players/{player}?{q}"]
    utc = _answers(db, urls, "UTC")
    # the list shows matches started on each day (UTC): the filter finds them
    assert all(utc[f"/api/matches?date_from={d}&date_to={d}"][2] > 200 for d in days)
    for tz in ("Pacific/Kiritimati", "America/Los_Angeles"):
        other = _answers(db, urls, tz)
        differ = [u for u in urls if other[u] != utc[u]]
        assert not differ, (tz, differ)
    assert hashlib  # (used by the child)


# -- a flood of findings -----------------------------------------------------------------


def test_a_flood_of_one_repeated_line_stores_few_findings(tmp_path: Path) -> None:
    """One valid play line repeated (an upload of a small gzip): the findings
    are capped per code, and the findings pages and the match page answer."""
    import gzip

    import duckdb
    import orjson

    from replay.findings import FINDINGS_PER_CODE

    raws = (ROOT / "sample_logs" / "milo.jsonl").read_bytes().splitlines()
    first = orjson.loads(raws[0])["match"]
    mine = [r for r in raws if orjson.loads(r)["match"] == first]
    play = next(i for i, r in enumerate(mine) if orjson.loads(r)["type"] == "play")
    repeats = 30_000
    body = gzip.compress(b"\n".join(mine) + b"\n" + (mine[play] + b"\n") * repeats)
    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    token = "flood-token"
    with TestClient(create_app(db, token=token, deepen=0)) as c:
        r = c.post("/api/upload", files={"file": ("flood.jsonl.gz", body)},
                   headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200, r.text
        for url in ("/findings", "/api/findings", "/api/findings.csv", "/api/findings.parquet",
                    f"/matches/{first}", f"/api/matches/{first}", f"/findings?match={first}&page=2"):
            got = c.get(url)
            assert got.status_code == 200, url
        listed = c.get("/api/findings", params={"match": first, "code": "SEQ_REPEATED"}).json()
        assert listed["total"] == FINDINGS_PER_CODE + 1
        pages = [c.get("/api/findings", params={"match": first, "code": "SEQ_REPEATED", "page": k}).json()
                 for k in (1, 2)]
        said = [f["message"] for p in pages for f in p["findings"]]
        assert sum(m.startswith(f"{repeats - FINDINGS_PER_CODE:,} more SEQ_REPEATED") for m in said) == 1
    with duckdb.connect(str(db), read_only=True) as conn:
        n = conn.execute("SELECT count(*) FROM findings WHERE match = ?", [first]).fetchone()
    assert n is not None and n[0] <= 3 * (FINDINGS_PER_CODE + 1)
