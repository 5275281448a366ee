"""What the store derives from the rows a load brought: SEED_REUSED and the
verdicts, ``players``, and the player tables (migrations 003 to 005, 010).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Final

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from replay.store import hooks
from replay.store.player_rows import player_rows
from replay.store.schema import after_migrating, match_ids, one, registered
from replay.store.spool import SPOOL_SUFFIX
from replay.validate.crossmatch import SeedUse, reused

if TYPE_CHECKING:
    from replay.store.load import BatchLoader

__all__ = [
    "Derived",
    "FILL_PASSES",
    "HELD_RUN_FILES",
    "HeldRows",
    "MAX_RUNS",
    "PLAYER_TABLES",
    "RESORT_MIN_ROWS",
    "RUN_ROWS",
    "derive_player_rows",
]


class HeldRows:
    """The player rows that loaded batches brought (replay.store.player_rows), set aside
    at each commit for one sorted insert when the player tables are derived
    (:func:`derive_player_rows`), instead of making them from the stored rows.

    The files wait in ``spool/.tmp/held-<id>.<pid>`` (a killed process's are
    dropped by the next load; its matches stay marked in ``player_pending``
    and are made from the stored rows). A match written more than once meanwhile, or
    written otherwise (validated again in the loader), is made from the stored rows too.
    Use as a context manager: the folder goes at the end.
    """

    def __init__(self, spool: Path) -> None:
        self.where = spool / ".tmp" / f"held-{id(self):x}.{os.getpid()}"
        self.files: dict[str, list[Path]] = {t: [] for t in PLAYER_TABLES}
        # the matches each file gives rows of: those its batch covered (the
        # file also holds rows of the batch's other matches, written later by
        # another batch of the same load, or left alone as already stored)
        self.covers: dict[Path, frozenset[str]] = {}
        self.taken: dict[str, int] = {}  # match -> times its rows were set aside
        self.others: set[str] = set()  # written otherwise since

    def __enter__(self) -> HeldRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.drop()

    def keep(self, loaders: Sequence[BatchLoader], covered: Mapping[str, int]) -> None:
        """After a group's commit: move aside each batch's player files and note
        the matches whose rows they hold."""
        for i, b in enumerate(loaders):
            mine = [m for m, j in covered.items() if j == i]
            if any(b.parts[t].suffix != SPOOL_SUFFIX for t in PLAYER_TABLES if t in b.parts):
                mine = []  # a Parquet batch: its rows are made from the stored rows
            self.others |= b.new - set(mine)
            if not mine:
                continue
            try:
                self.where.mkdir(parents=True, exist_ok=True)
                moved = []
                for t in PLAYER_TABLES:
                    target = self.where / f"{b.batch}.{t}{SPOOL_SUFFIX}"
                    os.replace(b.parts[t], target)
                    moved.append((t, target))
            except OSError:  # the batch is in; its rows are made from the stored rows
                self.others |= set(mine)
                continue
            for t, target in moved:
                self.files[t].append(target)
                self.covers[target] = frozenset(mine)
            for m in mine:
                self.taken[m] = self.taken.get(m, 0) + 1
                self.others.discard(m)

    def usable(self) -> list[str]:
        """The matches whose set-aside rows are their current rows."""
        return [m for m, n in self.taken.items() if n == 1 and m not in self.others]

    def drop(self) -> None:
        shutil.rmtree(self.where, ignore_errors=True)
        self.files = {t: [] for t in PLAYER_TABLES}
        self.covers.clear()
        self.taken.clear()
        self.others.clear()


def derive_player_rows(
    conn: duckdb.DuckDBPyConnection, *, reports: bool = True, held: HeldRows | None = None
) -> int:
    """Bring the player tables (migrations 003 to 005) up to date with the
    matches loaded since they were last derived (``player_pending``), in one
    transaction; the number of matches.

    A load only marks its matches: deriving them once for a whole ingest
    run (or :func:`load_spool` call) is one sorted insert instead of one a
    batch plus a re-sort. Until then a player report lacks those matches;
    a crash leaves the marks, and the next load derives them. Then (unless
    ``reports`` is false) the kept reports of the players it touched are
    worked out again (the :func:`replay.store.hooks.on_players` subscribers).
    """
    if not one(conn, "SELECT 1 FROM player_pending LIMIT 1"):
        # nothing to derive (the batches brought their rows, replay.store.player_rows): the
        # reports their matches made stale, or a store just migrated to 007 lacks
        if reports:
            with hooks.matches_changed_beside(conn):
                if one(conn, "SELECT 1 FROM player_held "
                             "WHERE of_player NOT IN (SELECT player FROM player_reports) LIMIT 1"):
                    hooks.players_changed(conn)
        return 0
    conn.execute("BEGIN TRANSACTION")
    try:
        had = one(conn, "SELECT count(*) FROM player_held")
        conn.execute(
            "CREATE OR REPLACE TEMP TABLE _pm AS SELECT DISTINCT match FROM player_pending "
            "WHERE match IN (SELECT match FROM matches)"
        )
        row = one(conn, "SELECT count(*) FROM _pm")
        n = int(row[0]) if row else 0
        before = int(had[0]) if had else 0
        if held is not None and held.taken:
            before = _insert_held(conn, held, before)  # the rows the batches brought
        if one(conn, "SELECT 1 FROM _pm LIMIT 1"):  # the others, from their stored rows
            _insert_stored(conn, before)
            conn.execute(_FORGET_REPORTS)
        conn.execute("DROP TABLE _pm")
        conn.execute("DELETE FROM player_pending")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            conn.execute("ROLLBACK")
        raise
    if reports:
        with hooks.matches_changed_beside(conn):
            hooks.players_changed(conn)
    return n


def _insert_held(conn: duckdb.DuckDBPyConnection, held: HeldRows, had: int) -> int:
    """Insert the set-aside rows of the pending matches (``_pm``) they cover,
    one sorted run per table, and take those matches out of ``_pm``; the
    number of player_held rows now."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(registered(conn, "_usable", match_ids(held.usable())))
        conn.execute(
            "CREATE OR REPLACE TEMP TABLE _fast AS SELECT match FROM _pm JOIN _usable USING (match)"
        )
        got = conn.sql("SELECT match FROM _fast")
        fast = got.to_arrow_table().column("match") if got is not None else pa.chunked_array([], pa.string())
        if len(fast):
            # A sorted run per HELD_RUN_FILES files, each of a row group or
            # more (_note_run). Arrow sorts a run in a thread while DuckDB
            # inserts the one before on all its threads: with the insertion
            # order not kept, each thread fills row groups of its own from
            # whole record batches, so every row group still holds one stretch
            # of the order (the groups' own order does not matter: a player's
            # rows are in one or two row groups of the run). On a spool of
            # 250,000 hands the player_held inserts took 1.2 s, not 2.3 s
            # (DuckDB's ORDER BY keeps the order and inserts on one thread).
            step = HELD_RUN_FILES
            runs = [(k, t) for k in range(0, len(held.files["player_held"]), step) for t in PLAYER_TABLES]
            sorter = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="replay-sort"))

            def sort(i: int) -> Future[pa.Table] | None:
                if i == len(runs):
                    return None
                k, t = runs[i]
                files = held.files[t][k : k + step]
                return sorter.submit(_sorted_run, files, t, fast, [held.covers.get(f) for f in files])

            keep = one(conn, "SELECT current_setting('preserve_insertion_order')")
            conn.execute("SET preserve_insertion_order = false")
            stack.callback(conn.execute, f"SET preserve_insertion_order = {bool(keep and keep[0])}")
            ahead = sort(0)
            for i, (_, t) in enumerate(runs):
                this, ahead = ahead, sort(i + 1)
                assert this is not None
                with registered(conn, f"_held_{t}", this.result()) as src:
                    conn.execute(f"INSERT INTO {t} BY NAME SELECT * FROM {src}")
                del this  # (ingest has Arrow on malloc: the run's memory goes back)
                if t == PLAYER_TABLES[-1]:
                    after = one(conn, "SELECT count(*) FROM player_held")
                    now = int(after[0]) if after else 0
                    _note_run(conn, had, now - had)
                    had = now
            conn.execute(_FORGET_REPORTS.replace("_pm", "_fast"))
            conn.execute("DELETE FROM _pm WHERE match IN (SELECT match FROM _fast)")
        conn.execute("DROP TABLE _fast")
    return had


