"""Downloads (docs/exports.md): every list as CSV and Parquet holds the JSON
list's rows, every page of them, in its order and with its columns; the
sorting of the lists; a match's original log.

Nothing hidden leaves through a download either: the deal, the draws and the
legal moves of a hand still on stay out, and so does the log of its match.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import orjson
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from tests.test_api import HIDDEN, OPEN_MATCH, SAMPLES, build_store, open_hand_log

TOKEN = "export-token"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    base = tmp_path_factory.mktemp("exports")
    db = build_store(base / "data", [SAMPLES, open_hand_log(base)])
    with TestClient(create_app(db, token=TOKEN)) as c:
        yield c


def _get(client: TestClient, url: str) -> Any:
    r = client.get(url)
    assert r.status_code == 200, (url, r.text[:300])
    return r


def _every_row(client: TestClient, path: str, params: dict[str, Any], key: str, per_page: int) -> list[dict]:
    """Every row of a paged JSON list, page after page."""
    rows: list[dict] = []
    page = 1
    while True:
        data = _get(client, f"{path}?{urlencode({**params, 'page': page, 'per_page': per_page})}").json()
        rows += data[key]
        if page >= data["pages"]:
            assert len(rows) == data["total"]
            return rows
        page += 1


def _csv(client: TestClient, url: str) -> tuple[list[str], list[list[str]]]:
    r = _get(client, url)
    assert r.headers["content-type"].startswith("text/csv")
    assert r.headers["content-disposition"].startswith("attachment; filename=")
    lines = list(csv.reader(io.StringIO(r.content.decode("utf-8"))))
    return lines[0], lines[1:]


def _parquet(client: TestClient, url: str) -> list[dict]:
    r = _get(client, url)
    assert r.headers["content-type"] == "application/vnd.apache.parquet"
    return pq.read_table(io.BytesIO(r.content)).to_pylist()


def _as_csv(v: Any) -> str:
    """A JSON value as the CSV writes it."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | dict):
        return orjson.dumps(v).decode()
    return str(v)


LISTS = [
    ("/api/matches", {}, "matches", 500),
    ("/api/matches", {"verdict": "invalid", "sort": "hands", "order": "desc"}, "matches", 7),
    ("/api/matches", {"player": "p-00005", "sort": "started", "order": "asc"}, "matches", 500),
    ("/api/findings", {}, "findings", 1000),
    ("/api/findings", {"severity": "error", "sort": "code"}, "findings", 9),
    ("/api/findings", {"match": OPEN_MATCH}, "findings", 1000),
    ("/api/players", {"sort": "matches", "order": "asc"}, "players", 1000),
    ("/api/players", {"q": "p-0001"}, "players", 3),
    ("/api/hands", {"match": "m-8000-0001"}, "hands", 1000),
    ("/api/hands", {"profile": "domena_2p", "verdict": "valid"}, "hands", 7),
    ("/api/hands", {"match": OPEN_MATCH}, "hands", 1000),
    ("/api/moves", {"match": "m-8000-0001", "hand": 1}, "moves", 5000),
    ("/api/moves", {"table": "t-1", "profile": "chiva"}, "moves", 300),
    ("/api/moves", {"match": OPEN_MATCH}, "moves", 5000),
    ("/api/moves", {"match": "no-such-match"}, "moves", 5000),
]


@pytest.mark.parametrize(("path", "params", "key", "per_page"), LISTS)
def test_downloads_hold_the_json_list(client: TestClient, path: str, params: dict, key: str, per_page: int) -> None:
    rows = _every_row(client, path, params, key, per_page)
    query = "?" + urlencode(params) if params else ""
    header, lines = _csv(client, f"{path}.csv{query}")
    table = _parquet(client, f"{path}.parquet{query}")
    assert len(lines) == len(table) == len(rows)
    if rows:
        assert header == list(rows[0]) == list(table[0])
        assert lines == [[_as_csv(v) for v in r.values()] for r in rows]
    assert table == rows


def test_downloads_take_no_unknown_format_or_sort(client: TestClient) -> None:
    assert client.get("/api/matches.xlsx").status_code == 422
    assert client.get("/api/matches.csv?sort=bogus").status_code == 422
    assert client.get("/api/moves.csv?hand=-1").status_code == 422
    r = _get(client, "/api/hands.parquet?match=m-8000-0001")
    assert 'filename="hands-m-8000-0001.parquet"' in r.headers["content-disposition"]


