"""The server's spool loader skips its work while nothing changed: an empty
spool and the same store generation since a load last found nothing to do
(the reports' refresh it would run costs some 60 ms at a million hands)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import api.connection as connection
from api.connection import Store


def test_an_idle_tick_loads_nothing_until_the_store_or_the_spool_changes(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    store = Store(tmp_path / "replay.duckdb", spool)
    calls: list[int] = []

    def counted(cur: Any, where: Any) -> int:
        calls.append(store.generation)
        return 0

    monkeypatch.setattr(connection, "load_spool", counted)
    try:
        assert store.load() == 0 and len(calls) == 1  # the first always runs
        store.load()
        store.load()
        assert len(calls) == 1  # nothing changed: skipped
        store.bump()  # another writer (the background grader, a delete) changed the store
        store.load()
        assert len(calls) == 2
        store.load()
        assert len(calls) == 2
        store.load(force=True)  # an upload's load always runs
        assert len(calls) == 3
        batch = spool / "b-0001"  # a batch waiting in the spool
        batch.mkdir()
        (batch / "manifest.json").write_text("{}")
        store.load()
        assert len(calls) == 4
    finally:
        store.conn.close()


def test_a_change_made_during_a_load_is_seen_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    store = Store(tmp_path / "replay.duckdb", spool)
    calls: list[int] = []

    def bumping(cur: Any, where: Any) -> int:
        calls.append(1)
        if len(calls) == 1:
            store.bump()  # the grader wrote while the load ran
        return 0

    monkeypatch.setattr(connection, "load_spool", bumping)
    try:
        store.load()
        store.load()
        assert len(calls) == 2
        store.load()
        assert len(calls) == 2
    finally:
        store.conn.close()
