"""The live fairness monitor: quiet on fair tables, an alert on a broken one, posted to the operator."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from replay.ingest import ingest
from replay.simulate import SimConfig, simulate, write_lines
from reports import derived, monitor, shufflers

CFG = SimConfig(profiles=("international",), hands=640, seed=3, tables=1, players_pool=8)


class Receiver:
    """A local HTTP server that keeps the JSON bodies POSTed to it."""

    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []
        got = self.got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/alerts"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def fair_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("monitor")
    write_lines(simulate(CFG), d / "a.jsonl")
    derived.subscribe()
    ingest([str(d / "a.jsonl")], db=d / "replay.duckdb", workers=0)
    return d / "replay.duckdb"


def test_a_fair_table_is_checked_after_the_load_and_raises_nothing(fair_store: Path) -> None:
    conn = duckdb.connect(str(fair_store), read_only=True)
    try:
        (row,) = conn.execute("SELECT table_id, deals, verdict FROM fairness_monitor").fetchall()
        assert row[1] >= monitor.MIN_DEALS and row[2] == "PASS"
        assert conn.execute("SELECT count(*) FROM fairness_alerts").fetchone() == (0,)
    finally:
        conn.close()


@pytest.fixture()
def broken_store(fair_store: Path, tmp_path: Path) -> Path:
    """A copy of the store whose deals a lazy shuffler made: each the last after 20 swaps."""
    shutil.copytree(fair_store.parent, tmp_path / "data")
    db = tmp_path / "data" / "replay.duckdb"
    conn = duckdb.connect(str(db))
    keys = conn.execute("SELECT match, hand FROM hands ORDER BY started, match, hand").fetchall()
    decks = shufflers.batch_lazy_reshuffle(np.random.default_rng(1), len(keys), 28)
    conn.executemany(
        "UPDATE hands SET dealt = ? WHERE match = ? AND hand = ?",
        [([d[7 * s : 7 * s + 7].tolist() for s in range(4)], m, h) for d, (m, h) in zip(decks, keys, strict=True)],
    )
    conn.execute("DELETE FROM fairness_monitor")  # as if the monitor had never looked
    conn.close()
    return db


def test_a_broken_table_raises_an_alert_posted_to_the_operator(
    broken_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = Receiver()
    monkeypatch.setenv(monitor.ALERT_URL_ENV, receiver.url)
    conn = duckdb.connect(str(broken_store))
    try:
        assert monitor.watch(conn) == 1
        assert monitor.watch(conn) == 0  # no new deals: not checked again
        (alert,) = monitor.alerts(conn)
    finally:
        conn.close()
        receiver.close()
    assert alert["posted"] is True and alert["post_error"] is None
    assert any(t["name"].startswith("same_position") for t in alert["tests"])
    (body,) = receiver.got
    assert body["table"] == alert["table"] and body["alert"] == alert["alert"] and body["alpha"] == monitor.ALPHA
    with TestClient(create_app(broken_store)) as client:
        got = client.get("/api/fairness/alerts").json()
        assert got["alerts"][0]["table"] == alert["table"]
        assert got["monitor"]["expected_false_alarms_a_year"] < 1
        page = client.get("/fairness").text
        assert 'role="alert"' in page and alert["table"] in page


def test_a_receiver_that_is_down_is_recorded(broken_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(monitor.ALERT_URL_ENV, "http://127.0.0.1:9/nobody")
    conn = duckdb.connect(str(broken_store))
    try:
        assert monitor.watch(conn) == 1
        (alert,) = monitor.alerts(conn)
    finally:
        conn.close()
    assert alert["posted"] is False and alert["post_error"]


def test_the_level_keeps_a_busy_fair_table_under_one_alarm_a_year() -> None:
    assert monitor.expected_false_alarms_a_year() < 1
    window = shufflers.simulate_window("fair", monitor.WINDOW, np.random.default_rng(8), tables=1)
    assert monitor.check_window(window).verdict == "PASS"
    assert monitor.last_deals(window, 100).n_deals == 100