def _insert_stored(conn: duckdb.DuckDBPyConnection, had: int) -> int:
    """Insert the player rows of the pending matches (``_pm``), made from their
    stored ``matches``, ``seats`` and ``hands`` rows by the workers' own
    :func:`~replay.store.player_rows.player_rows`, in sorted runs of
    :data:`STORED_RUN_MATCHES` matches; the number of player_held rows now."""
    pending = [m for (m,) in conn.execute("SELECT match FROM _pm ORDER BY match").fetchall()]
    for k in range(0, len(pending), STORED_RUN_MATCHES):
        with registered(conn, "_run", match_ids(pending[k : k + STORED_RUN_MATCHES])):
            parts = [
                conn.sql(f"SELECT {cols} FROM {t} WHERE match IN (SELECT match FROM _run)").to_arrow_table()
                for t, cols in _STORED_COLUMNS.items()
            ]
        rows = player_rows(*parts)
        for t in PLAYER_TABLES:
            keys = [(c.strip(), "ascending") for c in _PLAYER_ORDER[t].split(",")]
            run = rows[t].take(pc.sort_indices(rows[t], sort_keys=keys))
            with registered(conn, "_stored", run):
                conn.execute(f"INSERT INTO {t} BY NAME SELECT * FROM _stored")
        after = one(conn, "SELECT count(*) FROM player_held")
        now = int(after[0]) if after else 0
        _note_run(conn, had, now - had)
        had = now
    return had


