"""Look-alike players: `p-jose`, `p-jose` with a zero-width space and `p-jоse`
with a Cyrillic `о`, all named "José Núñez" (one in NFD), and a name with a
right-to-left override. Pages spell out what is invisible, mark mixed
scripts, search folds, and the fairness and suspicious pages warn."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest
from fastapi.testclient import TestClient

from api.app import create_app

ROOT = Path(__file__).resolve().parent.parent
JOSE = "José Núñez"
PLAYERS = {
    "p-jose": JOSE,
    "p-jose\u200b": unicodedata.normalize("NFD", JOSE),
    "p-j\u043ese": JOSE,  # a Cyrillic o
    "p-rlo": "abc\u202edef",  # a right-to-left override
}
HIDDEN = ("\u200b", "\u202e")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from replay.ingest import ingest

    base = tmp_path_factory.mktemp("lookalikes")
    raws = (ROOT / "sample_logs" / "international.jsonl").read_bytes().splitlines()
    out = []
    ids = list(PLAYERS)
    for raw in raws:
        ev = orjson.loads(raw)
        if ev["type"] == "match_start":
            k = int(ev["match"][-1])  # the matches of the file take turns at the seats
            for s, seat in enumerate(ev["seats"]):
                seat["player"] = ids[(s + k) % len(ids)]
                seat["name"] = PLAYERS[seat["player"]]
        out.append(orjson.dumps(ev))
    (base / "logs").mkdir()
    (base / "logs" / "alike.jsonl").write_bytes(b"\n".join(out) + b"\n")
    db = base / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(base / "logs")], db=db, workers=0, analysis=(0, 0))
    with TestClient(create_app(db, deepen=0)) as c:
        yield c


def test_pages_spell_out_invisible_characters(client: TestClient) -> None:
    pages = ["/players", "/matches", "/leaderboard", "/fairness", "/suspicious"]
    pages += [f"/players/{quote(p, safe='')}" for p in PLAYERS]
    matches = client.get("/api/matches").json()["matches"]
    pages += [f"/matches/{m['match']}" for m in matches] + [f"/matches/{matches[0]['match']}/hands/1"]
    for url in pages:
        html = client.get(url).text
        for ch in HIDDEN:
            assert ch not in html, (url, ch)
    players = client.get("/players").text
    assert "p-jose⟨U+200B⟩" in players
    assert "p-jоse ⟨mixed scripts: Latin, Cyrillic⟩" in players
    assert "abc⟨U+202E⟩def" in players


def test_search_folds_case_accents_and_forms(client: TestClient) -> None:
    for q in ("jose nunez", "JOSÉ NÚÑEZ", unicodedata.normalize("NFD", "José"), "Ｊｏｓé"):
        got = {p["player"] for p in client.get("/api/players", params={"q": q}).json()["players"]}
        assert set(list(PLAYERS)[:3]) <= got, q
    got = {p["player"] for p in client.get("/api/players", params={"q": "p-jose"}).json()["players"]}
    assert {"p-jose", "p-jose\u200b"} <= got


def test_fairness_and_suspicious_warn_of_names_alike(client: TestClient) -> None:
    for url in ("/fairness", "/suspicious"):
        html = client.get(url).text
        assert "Look-alike players" in html, url
        for p in list(PLAYERS)[:3]:
            assert quote(p, safe="") in html, (url, p)
        assert "p-rlo" not in html.split("Look-alike players")[1].split("</p>")[0]


def test_a_search_box_keeps_the_query_as_typed(client: TestClient) -> None:
    """The mark for mixed scripts is for reading: the query in the box is the
    one typed, so that submitting it again finds the same players."""
    q = "p-jоse"  # a Cyrillic о
    html = client.get("/players", params={"q": q}).text
    assert f'name="q" value="{q}"' in html  # (no invisible character in it to write as a reference)
    again = {p["player"] for p in client.get("/api/players", params={"q": q}).json()["players"]}
    assert "p-jоse" in again


def test_the_leaderboard_search_folds_too(client: TestClient) -> None:
    """The ratings list's search compares as the players list's does."""
    for q in ("jose", "JOSÉ", unicodedata.normalize("NFD", "josé")):
        html = client.get("/leaderboard", params={"q": q, "bots": "true"}).text
        api = client.get("/api/leaderboard", params={"q": q, "bots": "true"})
        got = {r["player"] for r in api.json()["rows"]}
        assert {"p-jose", "p-jose\u200b"} <= got, (q, got)
        assert "José Núñez" in html, q
