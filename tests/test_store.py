"""The store: schema and migrations, the spool and its loader, thin reads.

Reports are built by hand here; tests/test_ingest.py drives real logs.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from replay import moves
from replay.findings import Finding, HandReport, MatchReport, MoveRecord, SeatRecord
from replay.store import (
    NUMBERED,
    PLAYER_TABLES,
    BatchRefused,
    HeldRows,
    Refusal,
    StoreLocked,
    arrow_on_malloc,
    clean_tmp,
    derive_player_rows,
    get_findings,
    get_hands,
    get_match,
    get_moves,
    layout,
    load_batch,
    load_batches,
    load_spool,
    migrate,
    migrations,
    open_store,
    pending_batches,
    refusals,
    schema_version,
    table_counts,
    write_batch,
)
from replay.store.rows import (
    SCHEMAS,
    Frames,
    file_table,
    findings_table,
    pass_counts,
)

TS = "2026-11-01T10:00:00.000Z"


def check_schemas() -> None:
    """Raise if an Arrow schema of replay.store.rows does not name exactly the
    columns of its SQL table (the tests call it)."""
    conn = duckdb.connect(config={"python_enable_replacements": False})
    migrate(conn)
    for name, schema in SCHEMAS.items():
        table = "findings" if name == "file_findings" else name
        cols = [r[0] for r in conn.execute(f"DESCRIBE {table}").fetchall()]
        if table in NUMBERED:
            cols.remove("mno")  # the loader's
        if table == "matches":
            cols.remove("analysis_body")  # packed by the writers of the analysis rows (migration 022)
        if sorted(cols) != sorted(schema.names):
            raise AssertionError(f"{name}: SQL {cols} vs Arrow {schema.names}")


def move(hand: int, ply: int, seat: int, tile: int | None, kind: str = "play") -> MoveRecord:
    return MoveRecord(
        hand=hand, ply=ply, seq=10 * hand + ply, seat=seat, kind=kind,  # type: ignore[arg-type]
        tile=tile, end=None if ply == 1 else "left", left=6, right=3, pips=(10, 20),
        stock=0, legal=2, forced=False, legal_moves=("63:left", "PASS"), ts=TS,
    )  # fmt: skip


def report(
    mid: str,
    *,
    anchor: str = "a" * 64,
    seeds: tuple[str, ...] = ("b" * 64,),
    players: tuple[tuple[str, str | None], ...] = (("p-1", "Ann"), ("p-2", None)),
    findings: tuple[Finding, ...] = (),
    started: str = TS,
    rematch_of: str | None = None,
) -> MatchReport:
    hands = tuple(
        HandReport(
            hand=i + 1, result="domino", winner=0, points=(10, 0), score=(10 * (i + 1), 0),
            leader=i % 2, opener=i % 2, hands=((27, 1), (2, 3)), stock=(4, 5), pips=(0, 5),
            client_seeds=("", "c1"), server_seed=seed, seed_ok=True, deal_ok=True,
            claimed_result="domino", claimed_winner=0, claimed_points=(10, 0),
            claimed_score=(10 * (i + 1), 0), started=TS, ended=TS,
            moves=(move(i + 1, 1, 0, 21), move(i + 1, 2, 1, None, "pass")),
        )
        for i, seed in enumerate(seeds)
    )  # fmt: skip
    errors = any(f.severity == "error" for f in findings)
    return MatchReport(
        match=mid, verdict="invalid" if errors else "valid", profile="international",
        table="t-1", rules={"players": 2}, players=2, hands=hands, result="win", winner=0,
        score=(10 * len(hands), 0), findings=findings,
        seats=tuple(SeatRecord(s, p, n) for s, (p, n) in enumerate(players)),
        anchor=anchor, rematch_of=rematch_of, started=started, ended=started, events=7,
        lead_draw=((0, 27), (1, 3)),
    )  # fmt: skip


def spool(
    spool_dir: Path, batch: str, reports: list[MatchReport], sha: str = "f1", mode: str = "add",
    *, players: bool = True,
) -> Path:
    """A batch of `reports`; without its player rows (as spooled before
    replay.store.player_rows) unless `players`."""
    frames = Frames(batch, {})
    for r in reports:
        frames.add(r, {sha: r.events})
    tables = frames.tables()
    if not players:
        for t in PLAYER_TABLES:
            del tables[t]
    return write_batch(spool_dir, batch, tables, {"mode": mode, "files": {}})


@pytest.fixture
def store(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    conn = open_store(tmp_path / "data" / "replay.duckdb")
    yield conn
    conn.close()


def spool_of(conn: duckdb.DuckDBPyConnection) -> Path:
    row = conn.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return layout(row[0][0]).spool


def rows(conn: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return conn.execute(sql).fetchall()


# -- schema --------------------------------------------------------------------


def test_fresh_store_has_every_migration_and_table(store: duckdb.DuckDBPyConnection) -> None:
    versions = [v for v, _, _ in migrations()]
    assert versions[0] == 1 and versions == sorted(set(versions))
    assert schema_version(store) == versions[-1]
    tables = {r[0] for r in rows(store, "SELECT table_name FROM information_schema.tables")}
    assert {"schema_version", "log_files", "matches", "seats", "hands", "moves", "findings",
            "players", "match_files", "seeds", "batches"} <= tables  # fmt: skip
    assert set(table_counts(store).values()) == {0}


def test_arrow_schemas_name_the_sql_columns() -> None:
    check_schemas()  # raises on any difference


def test_migration_009_keeps_the_replays_stored_uncompressed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store made up to 008 and filled keeps every replay body through 009,
    which stores the column without DuckDB compression (zstd bodies)."""
    import replay.store.schema as store_mod
    from replay.ingest import ingest

    every = migrations()
    # 011 and later too: today's ingest writes the seeds' lines, matches.analysis
    # and the ratings (none of them touches a replay)
    monkeypatch.setattr(store_mod, "migrations", lambda: [m for m in every if m[0] <= 8 or m[0] >= 11])
    data = tmp_path / "data"
    data.mkdir()
    db = data / "replay.duckdb"
    ingest([str(Path(__file__).resolve().parent.parent / "sample_logs")], db=db, workers=0)
    conn = open_store(db)
    before = rows(conn, "SELECT match, replay FROM matches ORDER BY match")
    conn.close()
    assert len(before) > 20 and all(r[1] is not None for r in before)
    monkeypatch.setattr(store_mod, "migrations", lambda: every)
    conn = open_store(db)
    try:
        assert schema_version(conn) == every[-1][0] >= 9
        assert rows(conn, "SELECT match, replay FROM matches ORDER BY match") == before
        conn.execute("CHECKPOINT")
        kinds = {r[0] for r in rows(conn, "SELECT DISTINCT compression FROM pragma_storage_info('matches') "
                                         "WHERE column_name = 'replay'")}
        assert kinds <= {"Uncompressed", "Constant"} and "Uncompressed" in kinds
    finally:
        conn.close()