#: What :func:`~replay.store.player_rows.player_rows` reads of the stored tables.
_STORED_COLUMNS: Final = {
    "matches": "match, profile, rules, result, winner, notes, batch",
    "seats": "match, seat, player, name, bot, from_hand, seq",
    "hands": "match, hand, result, winner, points, notes, passes, dealt_pips, dealt_doubles, dealt_tiles, "
             "started",
}  # fmt: skip
#: Matches whose player rows are made from the stored rows at once (one sorted run).
STORED_RUN_MATCHES: Final = 20_000


def _sorted_run(
    files: Sequence[Path], table: str, fast: pa.ChunkedArray,
    covers: Sequence[frozenset[str] | None] | None = None,
) -> pa.Table:
    """The rows of ``files`` whose match is in ``fast`` (and, with ``covers``,
    among the matches each file gives rows of, where known), in ``table``'s
    order, in record batches of a row group each.

    >>> import tempfile
    >>> rows = pa.table({"of_player": ["q", "p", "p"], "match": ["m", "n", "m"], "hand": [1, 1, 2],
    ...                  "seat": [0, 0, 1]})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d) / "a.arrow"
    ...     with pa.ipc.new_file(f, rows.schema) as w:
    ...         w.write_table(rows)
    ...     run = _sorted_run([f], "player_held", pa.chunked_array([["m"]]))
    >>> run.select(["of_player", "match", "hand"]).to_pylist()
    [{'of_player': 'p', 'match': 'm', 'hand': 2}, {'of_player': 'q', 'match': 'm', 'hand': 1}]
    """
    wanted = fast.combine_chunks()

    def rows(f: Path, covered: frozenset[str] | None) -> pa.Table:
        t = _read([f])
        if covered is not None:
            t = _only(t, pa.array(sorted(covered), pa.string()))
        return _only(t, wanted)

    if covers is None:
        t = _only(_read(files), wanted)
    else:
        t = pa.concat_tables([rows(f, c) for f, c in zip(files, covers, strict=True)])
    keys = [(k.strip(), "ascending") for k in _PLAYER_ORDER[table].split(",")]
    t = t.take(pc.sort_indices(t, sort_keys=keys))
    return pa.Table.from_batches(t.to_batches(max_chunksize=RUN_ROWS), schema=t.schema)


def _only(t: pa.Table, matches: pa.Array) -> pa.Table:
    """The rows of ``t`` whose match is one of ``matches``."""
    keep = pc.is_in(t["match"], value_set=matches)
    return t if pc.all(keep).as_py() else t.filter(keep)  # (a copy only when there is something to drop)