def test_a_hand_still_on_stays_hidden_in_the_downloads(client: TestClient) -> None:
    hands = _parquet(client, f"/api/hands.parquet?match={OPEN_MATCH}")
    on = [h for h in hands if h["result"] is None]
    assert on and all(h["dealt"] is None and h["boneyard"] is None and h["pips_left"] is None for h in on)
    done = [h for h in hands if h["result"] is not None]
    assert done and all(len(h["dealt"]) == 2 and all(len(s) == 7 for s in h["dealt"]) for h in done)
    moves = _parquet(client, f"/api/moves.parquet?match={OPEN_MATCH}&hand=2")
    assert moves and all(m["legal_moves"] is None and m["pips_left"] is None and m["forced"] is None
                         for m in moves)
    assert all(m["tile"] is None for m in moves if m["kind"] == "draw")
    assert any(m["kind"] == "draw" for m in moves)
    text = _get(client, f"/api/moves.csv?match={OPEN_MATCH}&hand=2").text
    for t in HIDDEN:
        assert f'"{t}"' not in text and f'""{t}' not in text, t
    # a finished hand's moves do carry the drawn tiles and the legal moves
    first = _parquet(client, f"/api/moves.parquet?match={OPEN_MATCH}&hand=1")
    assert all(m["legal_moves"] for m in first)


# --- sorting ---------------------------------------------------------------------


@pytest.mark.parametrize(("path", "key", "sort", "column"), [
    ("/api/matches", "matches", "hands", "hands"),
    ("/api/matches", "matches", "started", "started"),
    ("/api/matches", "matches", "profile", "profile"),
    ("/api/findings", "findings", "code", "code"),
    ("/api/players", "players", "matches", "matches"),
    ("/api/players", "players", "last_seen", "last_seen"),
])
def test_lists_sort_both_ways(client: TestClient, path: str, key: str, sort: str, column: str) -> None:
    for order in ("asc", "desc"):
        data = _get(client, f"{path}?sort={sort}&order={order}&per_page=500").json()
        assert (data["sort"], data["order"]) == (sort, order)
        got = [r[column] for r in data[key]]
        known = [v for v in got if v is not None]
        assert known == sorted(known, reverse=order == "desc")
        assert got[: len(known)] == known  # no value last
    default = _get(client, f"{path}?sort={sort}").json()
    assert default["order"] in ("asc", "desc")
    assert client.get(f"{path}?sort=nothing").status_code == 422
    assert client.get(f"{path}?sort={sort}&order=up").status_code == 422


def test_sort_pages_never_overlap(client: TestClient) -> None:
    """Ties are broken by the id: page after page holds every row once."""
    rows = _every_row(client, "/api/matches", {"sort": "verdict"}, "matches", 9)
    assert len({r["match"] for r in rows}) == len(rows)


def test_sort_links_in_the_headers(client: TestClient) -> None:
    html = _get(client, "/matches?verdict=valid&sort=hands&order=asc").text
    # the sorted column says so, and its link turns the order round; the others start theirs
    assert 'aria-sort="ascending"><a class="sort on" href="/matches?verdict=valid&amp;sort=hands&amp;order=desc"' in html
    assert 'href="/matches?verdict=valid&amp;sort=started&amp;order=desc"' in html
    assert 'href="/matches?verdict=valid&amp;sort=match&amp;order=asc"' in html
    # the pager, the form and the downloads keep the filters and the sort
    assert 'href="/matches?verdict=valid&amp;sort=hands&amp;order=asc&amp;page=2"' in html
    assert '<input type="hidden" name="sort" value="hands">' in html
    assert 'href="/api/matches.csv?verdict=valid&amp;sort=hands&amp;order=asc"' in html
    findings = _get(client, "/findings?sort=code&order=desc").text
    assert 'aria-sort="descending"' in findings and "/api/findings.parquet?sort=code&amp;order=desc" in findings
    players = _get(client, "/players?q=p-&sort=matches").text
    assert 'href="/players?q=p-&amp;sort=matches&amp;order=asc"' in players


