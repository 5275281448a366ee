"""An uploaded log is graded as `replay ingest` grades it, and the answer says
how far the grading is and when the rest comes."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from replay.accel import native
from tests.test_api import SAMPLES

TOKEN = "upload-token"


@pytest.mark.skipif(native is None, reason="the pure-Python solver does not grade at upload")
def test_an_upload_is_graded_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with TestClient(create_app(tmp_path / "data" / "replay.duckdb", token=TOKEN)) as c:
        r = c.post("/api/upload", files={"file": ("pagat.jsonl", (SAMPLES / "pagat.jsonl").read_bytes())},
                   headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200, r.text
        body = r.json()
        moves = c.get("/api/moves", params={"match": body["matches"][0]["match"], "per_page": 5000}).json()
    assert body["matches"] and all(
        m["analysis"]["finished"] > 0 and m["analysis"]["graded"] == m["analysis"]["finished"]
        and m["analysis"]["sampled"] == 0 for m in body["matches"])
    # no sampling in this app: the answer says who adds the rest
    assert body["analysis"].startswith("Every move is graded under perfect information.")
    assert "not made by this server" in body["analysis"]
    assert all(m["value"] is not None for m in moves["moves"] if m["kind"] == "play")


def test_a_wrong_token_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with TestClient(create_app(tmp_path / "data" / "replay.duckdb", token=TOKEN)) as c:
        r = c.post("/api/upload", files={"file": ("pagat.jsonl", b"{}")}, headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert c.get("/api/summary").json()["counts"]["log_files"] == 0


def test_a_large_upload_is_left_to_the_background_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import api.routes.upload as upload

    monkeypatch.setattr(upload, "GRADE_INLINE", 1000)  # pagat.jsonl is larger
    (tmp_path / "data").mkdir()
    with TestClient(create_app(tmp_path / "data" / "replay.duckdb", token=TOKEN)) as c:
        body = c.post("/api/upload", files={"file": ("pagat.jsonl", (SAMPLES / "pagat.jsonl").read_bytes())},
                      headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert body["matches"] and all(m["analysis"]["graded"] == 0 < m["analysis"]["finished"]
                                   for m in body["matches"])
    # this app samples nothing in the background: the answer says who grades them
    assert body["analysis"].startswith("Some hands are not graded yet.")
    assert "operator" in body["analysis"]