def _read(files: Sequence[Path]) -> pa.Table:
    """Arrow IPC files read into one table (read, not mapped: the memory goes
    with the table; a table, not a stream, so that DuckDB scans it on every
    thread)."""
    tables = []
    for f in files:
        with pa.OSFile(str(f)) as src:
            tables.append(pa.ipc.open_file(src).read_all())
    return pa.concat_tables(tables)


def _note_run(conn: duckdb.DuckDBPyConnection, had: int, added: int) -> None:
    """Book ``added`` player rows just appended in player order (to ``had``
    rows), and rewrite the tables in order when that is due (migration 010).

    Rows derived into empty tables are one sorted run. A run of at least
    :data:`RUN_ROWS` after rows all in order is in order too. The tables are
    sorted again once the rows of small runs are a quarter of them, or once
    more than :data:`MAX_RUNS` runs and as many rows as the last sort had came
    after it (a geometric schedule either way).
    """
    row = one(conn, "SELECT count(*) FROM player_held")
    rows = int(row[0]) if row else 0
    # by position: a store still being migrated may lack 010's columns
    width = len(conn.execute("SELECT * FROM player_order LIMIT 0").description or ())
    got = tuple(one(conn, "SELECT * FROM player_order") or ()) + (None, None, None)
    done = int(got[0] or 0)
    base = int(got[1]) if got[1] is not None else done
    runs = int(got[2] or 0)
    if had == 0:
        done = base = rows
        runs = 0
    elif added >= RUN_ROWS and done >= had:
        done = rows
        runs += 1
    done = min(done, rows)
    if rows >= RESORT_MIN_ROWS and ((rows - done) * 4 > rows or (runs > MAX_RUNS and rows > 2 * base)):
        for t, order in _PLAYER_ORDER.items():
            conn.execute(f"CREATE OR REPLACE TEMP TABLE _sorted AS SELECT * FROM {t} ORDER BY {order}")
            conn.execute(f"DELETE FROM {t}")
            conn.execute(f"INSERT INTO {t} SELECT * FROM _sorted")
            conn.execute("DROP TABLE _sorted")
        done = base = rows
        runs = 0
    conn.execute("DELETE FROM player_order")
    conn.execute(f"INSERT INTO player_order VALUES ({', '.join('?' * width)})", [done, base, runs][:width])


#: hands.passes counted from `moves` and the dealt_* summaries (as migration
#: 002 does) for the matches of the registered table ``_take`` lacking them.
FILL_PASSES: Final = """
UPDATE hands SET passes = b.passes
FROM (
    WITH c AS (
        SELECT match, hand, list({'seat': seat, 'n': n}) AS per, max(seat) + 1 AS top
        FROM (SELECT match, hand, seat, count(*) AS n FROM moves
              WHERE kind = 'pass' AND match IN (SELECT match FROM _take) GROUP BY ALL)
        GROUP BY ALL
    )
    SELECT h.match, h.hand,
           list_transform(
               range(greatest(coalesce(m.players, 0), coalesce(c.top, 0))),
               lambda s: coalesce(list_sum(list_transform(
                   list_filter(c.per, lambda e: e.seat = s), lambda e: e.n)), 0)
           )::SMALLINT[] AS passes
    FROM hands h
    LEFT JOIN matches m ON m.match = h.match
    LEFT JOIN c ON c.match = h.match AND c.hand = h.hand
    WHERE h.passes IS NULL AND h.match IN (SELECT match FROM _take)
) b
WHERE hands.match = b.match AND hands.hand = b.hand;

UPDATE hands SET
    dealt_pips = list_transform(dealt, lambda d: coalesce(list_sum(list_transform(d, lambda t:
        [0, 1, 2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 6, 7, 8, 9, 8, 9, 10, 10, 11, 12][t + 1])), 0)
    )::SMALLINT[],
    dealt_doubles = list_transform(dealt, lambda d: len(list_filter(d, lambda t: t IN (0, 7, 13, 18, 22, 25, 27))))::TINYINT[],
    dealt_tiles = list_transform(dealt, lambda d: len(d))::TINYINT[]
WHERE dealt_tiles IS NULL AND match IN (SELECT match FROM _take)
"""