def test_migrate_twice_applies_nothing(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    open_store(db).close()
    conn = duckdb.connect(str(db))
    assert migrate(conn) == []
    assert rows(conn, "SELECT count(*) FROM schema_version") == [(len(migrations()),)]
    conn.close()


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    open_store(db).close()
    conn = duckdb.connect(str(db))
    conn.execute("INSERT INTO schema_version VALUES (999, 'future', now())")
    conn.close()
    with pytest.raises(RuntimeError, match="999"):
        open_store(db)


def test_read_only_needs_a_store(tmp_path: Path) -> None:
    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    with pytest.raises(RuntimeError, match="not a replay store"):
        open_store(tmp_path / "empty.duckdb", read_only=True)


def test_a_database_held_by_another_process_is_locked(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    open_store(db).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys
            c = duckdb.connect({str(db)!r})
            print("held", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLocked):
            open_store(db)
    finally:
        holder.communicate("")
    open_store(db).close()  # free again


# -- frames --------------------------------------------------------------------


def test_pass_counts_cover_every_seat_and_any_higher_one() -> None:
    pas = [move(1, 2, 1, None, "pass"), move(1, 3, 1, None, "pass"), move(1, 4, 0, 5)]
    assert pass_counts(pas, 4) == [0, 2, 0, 0]
    assert pass_counts(pas, None) == [0, 2]
    assert pass_counts([move(1, 1, 3, None, "pass")], 2) == [0, 0, 0, 1]


def test_move_codes_round_trip() -> None:
    for c in moves.CODES:
        assert moves.code(moves.name(c)) == c
        if c >= 0:  # either half first reads back the same
            tile, end = moves.name(c).split(":")
            assert moves.code(f"{tile[::-1]}:{end}") == c
    assert len(set(moves.CODES)) == 28 * 2 + 3


def test_frames_carry_every_report_value() -> None:
    f = Finding("FALSE_PASS", "seat 1 could play", 1, 12, "x.jsonl", 14, match="m-1")
    frames = Frames("b-1", {"x.jsonl": "sha-x"})
    # where the seeds were read: the anchor in match_start (hand 0), hand 1's in its reveal
    where = ((0, "x.jsonl", 1), (1, "x.jsonl", 9))
    frames.add(dataclasses.replace(report("m-1", findings=(f,)), seed_lines=where), {"sha-x": 7})
    t = frames.tables()
    m = t["matches"].to_pylist()[0]
    assert (m["verdict"], m["errors"], m["warnings"], m["hands"], m["first_leader"]) == ("invalid", 1, 0, 1, 0)
    assert m["lead_draw"] == [{"seat": 0, "tile": 27}, {"seat": 1, "tile": 3}]
    h = t["hands"].to_pylist()[0]
    assert h["dealt"] == [[27, 1], [2, 3]] and h["plies"] == 2 and h["claimed_points"] == [10, 0]
    assert h["passes"] == [0, 1]  # seat 1 passed once
    assert (h["dealt_pips"], h["dealt_doubles"], h["dealt_tiles"]) == ([13, 5], [1, 0], [2, 2])
    mv = t["moves"].to_pylist()
    assert [x["kind"] for x in mv] == ["play", "pass"]
    assert mv[0]["legal_moves"] == [moves.code("63:left"), -1] and mv[0]["match"] == "m-1"
    assert mv[0]["ts"].isoformat() == "2026-11-01T10:00:00+00:00"
    fd = t["findings"].to_pylist()[0]
    assert (fd["severity"], fd["file"], fd["line"], fd["sha256"]) == ("error", "x.jsonl", 14, "sha-x")
    assert t["seeds"].to_pylist() == [
        {"seed": "a" * 64, "match": "m-1", "hand": 0, "file": "x.jsonl", "line": 1, "sha256": "sha-x"},
        {"seed": "b" * 64, "match": "m-1", "hand": 1, "file": "x.jsonl", "line": 9, "sha256": "sha-x"},
    ]
    assert t["match_files"].to_pylist() == [{"match": "m-1", "sha256": "sha-x", "lines": 7}]


# -- the spool -----------------------------------------------------------------


def test_a_batch_loads_once_and_leaves_the_spool(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    bdir = spool(sp, "b-0001", [report("m-1"), report("m-2", anchor="c" * 64, seeds=("d" * 64,))])
    assert pending_batches(sp) == [bdir]
    assert load_spool(store, sp) == 1
    assert not bdir.exists() and pending_batches(sp) == []
    counts = table_counts(store)
    assert (counts["matches"], counts["hands"], counts["moves"], counts["seeds"]) == (2, 2, 4, 4)
    assert rows(store, "SELECT batch, mode, matches FROM batches") == [("b-0001", "add", 2)]
    # The same batch id again (e.g. written twice by a killed run): skipped.
    spool(sp, "b-0001", [report("m-3", anchor="e" * 64, seeds=("f" * 64,))])
    assert load_spool(store, sp) == 0
    assert table_counts(store)["matches"] == 2 and pending_batches(sp) == []


def test_a_spool_loads_on_malloc_and_the_pool_is_given_back_by_the_last_user(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's loads take Arrow's buffers from malloc too (mimalloc kept
    what a load freed), and overlapping users put the default pool back only
    when the last one is out."""
    import replay.store.load as store_mod

    before = pa.default_memory_pool().backend_name
    assert before != "system"  # else this test proves nothing
    seen: list[str] = []
    real = store_mod._load_group

    def load(*args: object, **kwargs: object) -> int:
        seen.append(pa.default_memory_pool().backend_name)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_mod, "_load_group", load)
    sp = spool_of(store)
    spool(sp, "b-1", [report("m-1")])
    assert load_spool(store, sp) == 1 and seen == ["system"]
    assert pa.default_memory_pool().backend_name == before
    outer, inner = arrow_on_malloc(), arrow_on_malloc()
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)  # the first in goes out first: the other still runs on malloc
    assert pa.default_memory_pool().backend_name == "system"
    inner.__exit__(None, None, None)
    assert pa.default_memory_pool().backend_name == before
    with pytest.raises(ZeroDivisionError), arrow_on_malloc():
        1 / 0  # noqa: B018
    assert pa.default_memory_pool().backend_name == before


def test_a_batch_spooled_before_migration_002_gets_its_passes(store: duckdb.DuckDBPyConnection) -> None:
    """A batch spooled as Parquet by older code, its hands without `passes`: it loads
    (given to the loader: the spool takes only batches that prove themselves
    whole), and the passes are counted from its moves."""
    sp = spool_of(store)
    bdir = spool(sp, "b-old", [report("m-1"), report("m-2", anchor="c" * 64, seeds=("d" * 64, "e" * 64))])
    for part in bdir.glob("*.arrow"):  # the Parquet spool of before 2026-12-01
        with pa.memory_map(str(part)) as f:
            table = pa.ipc.open_file(f).read_all()
        if part.stem == "hands":
            table = table.drop_columns(["passes", "dealt_pips", "dealt_doubles", "dealt_tiles"])
        pq.write_table(table, part.with_suffix(".parquet"))
        part.unlink()
    assert load_batches(store, [bdir], sp.parent) == 1
    got = rows(store, "SELECT match, hand, passes, dealt_pips, dealt_doubles, dealt_tiles FROM hands ORDER BY match, hand")
    assert got == [(m, h, [0, 1], [13, 5], [1, 0], [2, 2]) for m, h in (("m-1", 1), ("m-2", 1), ("m-2", 2))]


def test_the_same_lines_again_change_nothing(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    spool(sp, "b-1", [report("m-1")])
    load_spool(store, sp)
    before = rows(store, "SELECT * FROM matches")
    # add mode: a match whose file the store has is left alone
    spool(sp, "b-2", [report("m-1", started="2026-11-02T00:00:00Z")])
    load_spool(store, sp)
    assert rows(store, "SELECT * FROM matches") == before
    # replace mode (reingest): the batch's rows win
    spool(sp, "b-3", [report("m-1", started="2026-11-02T00:00:00Z")], mode="replace")
    load_spool(store, sp)
    got = rows(store, "SELECT match, started::VARCHAR, batch FROM matches")
    assert got == [("m-1", "2026-11-02 00:00:00+00", "b-3")]
    assert table_counts(store)["hands"] == 1 and table_counts(store)["moves"] == 2


def test_seed_reuse_across_batches_marks_both_and_clears(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    spool(sp, "b-1", [report("m-1", anchor="a" * 64, seeds=("b" * 64,))], sha="f1")
    load_spool(store, sp)
    assert get_match(store, "m-1")["verdict"] == "valid"  # type: ignore[index]
    # m-2 reuses m-1's hand seed as its own hand-1 seed
    spool(sp, "b-2", [report("m-2", anchor="c" * 64, seeds=("B" * 64,))], sha="f2")
    load_spool(store, sp)
    got = rows(store, "SELECT match, hand, message FROM findings WHERE code = 'SEED_REUSED' ORDER BY match")
    assert got == [
        ("m-1", 1, "the seed of hand 1 is also used by match m-2"),
        ("m-2", 1, "the seed of hand 1 is also used by match m-1"),
    ]
    assert rows(store, "SELECT match, verdict, errors FROM matches ORDER BY match") == [
        ("m-1", "invalid", 1), ("m-2", "invalid", 1)]  # fmt: skip
    # m-2 fixed (replaced with its own seed): both valid again
    spool(sp, "b-3", [report("m-2", anchor="c" * 64, seeds=("d" * 64,))], sha="f2", mode="replace")
    load_spool(store, sp)
    assert rows(store, "SELECT count(*) FROM findings WHERE code = 'SEED_REUSED'") == [(0,)]
    assert rows(store, "SELECT match, verdict, errors FROM matches ORDER BY match") == [
        ("m-1", "valid", 0), ("m-2", "valid", 0)]  # fmt: skip


def test_players_follow_their_latest_name(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    spool(sp, "b-1", [report("m-1", players=(("p-1", "Ann"), ("p-2", None)))], sha="f1")
    spool(sp, "b-2", [report("m-2", anchor="c" * 64, seeds=("d" * 64,), started="2026-11-05T00:00:00Z",
                             players=(("p-1", "Ann B."), ("p-3", "Cy")))], sha="f2")  # fmt: skip
    assert load_spool(store, sp) == 2
    got = rows(store, "SELECT player, name, matches, first_seen::VARCHAR, last_seen::VARCHAR "
                      "FROM players ORDER BY player")  # fmt: skip
    assert got == [
        ("p-1", "Ann B.", 2, "2026-11-01 10:00:00+00", "2026-11-05 00:00:00+00"),
        ("p-2", None, 1, "2026-11-01 10:00:00+00", "2026-11-01 10:00:00+00"),
        ("p-3", "Cy", 1, "2026-11-05 00:00:00+00", "2026-11-05 00:00:00+00"),
    ]


def test_files_and_lines_of_no_match(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    now = None
    lf = file_table([{"sha256": "f1", "path": "a.jsonl", "paths": ["a.jsonl"], "size": 10,
                      "read_at": now, "lines": 3, "bad_lines": 1, "stored": "logs/f1.jsonl"}])  # fmt: skip
    bad = Finding("MALFORMED_LINE", "a.jsonl: line 2: not JSON", None, None, "a.jsonl", 2)
    ff = findings_table([(None, bad)], {"a.jsonl": "f1"})
    write_batch(sp, "b-1", {"log_files": lf, "file_findings": ff}, {"mode": "add"})
    load_spool(store, sp)
    assert rows(store, "SELECT path, lines, bad_lines FROM log_files") == [("a.jsonl", 3, 1)]
    assert [(f["code"], f["file"], f["line"], f["sha256"]) for f in get_findings(store, None)] == [
        ("MALFORMED_LINE", "a.jsonl", 2, "f1")]  # fmt: skip
    # the same file from another path: the path is remembered, nothing doubled
    lf2 = file_table([{"sha256": "f1", "path": "b.jsonl", "paths": ["b.jsonl"], "size": 10,
                       "read_at": now, "lines": 3, "bad_lines": 1, "stored": "logs/f1.jsonl"}])  # fmt: skip
    write_batch(sp, "b-2", {"log_files": lf2, "file_findings": ff}, {"mode": "add"})
    load_spool(store, sp)
    assert rows(store, "SELECT path, paths FROM log_files") == [("a.jsonl", ["a.jsonl", "b.jsonl"])]
    assert len(get_findings(store, None)) == 1


def test_half_written_batches_are_ignored_and_cleaned(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    (sp / "no-manifest").mkdir()
    dead = sp / ".tmp" / "b-9.999999999"  # no such pid
    dead.mkdir(parents=True)
    live = sp / ".tmp" / f"b-8.{os.getpid()}"  # being written by a live process
    live.mkdir()
    assert pending_batches(sp) == []
    assert load_spool(store, sp) == 0
    assert not dead.exists() and live.exists()
    lay = layout(sp.parent.parent / "replay.duckdb")
    copy = lay.logs / ".999999999.1.tmp"
    copy.write_bytes(b"half a log")
    clean_tmp(lay)
    assert not copy.exists()


def test_a_failing_batch_rolls_back_and_is_set_aside(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    bdir = spool(sp, "b-1", [report("m-1")])
    (bdir / "hands.arrow").write_bytes(b"not arrow")
    refused: list[Refusal] = []
    assert load_spool(store, sp, refused=refused) == 0
    assert set(table_counts(store).values()) == {0}  # nothing of it is left
    assert (sp / ".failed" / "b-1").is_dir() and pending_batches(sp) == []
    assert [r.batch for r in refused] == ["b-1"] and "hands.arrow" in refused[0].reason
    assert refusals(sp) == refused


def _ordered_batches(sp: Path) -> list[Path]:
    """Batches whose effects depend on their order: a match inserted and then
    replaced (its player rows must not double), a seed reused by a later
    batch's match, a player renamed by a later match."""
    later = "2026-11-05T00:00:00Z"
    renamed = (("p-1", "Ann B."), ("p-3", "Cy"))
    spool(sp, "b-1", [report("m-1"), report("m-2", anchor="c" * 64, seeds=("d" * 64,))], sha="f1")
    spool(sp, "b-2", [report("m-3", anchor="e" * 64, seeds=("B" * 64,), players=renamed, started=later)], sha="f2")
    spool(sp, "b-3", [report("m-2", anchor="c" * 64, seeds=("d" * 64, "f" * 64))], sha="f1", mode="replace")
    spool(sp, "b-4", [report("m-4", anchor="9" * 64, seeds=("8" * 64,), players=renamed)], sha="f3")
    return pending_batches(sp)


def _dump(conn: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Every table's rows, order-free, without the times of loading and migrating."""
    out = {}
    # player_order is bookkeeping: how many player rows were in order when last sorted
    for (t,) in rows(conn, "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                           "AND table_name <> 'player_order' ORDER BY 1"):  # fmt: skip
        cols = [c for (c, *_) in rows(conn, f"DESCRIBE {t}") if c not in ("loaded_at", "applied_at")]
        out[t] = sorted(map(repr, rows(conn, f"SELECT {', '.join(cols)} FROM {t}")))
    return out


def test_a_group_streamed_in_stores_what_a_list_stores_and_fails_as_one(
    store: duckdb.DuckDBPyConnection,
) -> None:
    """The ingest's loader hands its group over as the batches arrive: each
    is loaded as it comes, one commit at the end. A bad batch taken first
    (before the rest came) still sets only itself aside: the rest of the
    stream is taken, and stays pending for the next load (as in a list, the
    batches after a bad one are not loaded by the call that meets it)."""
    sp = spool_of(store)
    bad = spool(sp, "b-1", [report("m-1")])
    (bad / "hands.arrow").write_bytes(b"not arrow")
    spool(sp, "b-2", [report("m-2", anchor="c" * 64, seeds=("d" * 64,))])
    given: list[Path] = []

    def stream() -> Iterator[Path]:
        for b in pending_batches(sp):
            given.append(b)
            yield b

    with pytest.raises(BatchRefused):
        load_batches(store, stream(), sp.parent)
    assert len(given) == 2  # the stream was taken to its end
    assert (sp / ".failed" / "b-1").is_dir() and pending_batches(sp) == [sp / "b-2"]
    assert rows(store, "SELECT count(*) FROM matches") == [(0,)]
    spool(sp, "b-3", [report("m-3", anchor="e" * 64, seeds=("f" * 64,))])
    assert load_batches(store, iter(pending_batches(sp)), sp.parent) == 2
    assert rows(store, "SELECT match FROM matches ORDER BY 1") == [("m-2",), ("m-3",)]


def test_what_before_commit_raises_rolls_the_group_back_and_sets_nothing_aside(
    store: duckdb.DuckDBPyConnection,
) -> None:
    """``before_commit`` is the ingest's barrier (the kept copies must be
    durable): when it fails the batches are not at fault, so they stay
    pending, nothing of them is stored, and the next load takes them."""
    sp = spool_of(store)
    spool(sp, "b-1", [report("m-1")])
    spool(sp, "b-2", [report("m-2", anchor="c" * 64, seeds=("d" * 64,))])
    calls: list[int] = []

    def fail() -> None:
        calls.append(1)
        raise OSError("fsync failed")

    with pytest.raises(OSError, match="fsync failed"):
        load_batches(store, pending_batches(sp), sp.parent, before_commit=fail)
    assert calls == [1]  # not again batch by batch
    assert rows(store, "SELECT count(*) FROM matches") == [(0,)]
    assert not (sp / ".failed").exists() and len(pending_batches(sp)) == 2
    assert load_batches(store, pending_batches(sp), sp.parent, before_commit=lambda: None) == 2


def test_a_group_of_batches_stores_what_one_by_one_stores(tmp_path: Path) -> None:
    dumps = []
    for way in ("one", "group"):
        conn = open_store(tmp_path / way / "replay.duckdb")
        try:
            sp = spool_of(conn)
            bdirs = _ordered_batches(sp)
            if way == "one":
                assert all(load_batch(conn, b, sp.parent) for b in bdirs)
            else:
                assert load_batches(conn, bdirs, sp.parent) == 4
            assert pending_batches(sp) == []
            dumps.append(_dump(conn))
        finally:
            conn.close()
    one, group = dumps
    assert one == group
    assert len(group["batches"]) == 4 and len(group["player_held"]) == 10 and group["player_pending"] == []
    assert sum("SEED_REUSED" in r for r in group["findings"]) == 2
    assert any("'Ann B.'" in r for r in group["players"])


def test_a_sorted_run_bigger_than_a_row_group_keeps_each_row_group_one_stretch(
    store: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    """The set-aside player rows are sorted in Arrow and inserted with the
    insertion order not kept, on DuckDB's threads: each row group must still
    hold one stretch of the player order (the reports' reads prune the rest
    by min/max), only the row groups' own order may vary. 300,000 rows: a
    run of three row groups; files of 3 matches' rows in no order."""
    import numpy as np

    from replay.store import derive
    from replay.store.player_rows import HELD_SCHEMA, PLAYER_SEATS_SCHEMA

    rng = np.random.default_rng(7)
    files: dict[str, list[Path]] = {"player_seats": [], "player_held": []}
    matches = [f"m-{i:05d}" for i in range(3000)]
    for k in range(8):  # a run is 8 files
        n = 37_500
        mi = rng.integers(0, len(matches), n)
        cols = {
            "of_player": pa.array([f"p-{x:04d}" for x in rng.integers(0, 2000, n)]),
            "match": pa.array([matches[i] for i in mi]),
            "hand": pa.array(rng.integers(1, 60, n).astype("i4")),
            "seat": pa.array(rng.integers(0, 4, n).astype("i1")),
            "bot": pa.array(np.zeros(n, bool)),
        }
        for name, schema in (("player_held", HELD_SCHEMA), ("player_seats", PLAYER_SEATS_SCHEMA)):
            seats = {"seq": cols["hand"], "player": cols["of_player"], "from_hand": cols["hand"],
                     "to_hand": cols["hand"], "batch": cols["match"]}  # fmt: skip
            want = cols if name == "player_held" else {**cols, **seats}
            t = pa.table({f.name: want[f.name] if f.name in want else pa.nulls(n, f.type) for f in schema},
                         schema=pa.schema([f.with_nullable(True) for f in schema]))  # fmt: skip
            if name == "player_seats":
                t = t.slice(0, 1000)
            f = tmp_path / f"{k}.{name}.arrow"
            with pa.ipc.new_file(f, t.schema) as w:
                w.write_table(t)
            files[name].append(f)

    class Held:
        def __init__(self) -> None:
            self.files = files
            self.covers: dict[Path, frozenset[str]] = {}  # no file restricted to some matches

        def usable(self) -> list[str]:
            return matches

    store.execute("CREATE TEMP TABLE _pm AS SELECT unnest(?::VARCHAR[]) AS match", [matches])
    store.execute("BEGIN TRANSACTION")
    assert derive._insert_held(store, Held(), 0) == 300_000  # type: ignore[arg-type]
    store.execute("COMMIT")
    assert rows(store, "SELECT current_setting('preserve_insertion_order')") == [(True,)]
    assert rows(store, "SELECT count(*) FROM player_held") == [(300_000,)]
    # a player's rows lie together, in a row group (two where a stretch ends): a
    # player's page reads one. Which stretches share a row group is the
    # threads' to say (a thread slowed by a busy machine takes them out of
    # turn), so that is not asserted. In insertion order every player would
    # be in all 3 row groups.
    (most, mean), = rows(store, """SELECT max(n), avg(n) FROM (SELECT of_player, count(DISTINCT rowid // 122880) AS n
                                  FROM player_held GROUP BY 1)""")  # fmt: skip
    assert most <= 3 and mean < 1.2, (most, mean)
    assert rows(store, "SELECT count(*) FROM _pm") == [(0,)]  # all taken


def test_player_rows_the_batches_bring_are_inserted_as_derived(store: duckdb.DuckDBPyConnection) -> None:
    """Batches carry their player rows (replay.store.player_rows): a load sets them aside
    and the derivation inserts them instead of joining in SQL, the same rows
    as the SQL gives. A match written twice meanwhile is derived in SQL; a
    crash before the derivation leaves the marks (and the SQL) as before."""
    sp = spool_of(store)
    with HeldRows(sp) as held:
        spool(sp, "b-1", [report("m-1")])
        spool(sp, "b-2", [report("m-2", anchor="c" * 64, seeds=("d" * 64,))], sha="f2")
        assert load_batches(store, pending_batches(sp), sp.parent, derive=False, held=held) == 2
        spool(sp, "b-3", [report("m-2", anchor="c" * 64, seeds=("d" * 64, "e" * 64))], sha="f2", mode="replace")
        load_batches(store, pending_batches(sp), sp.parent, derive=False, held=held)
        assert rows(store, "SELECT match FROM player_pending ORDER BY 1") == [("m-1",), ("m-2",)]
        assert sorted(held.usable()) == ["m-1"] and len(held.files["player_held"]) == 3
        assert derive_player_rows(store, held=held) == 2
        assert rows(store, "SELECT count(*) FROM player_pending") == [(0,)]
        assert rows(store, "SELECT match, count(*) FROM player_held GROUP BY 1 ORDER BY 1") == [("m-1", 2), ("m-2", 4)]
    assert not held.where.exists()
    brought = {t: rows(store, f"SELECT * FROM {t} ORDER BY ALL") for t in PLAYER_TABLES}
    store.execute("INSERT INTO player_pending SELECT match FROM matches")
    for t in PLAYER_TABLES:
        store.execute(f"DELETE FROM {t}")
    assert derive_player_rows(store) == 2  # all in SQL
    assert {t: rows(store, f"SELECT * FROM {t} ORDER BY ALL") for t in PLAYER_TABLES} == brought


def test_player_rows_wait_for_their_derivation_which_a_crash_does_not_lose(
    store: duckdb.DuckDBPyConnection,
) -> None:
    """Batches without their player rows (spooled before replay.store.player_rows) mark
    their matches; the rows are derived in SQL, at once or by the next load."""
    sp = spool_of(store)
    spool(sp, "b-1", [report("m-1")], players=False)
    assert load_batches(store, pending_batches(sp), sp.parent, derive=False) == 1
    assert rows(store, "SELECT match FROM player_pending") == [("m-1",)]
    assert rows(store, "SELECT count(*) FROM player_held") == [(0,)]
    # as after a crash before the derivation: the next load derives them
    assert load_spool(store, sp) == 0
    assert rows(store, "SELECT count(*) FROM player_pending") == [(0,)]
    assert rows(store, "SELECT of_player, match, hand FROM player_held ORDER BY 1") == [
        ("p-1", "m-1", 1), ("p-2", "m-1", 1)]  # fmt: skip
    # a match replaced before its rows were derived: marked once, derived once
    spool(sp, "b-2", [report("m-2", anchor="c" * 64, seeds=("d" * 64,))], sha="f2", players=False)
    load_batches(store, pending_batches(sp), sp.parent, derive=False)
    spool(sp, "b-3", [report("m-2", anchor="c" * 64, seeds=("d" * 64, "e" * 64))], sha="f2", mode="replace",
          players=False)  # fmt: skip
    load_batches(store, pending_batches(sp), sp.parent, derive=False)
    assert rows(store, "SELECT match FROM player_pending") == [("m-2",)]
    assert derive_player_rows(store) == 1
    assert rows(store, "SELECT match, count(*) FROM player_held GROUP BY 1 ORDER BY 1") == [("m-1", 2), ("m-2", 4)]


def test_matches_are_numbered_in_the_order_stored(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    f = Finding("NOTE_MISMATCH", "notes differ", 1, 3, match="m-2")
    spool(sp, "b-1", [report("m-2", findings=(f,)), report("m-1", anchor="c" * 64, seeds=("d" * 64,))], sha="f1")
    spool(sp, "b-2", [report("m-3", anchor="e" * 64, seeds=("B" * 64,))], sha="f2")  # reuses m-2's seed
    load_spool(store, sp)
    assert rows(store, "SELECT match, mno FROM matches ORDER BY mno") == [("m-2", 1), ("m-1", 2), ("m-3", 3)]
    # a replaced match gets the next number
    spool(sp, "b-3", [report("m-2", seeds=("b" * 64, "f" * 64), findings=(f,))], sha="f1", mode="replace")
    load_spool(store, sp)
    assert rows(store, "SELECT match, mno FROM matches ORDER BY mno") == [("m-1", 2), ("m-3", 3), ("m-2", 4)]
    # every row of a match carries its number, SEED_REUSED findings too
    for t in ("seats", "hands", "moves", "findings"):
        assert rows(store, f"SELECT count(*) FROM {t} x JOIN matches m USING (match) "
                           "WHERE x.mno IS DISTINCT FROM m.mno") == [(0,)], t  # fmt: skip
        # and a number reads its match's rows only (the replay reads by number
        # alone): none left over from the replaced m-2, number 1
        assert rows(store, f"SELECT count(*) FROM {t} x LEFT JOIN matches m ON m.mno = x.mno "
                           "WHERE x.mno IS NOT NULL AND m.match IS DISTINCT FROM x.match") == [(0,)], t  # fmt: skip
    assert rows(store, "SELECT count(*) = count(DISTINCT mno) FROM matches") == [(True,)]
    # errors + warnings count a match's findings (the replay reads none when 0)
    assert rows(store, "SELECT match, errors + warnings, (SELECT count(*) FROM findings f "
                       "WHERE f.match = m.match) FROM matches m ORDER BY match") == [
        ("m-1", 0, 0), ("m-2", 2, 2), ("m-3", 1, 1)]  # fmt: skip
    assert rows(store, "SELECT code, mno FROM findings ORDER BY code, mno") == [
        ("NOTE_MISMATCH", 4), ("SEED_REUSED", 3), ("SEED_REUSED", 4)]  # fmt: skip


def test_a_bad_batch_in_a_group_sets_only_itself_aside(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    spool(sp, "b-1", [report("m-1")])
    bad = spool(sp, "b-2", [report("m-2", anchor="c" * 64, seeds=("d" * 64,))])
    (bad / "hands.arrow").write_bytes(b"not arrow")
    spool(sp, "b-3", [report("m-3", anchor="e" * 64, seeds=("f" * 64,))])
    with pytest.raises(BatchRefused):
        load_batches(store, pending_batches(sp), sp.parent)  # one group of three, then one by one
    assert rows(store, "SELECT match FROM matches") == [("m-1",)]
    # what did land has its player rows, the failure notwithstanding
    assert rows(store, "SELECT DISTINCT match FROM player_held") == [("m-1",)]
    assert rows(store, "SELECT count(*) FROM player_pending") == [(0,)]
    assert (sp / ".failed" / "b-2").is_dir() and pending_batches(sp) == [sp / "b-3"]
    assert load_spool(store, sp) == 1
    assert rows(store, "SELECT match FROM matches ORDER BY 1") == [("m-1",), ("m-3",)]


def test_thin_reads(store: duckdb.DuckDBPyConnection) -> None:
    sp = spool_of(store)
    f = Finding("NOTE_MISMATCH", "notes differ", 1, 3, match="m-1")
    spool(sp, "b-1", [report("m-1", seeds=("b" * 64, "c" * 64), findings=(f,))])
    load_spool(store, sp)
    m = get_match(store, "m-1")
    assert m is not None and m["verdict"] == "valid" and m["warnings"] == 1 and m["hands"] == 2
    assert get_match(store, "nope") is None
    assert [h["hand"] for h in get_hands(store, "m-1")] == [1, 2]
    moves = get_moves(store, "m-1", 2)
    assert [(x["ply"], x["kind"], x["tile"]) for x in moves] == [(1, "play", 21), (2, "pass", None)]
    assert [x["code"] for x in get_findings(store, "m-1")] == ["NOTE_MISMATCH"]


def test_an_owners_batch_stays_in_tmp_unsynced_and_goes_with_its_owner(
    store: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch for the process that loads it itself: no fsync, no rename into
    the spool, loaded by its path; left by a dead owner, the next load drops it."""
    import replay.store.spool as store_mod

    sp = spool_of(store)
    synced: list[Path] = []
    monkeypatch.setattr(store_mod, "fsync_path", lambda p: synced.append(p))
    frames = Frames("b-own", {})
    frames.add(report("m-1"), {"f1": 1})
    mine = write_batch(sp, "b-own", frames.tables(), {"mode": "add", "files": {}}, owner=os.getpid())
    assert mine == sp / ".tmp" / f"b-own.{os.getpid()}" and synced == []
    assert pending_batches(sp) == []  # nobody else loads it
    assert load_batches(store, [mine], sp.parent) == 1 and not mine.exists()
    assert table_counts(store)["matches"] == 1
    # a dead owner's batch (kill -9 before its load): dropped, not loaded
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    frames = Frames("b-dead", {})
    frames.add(report("m-2", anchor="c" * 64, seeds=("d" * 64,)), {"f2": 1})
    left = write_batch(sp, "b-dead", frames.tables(), {"mode": "add", "files": {}}, owner=int(dead))
    assert left.exists()
    assert load_spool(store, sp) == 0
    assert not left.exists() and table_counts(store)["matches"] == 1
    # without an owner the batch is synced and renamed into the spool, as before
    frames = Frames("b-any", {})
    frames.add(report("m-3", anchor="e" * 64, seeds=("f" * 64,)), {"f3": 1})
    shared = write_batch(sp, "b-any", frames.tables(), {"mode": "add", "files": {}})
    assert shared.parent == sp and synced and pending_batches(sp) == [shared]


def test_write_batch_skips_empty_tables(tmp_path: Path) -> None:
    empty = pa.table({"match": pa.array([], pa.string())})
    bdir = write_batch(tmp_path, "b-1", {"seats": empty}, {"mode": "add"})
    assert sorted(p.name for p in bdir.iterdir()) == ["manifest.json"]