# --- a match's own log -------------------------------------------------------------


def _lines_of(match: str, paths: list[Path]) -> list[bytes]:
    out = []
    for p in paths:
        for raw in p.read_bytes().splitlines():
            if raw.strip() and orjson.loads(raw).get("match") == match:
                out.append(raw)
    return out


def test_original_log_of_a_match(client: TestClient) -> None:
    # one file holds twelve matches, interleaved: only this one's lines, in file order
    r = _get(client, "/api/matches/m-32000-0004/log.jsonl")
    assert r.headers["content-type"] == "application/x-ndjson"
    assert 'filename="m-32000-0004.jsonl"' in r.headers["content-disposition"]
    assert r.content.splitlines() == _lines_of("m-32000-0004", [SAMPLES / "interleaved.jsonl"])
    assert len(r.content.splitlines()) == 30
    detail = _get(client, "/api/matches/m-32000-0004").json()
    assert detail["match"]["events"] == 30
    html = _get(client, "/matches/m-32000-0004").text
    assert 'href="/api/matches/m-32000-0004/log.jsonl" download' in html


def test_original_log_waits_for_every_hand(client: TestClient) -> None:
    r = client.get(f"/api/matches/{OPEN_MATCH}/log.jsonl")
    assert r.status_code == 409 and "hand 2 is not over" in r.json()["detail"]
    assert "(not offered: a hand never finished)" in _get(client, f"/matches/{OPEN_MATCH}").text
    assert client.get("/api/matches/none-such/log.jsonl").status_code == 404


def test_original_log_of_a_match_split_over_files(tmp_path: Path) -> None:
    """A match over two files (read in the other order), and a file that also
    holds another match: the match's lines, in the order of its events."""
    src = SAMPLES / "chiva.jsonl"
    lines = src.read_bytes().splitlines()
    match = orjson.loads(lines[0])["match"]
    mine = [x for x in lines if orjson.loads(x)["match"] == match]
    other = [x for x in lines if orjson.loads(x)["match"] != match]
    cut = len(mine) // 2
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a-second.jsonl").write_bytes(b"\n".join(mine[cut:] + other) + b"\n")
    (tmp_path / "logs" / "b-first.jsonl").write_bytes(b"\r\n".join(mine[:cut]) + b"\r\n")
    db = build_store(tmp_path / "data", [tmp_path / "logs"])
    with TestClient(create_app(db)) as c:
        got = _get(c, f"/api/matches/{quote(match, safe='')}/log.jsonl").content.splitlines()
        assert got == mine
        assert _get(c, f"/api/matches/{match}").json()["match"]["verdict"] == "valid"


# --- the fairness audit's lists ------------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"profile": "international"}, {"table": "t-9"}])
def test_fairness_downloads(client: TestClient, params: dict) -> None:
    query = "?" + urlencode(params) if params else ""
    data = _get(client, "/api/fairness" + query).json()
    want = {
        "tests": [{k: v for k, v in t.items() if k != "detail"} for t in data["battery"]["full"]["tests"]]
        if data["battery"] else [],
        "luck": data["luck"]["players"] if data["luck"] else [],
        "failing": data["deterministic"]["failing"],
    }
    cells = data["charts"]["tile_seat"]
    for part, rows in want.items():
        header, lines = _csv(client, f"/api/fairness/{part}.csv{query}")
        table = _parquet(client, f"/api/fairness/{part}.parquet{query}")
        assert len(lines) == len(table) == len(rows), part
        for got, row in zip(table, rows, strict=True):
            assert got == {k: (list(v) if isinstance(v, tuple) else v) for k, v in row.items()}, part
        if rows:
            assert header == list(rows[0])
    header, lines = _csv(client, f"/api/fairness/tile-seat.csv{query}")
    assert header == ["group", "tile", "column", "observed", "expected", "z"]
    assert len(lines) == sum(len(t["tiles"]) * len(t["columns"]) for t in cells)
    table = _parquet(client, f"/api/fairness/tile-seat.parquet{query}")
    for t in cells:
        mine = [r for r in table if r["group"] == t["group"]]
        assert sum(r["observed"] for r in mine) == t["deals"] * len(t["tiles"])
    assert client.get("/api/fairness/everything.csv").status_code == 422