#: The tables keyed by player (migrations 003 to 005), derived from seats, hands and matches.
PLAYER_TABLES: Final = ("player_seats", "player_held")

#: Their sort order; a table once its rows grew by a quarter (and past this
#: many) since it was last rewritten in that order.
_PLAYER_ORDER: Final = {
    "player_seats": "of_player, match, seq, seat",
    "player_held": "of_player, match, hand, seat",
}
RESORT_MIN_ROWS: Final = 50_000
#: A run of this many rows in player order (a DuckDB row group) needs no sort.
RUN_ROWS: Final = 122_880
#: Runs after the last sort before the next one (see _note_run).
MAX_RUNS: Final = 16
#: The set-aside player files (one a batch, about 40,000 player_held rows at
#: 10,000 hands a batch) sorted and inserted as one run (_insert_held).
HELD_RUN_FILES: Final = 8

#: A kept report (migration 007) is the report of the player tables as they
#: stand: whatever changes the player rows of the matches of ``_pm`` drops the
#: reports of the players seated in them, in the same transaction.
_FORGET_REPORTS: Final = """DELETE FROM player_reports WHERE player IN
    (SELECT DISTINCT of_player FROM player_seats WHERE match IN (SELECT match FROM _pm))"""


class Derived:
    """What a group of batches changes beyond its own rows, once for the group:
    SEED_REUSED with the verdicts, players, and the player tables (rows of
    deleted matches go; the new matches are marked in ``player_pending``,
    for :func:`derive_player_rows`)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, loaders: Sequence[BatchLoader]) -> None:
        self.conn = conn
        self.loaders = loaders
        self.new: set[str] = set().union(*(b.new for b in loaders))
        self.gone: set[str] = set().union(*(b.gone for b in loaders))
        self.old_seeds = [x for b in loaders for x in b.old_seeds]
        self.old_players = [x for b in loaders for x in b.old_players]
        # the loader whose player rows a new match takes: the last to write it
        self.covered: dict[str, int] = {}
        for i, b in enumerate(loaders):
            for m in b.with_players:
                self.covered[m] = i
            for m in b.without_players:
                self.covered.pop(m, None)

    def run(self) -> None:
        conn = self.conn
        if self.gone:
            with registered(conn, "_pm", match_ids(self.gone)):
                conn.execute(_FORGET_REPORTS)
                for t in (*PLAYER_TABLES, "player_pending"):
                    conn.execute(f"DELETE FROM {t} WHERE match IN (SELECT match FROM _pm)")
        if self.new:
            with registered(conn, "_pm", match_ids(self.new)):
                conn.execute("INSERT INTO player_pending SELECT match FROM _pm")
        if self.new or self.old_seeds or self.old_players:
            self._refresh()

    def _refresh(self) -> None:
        """SEED_REUSED findings, verdicts and players of what the batch touched."""
        conn = self.conn
        with (
            registered(conn, "_new", match_ids(self.new)),
            registered(conn, "_old_seeds", pa.table({"seed": pa.array(self.old_seeds, pa.string())})),
            registered(conn, "_old_players", pa.table({"player": pa.array(self.old_players, pa.string())})),
        ):
            conn.execute(
                "CREATE OR REPLACE TEMP TABLE _aseeds AS "
                "SELECT seed FROM _old_seeds UNION SELECT seed FROM seeds JOIN _new USING (match)"
            )
            # Matches whose SEED_REUSED may change: those sharing an affected
            # seed now, and those that had the finding through one.
            conn.execute(
                "CREATE OR REPLACE TEMP TABLE _amatch AS "
                "WITH shared AS (SELECT seed FROM seeds JOIN _aseeds USING (seed) "
                "  GROUP BY seed HAVING count(DISTINCT match) > 1) "
                "SELECT DISTINCT match FROM seeds JOIN shared USING (seed) "
                "UNION SELECT DISTINCT f.match FROM findings f WHERE f.code = 'SEED_REUSED' "
                "  AND f.match IN (SELECT match FROM seeds JOIN _aseeds USING (seed))"
            )
            conn.execute(
                "DELETE FROM findings WHERE code = 'SEED_REUSED' "
                "AND match IN (SELECT match FROM _amatch)"
            )
            self._seed_findings()
            conn.execute(
                "UPDATE matches SET errors = c.errors, warnings = c.warnings, verdict = CASE "
                "  WHEN matches.verdict = 'unreadable' THEN 'unreadable' "
                "  WHEN c.errors > 0 THEN 'invalid' ELSE 'valid' END "
                "FROM (SELECT a.match, count(f.code) FILTER (WHERE f.severity = 'error') AS errors, "
                "  count(f.code) FILTER (WHERE f.severity = 'warning') AS warnings "
                "  FROM _amatch a LEFT JOIN findings f ON f.match = a.match GROUP BY a.match) c "
                "WHERE matches.match = c.match"
            )
            conn.execute(
                "CREATE OR REPLACE TEMP TABLE _aplayers AS "
                "SELECT player FROM _old_players UNION SELECT player FROM seats JOIN _new USING (match)"
            )
            conn.execute("DELETE FROM players WHERE player IN (SELECT player FROM _aplayers)")
            conn.execute(
                "INSERT INTO players "
                "SELECT s.player, "
                "  arg_max(s.name, coalesce(m.started, TIMESTAMPTZ '1970-01-01') ) "
                "    FILTER (WHERE s.name IS NOT NULL), "
                "  bool_or(s.bot), count(DISTINCT s.match), min(m.started), "
                "  max(coalesce(m.ended, m.started)) "
                "FROM seats s JOIN matches m USING (match) "
                "WHERE s.player IN (SELECT player FROM _aplayers) GROUP BY s.player"
            )
            for t in ("_aseeds", "_amatch", "_aplayers"):
                conn.execute(f"DROP TABLE {t}")

    def _seed_findings(self) -> None:
        """SEED_REUSED findings of the matches of ``_amatch``, as
        :func:`replay.validate.crossmatch.reused` words them, from the ``seeds`` rows
        of the seeds they share (each finding names the line its seed was
        read from: for the anchor, match_start)."""
        conn = self.conn
        rows = conn.execute(
            "WITH mine AS (SELECT DISTINCT seed FROM seeds WHERE match IN (SELECT match FROM _amatch)), "
            "shared AS (SELECT seed FROM seeds WHERE seed IN (SELECT seed FROM mine) "
            "  GROUP BY seed HAVING count(DISTINCT match) > 1) "
            "SELECT seed, match, hand, file, line, sha256 FROM seeds WHERE seed IN (SELECT seed FROM shared) "
            "ORDER BY match, hand, seed"
        ).fetchall()
        if not rows:
            return
        sha = {(m, h): x for _, m, h, _, _, x in rows}
        wanted = {m for (m,) in conn.execute("SELECT match FROM _amatch").fetchall()}
        found = reused(SeedUse(seed, m, h, f, n) for seed, m, h, f, n, _ in rows)
        got = [f for m in sorted(found) if m in wanted for f in found[m]]
        table = pa.table({
            "match": pa.array([f.match for f in got], pa.string()),
            "hand": pa.array([f.hand for f in got], pa.int32()),
            "code": pa.array([f.code for f in got], pa.string()),
            "severity": pa.array([f.severity for f in got], pa.string()),
            "message": pa.array([f.message for f in got], pa.string()),
            "file": pa.array([f.file for f in got], pa.string()),
            "line": pa.array([f.line for f in got], pa.int64()),
            "sha256": pa.array([sha[(f.match, f.hand or 0)] for f in got], pa.string()),
        })  # fmt: skip
        with registered(conn, "_reused", table):
            conn.execute(
                "INSERT INTO findings (match, hand, seq, code, severity, message, file, line, sha256, mno) "
                "SELECT r.match, r.hand, NULL, r.code, r.severity, r.message, r.file, r.line, r.sha256, m.mno "
                "FROM _reused r LEFT JOIN matches m ON m.match = r.match"
            )


def _migrated(conn: duckdb.DuckDBPyConnection) -> None:
    """Derive the player rows of a store from before 003 (005 marks its matches)."""
    have = {t for (t,) in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    if {"player_pending", "player_reports"} <= have:  # (not a store migrated part of the way)
        derive_player_rows(conn, reports=False)


after_migrating(_migrated)
