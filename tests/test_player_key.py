"""A player's own key (api.player_key): it answers that player's training
positions and puzzles, and nothing else; the token still does everything."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.player_key import player_key
from replay.ingest import ingest
from tests.test_analysis import INTL

TOKEN = "player-key-token-5678"
MATCH = "m-example-1"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from api.app import create_app

    path = tmp_path_factory.mktemp("pkey") / "data" / "replay.duckdb"
    path.parent.mkdir(parents=True)
    ingest([str(INTL)], db=path, workers=0, analysis=(6, 0))  # sampled: puzzles need it
    with TestClient(create_app(path, token=TOKEN)) as c:
        yield c


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _decision(client: TestClient, seat: int) -> dict[str, Any]:
    """A training answer's body: a decision (not forced) of the player at `seat` in hand 1."""
    twin = client.get(f"/api/matches/{MATCH}/hands/1").json()
    p = next(p for p in twin["info"]["analysis"]["plies"] if p["seat"] == seat and not p["forced"])
    player = next(s["player"] for s in client.get(f"/api/matches/{MATCH}").json()["seats"] if s["seat"] == seat)
    return {"match": MATCH, "hand": 1, "ply": p["ply"], "move": p["alternatives"][0]["move"], "player": player}


def test_the_token_holder_gets_a_players_key(client: TestClient) -> None:
    body = _decision(client, 0)
    got = client.post("/api/train/key", json={"player": body["player"]}, headers=_bearer(TOKEN))
    assert got.status_code == 200
    j = got.json()
    assert j["key"] == player_key(TOKEN, body["player"]) and j["key"] in j["header"]
    assert "/api/train/answer" in j["writes"]
    # only the token gets keys: not a player's key, not nobody
    assert client.post("/api/train/key", json={"player": body["player"]}).status_code == 401
    assert client.post("/api/train/key", json={"player": body["player"]}, headers=_bearer(j["key"])).status_code == 401
    assert client.post("/api/train/key", json={"player": "nobody-here"}, headers=_bearer(TOKEN)).status_code == 404


def test_a_players_key_answers_as_that_player(client: TestClient) -> None:
    body = _decision(client, 1)
    key = player_key(TOKEN, body["player"])
    got = client.post("/api/train/answer", json=body, headers=_bearer(key))
    assert got.status_code == 200, got.text
    assert got.json()["schedule"]["answers"] == 1
    cards = client.get("/api/train", params={"player": body["player"]}).json()["cards"]
    assert [(c["match"], c["ply"]) for c in cards] == [(MATCH, body["ply"])]


def test_a_wrong_key_or_another_players_is_refused(client: TestClient) -> None:
    mine, theirs = _decision(client, 2), _decision(client, 3)
    assert mine["player"] != theirs["player"]
    before = client.get("/api/train", params={"player": mine["player"]}).json()["counts"]["cards"]
    # another player's key, for my answer
    assert client.post("/api/train/answer", json=mine, headers=_bearer(player_key(TOKEN, theirs["player"]))
                       ).status_code == 403  # fmt: skip
    # a key of my name under another token (a made-up key of the right shape)
    assert client.post("/api/train/answer", json=mine, headers=_bearer(player_key("not-the-token", mine["player"]))
                       ).status_code == 403  # fmt: skip
    # no key, or something that is not a key at all
    assert client.post("/api/train/answer", json=mine).status_code == 401
    assert client.post("/api/train/answer", json=mine, headers=_bearer("pk-nothex")).status_code == 401
    assert client.post("/api/train/answer", json=mine, headers={"Authorization": f"Basic {player_key(TOKEN, mine['player'])}"}
                       ).status_code == 401  # fmt: skip
    after = client.get("/api/train", params={"player": mine["player"]}).json()["counts"]["cards"]
    assert after == before  # nothing was written
    # the token still answers for anyone
    assert client.post("/api/train/answer", json=mine, headers=_bearer(TOKEN)).status_code == 200


def test_a_players_key_makes_no_other_write(client: TestClient) -> None:
    body = _decision(client, 0)
    key = player_key(TOKEN, body["player"])
    assert client.delete(f"/api/matches/{MATCH}", headers=_bearer(key)).status_code == 401
    assert client.post("/api/upload", headers=_bearer(key), files={"file": ("x.jsonl", b"{}\n")}).status_code == 401
    assert client.get(f"/api/matches/{MATCH}").status_code == 200


def test_a_puzzle_answer_with_a_key_names_its_player(client: TestClient) -> None:
    p = client.get("/api/puzzles").json()["puzzles"][0]
    body = {"match": p["match"], "hand": p["hand"], "ply": p["ply"], "move": p["moves"][0]}
    key = player_key(TOKEN, "someone")
    assert client.post("/api/puzzles/answer", json=body, headers=_bearer(key)).status_code == 422
    assert client.post("/api/puzzles/answer", json={**body, "player": "someone-else"}, headers=_bearer(key)).status_code == 403
    assert client.post("/api/puzzles/answer", json={**body, "player": "someone"}, headers=_bearer(key)).status_code == 200


def test_the_openapi_document_names_both_schemes(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert set(doc["components"]["securitySchemes"]) >= {"token", "playerKey"}
    for path in ("/api/train/answer", "/api/puzzles/answer"):
        assert doc["paths"][path]["post"]["security"] == [{"token": []}, {"playerKey": []}]
    assert doc["paths"]["/api/train/key"]["post"]["security"] == [{"token": []}]


def test_the_command_prints_the_same_key() -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "REPLAY_TOKEN": TOKEN}
    got = subprocess.run([sys.executable, "-m", "replay", "train-key", "p-1"], capture_output=True, text=True,
                         env=env, check=True)  # fmt: skip
    assert got.stdout.strip() == player_key(TOKEN, "p-1")
    none = subprocess.run([sys.executable, "-m", "replay", "train-key", "p-1"], capture_output=True, text=True,
                          env={**env, "REPLAY_TOKEN": ""})  # fmt: skip
    assert none.returncode == 2 and "REPLAY_TOKEN" in none.stderr
