"""`replay ingest` end to end: what is stored is what `replay validate` says,
nothing is lost or doubled, runs can be split, killed and repeated."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from cli.main import main as cli_main
from replay.findings import ValidationReport
from replay.ingest import ingest, keep_file, read_match_records, reingest
from replay.reader import UsageError
from replay.simulate import DEFECTS, SimConfig, defect_log, simulate, write_lines
from replay.store import layout, load_spool, open_store, pending_batches, table_counts
from replay.validate import validate_paths
from tests.conftest import native_built, require_native

EXCLUDE = {"batch", "read_at", "mno"}  # differ between runs by design (mno: the order stored)


def sim_lines(hands: int, seed: int, tables: int = 4) -> list[bytes]:
    return list(simulate(SimConfig(hands=hands, tables=tables, seed=seed)))


def write(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_lines(lines, path)
    return path


def snapshot(db: Path) -> dict[str, Any]:
    """Every derived table as (rows, order-free hash), without run-specific columns."""
    conn = open_store(db, read_only=True)
    out = {}
    try:
        for t in ("matches", "seats", "hands", "moves", "findings", "seeds", "match_files",
                  "players", "log_files"):  # fmt: skip
            cols = [r[0] for r in conn.execute(f"DESCRIBE {t}").fetchall() if r[0] not in EXCLUDE]
            cols = [f'"{c}"' for c in cols]
            out[t] = conn.execute(
                f"SELECT count(*), sum(hash({', '.join(cols)})::HUGEINT) FROM {t}"
            ).fetchall()[0]
    finally:
        conn.close()
    return out


def store_view(db: Path) -> dict[str, Any]:
    """Per match what validate reports: verdict, finding codes, hands, outcome."""
    conn = open_store(db, read_only=True)
    try:
        view: dict[str, Any] = {}
        for mid, verdict, result, winner, score in conn.execute(
            "SELECT match, verdict, result, winner, score FROM matches"
        ).fetchall():
            view[mid] = {"verdict": verdict, "result": result, "winner": winner, "score": score,
                         "codes": Counter(), "hands": []}  # fmt: skip
        for mid, code in conn.execute("SELECT match, code FROM findings WHERE match IS NOT NULL").fetchall():
            view[mid]["codes"][code] += 1
        for mid, hand, result, winner, points, score in conn.execute(
            "SELECT match, hand, result, winner, points, score FROM hands ORDER BY match, hand"
        ).fetchall():
            view[mid]["hands"].append((hand, result, winner, points, score))
        top = sorted(
            (code, file, line)
            for code, file, line in conn.execute(
                "SELECT code, file, line FROM findings WHERE match IS NULL"
            ).fetchall()
        )
        files = sorted(conn.execute("SELECT path, lines, bad_lines FROM log_files").fetchall())
    finally:
        conn.close()
    return {"matches": view, "top": top, "files": files}


def report_view(report: ValidationReport) -> dict[str, Any]:
    view = {}
    for m in report.matches:
        view[m.match] = {
            "verdict": m.verdict, "result": m.result, "winner": m.winner,
            "score": list(m.score) if m.hands or m.score else [],
            "codes": Counter(f.code for f in m.findings),
            "hands": [(h.hand, h.result, h.winner, list(h.points), list(h.score)) for h in m.hands],
        }  # fmt: skip
    top = sorted((f.code, f.file, f.line) for f in report.findings)
    files = sorted((f.path, f.lines, f.bad_lines) for f in report.files)
    return {"matches": view, "top": top, "files": files}


def _relabel(value: Any, names: dict[str, str]) -> Any:
    """`value` with every file path in it as ingest names the file (display_names)."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {k: _relabel(v, names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_relabel(v, names) for v in value)
    return value


def assert_same(db: Path, paths: list[Path], given: list[Path] | None = None) -> dict[str, Any]:
    """The store at `db` holds what validate reports of `paths`; ingest read
    them from `given` (the folders or files named), which name them."""
    from replay.reader import display_names

    got = store_view(db)
    want = _relabel(report_view(validate_paths(paths)), display_names(given or paths, paths))
    assert got["top"] == want["top"]
    assert sorted(got["matches"]) == sorted(want["matches"])
    for mid, w in want["matches"].items():
        g = got["matches"][mid]
        if not w["hands"] and not g["score"]:
            g["score"] = w["score"]  # an unreadable match has no score either way
        assert g == w, mid
    return got


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two files of interleaved simulated tables, one gzip (~300 hands)."""
    d = tmp_path_factory.mktemp("sample")
    write(d / "a.jsonl", sim_lines(150, seed=11))
    write(d / "b.jsonl.gz", sim_lines(150, seed=12))
    return d


# -- the store says what validate says ----------------------------------------------


def test_defect_logs_are_stored_as_validate_reports_them(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for code in DEFECTS:
        write(logs / f"{code.lower()}.jsonl", defect_log(code, 1))
    write(logs / "clean.jsonl", sim_lines(60, seed=3))
    db = tmp_path / "data" / "r.duckdb"
    summary = ingest([logs], db=db, workers=2, chunk_hands=40)
    assert summary.loaded and summary.files == len(DEFECTS) + 1
    got = assert_same(db, sorted(logs.iterdir()), [logs])
    stored = sum((m["codes"] for m in got["matches"].values()), Counter(c for c, _, _ in got["top"]))
    assert set(stored) == set(DEFECTS)  # every planted code made it into the store
    assert summary.findings == stored and stored["SEED_REUSED"] >= 2  # both matches get it
    assert summary.verdicts["invalid"] == sum(m["verdict"] == "invalid" for m in got["matches"].values())


def test_in_process_and_pool_store_the_same(sample: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "r.duckdb", tmp_path / "b" / "r.duckdb"
    ingest([sample], db=a, workers=0, chunk_hands=30)
    ingest([sample], db=b, workers=2, chunk_hands=1000)
    assert snapshot(a) == snapshot(b)
    assert_same(a, sorted(sample.iterdir()))
    counts = table_counts(duckdb.connect(str(a), read_only=True))
    assert counts["moves"] > 20 * counts["hands"] > 0


def test_the_pool_stores_the_same_with_and_without_shared_memory(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk's bytes go by shared memory (replay.ingest.shm); where /dev/shm
    cannot hold a segment they go by pipe, with the same store."""
    import os

    from replay.ingest import shm

    a, b = tmp_path / "a" / "r.duckdb", tmp_path / "b" / "r.duckdb"
    made: list[int] = []
    real_put = shm.Segments.put

    def put(self: shm.Segments, blobs: Any) -> Any:
        held = real_put(self, blobs)
        made.append(held is not None)
        return held

    monkeypatch.setattr(shm.Segments, "put", put)
    ingest([sample], db=a, workers=2, chunk_hands=40)
    assert made and all(made) == shm.available()

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(28, "No space left on device")

    made.clear()
    monkeypatch.setattr(os, "posix_fallocate", full)
    ingest([sample], db=b, workers=2, chunk_hands=40)
    assert made and not any(made)
    assert snapshot(a) == snapshot(b)
    assert_same(b, sorted(sample.iterdir()))


def test_the_run_loads_on_one_duckdb_thread_and_derives_on_all(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parallel inserts leave partly filled row groups for the checkpoint to
    merge again: the loads run on one thread, the derivation gets them back."""
    from replay.ingest import load as load_mod

    seen: dict[str, set[int]] = {"load": set(), "derive": set()}

    def spy(name: str, real: Any) -> Any:
        def call(conn: Any, *args: Any, **kwargs: Any) -> Any:
            seen[name].add(int(conn.execute("SELECT current_setting('threads')").fetchall()[0][0]))
            return real(conn, *args, **kwargs)

        return call

    monkeypatch.setattr(load_mod, "load_batches", spy("load", load_mod.load_batches))
    monkeypatch.setattr(load_mod, "derive_player_rows", spy("derive", load_mod.derive_player_rows))
    ingest([sample], db=tmp_path / "data" / "r.duckdb", workers=2, chunk_hands=40)
    default = int(duckdb.connect().execute("SELECT current_setting('threads')").fetchall()[0][0])
    assert seen == {"load": {1}, "derive": {default}}


def test_a_run_takes_arrows_buffers_from_malloc_and_gives_the_pool_back(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mimalloc (Arrow's default pool) kept what the run's threads freed:
    the run's Arrow buffers come from malloc, and the caller's pool is the
    default again afterwards, also when the run fails."""
    import pyarrow as pa

    from replay.ingest import route

    before = pa.default_memory_pool().backend_name
    seen: list[str] = []
    real = route.work

    def work(task: Any) -> Any:
        seen.append(pa.default_memory_pool().backend_name)
        return real(task)

    monkeypatch.setattr(route, "work", work)
    ingest([sample], db=tmp_path / "data" / "r.duckdb", workers=0, chunk_hands=100)
    assert seen and set(seen) == {"system"}
    assert pa.default_memory_pool().backend_name == before
    with pytest.raises(UsageError):
        ingest([tmp_path / "missing"], db=tmp_path / "data" / "r.duckdb", workers=0)
    assert pa.default_memory_pool().backend_name == before
    reingest(db=tmp_path / "data" / "r.duckdb", workers=0)
    assert set(seen) == {"system"} and pa.default_memory_pool().backend_name == before


def test_workers_are_gone_before_the_derivation(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool is shut down once every result is in: its memory is back
    before the player tables are derived (the run's peak)."""
    import multiprocessing

    from replay.ingest import load as load_mod

    seen: list[int] = []
    real = load_mod.derive_player_rows

    def derive(*args: Any, **kwargs: Any) -> int:
        seen.append(len(multiprocessing.active_children()))
        return real(*args, **kwargs)

    monkeypatch.setattr(load_mod, "derive_player_rows", derive)
    summary = ingest([sample], db=tmp_path / "data" / "r.duckdb", workers=2)
    assert summary.matches > 0 and seen == [0]


PLAYER_TABLES = ("player_seats", "player_held")


def table_hashes(db: Path, tables: tuple[str, ...]) -> dict[str, Any]:
    conn = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        for t in tables:
            cols = ", ".join(f'"{r[0]}"' for r in conn.execute(f"DESCRIBE {t}").fetchall() if r[0] != "batch")
            out[t] = conn.execute(f"SELECT count(*), sum(hash({cols})::HUGEINT) FROM {t}").fetchall()[0]
        return out
    finally:
        conn.close()


def test_the_c_fast_path_stores_what_the_python_path_stores(sample: Path, tmp_path: Path) -> None:
    """Routing, scanning, hand-by-hand validation and the moves rows made in C
    give the very same store as REPLAY_PURE=1 (pydantic per line, the engine
    per move); defect logs make sure both paths meet in one store. (Each
    path runs in a process of its own: this runs in the pure leg too.)"""
    if not native_built():
        require_native("the C fast path's store")
    logs = tmp_path / "logs"
    shutil.copytree(sample, logs)
    for code in ("TILE_NOT_IN_HAND", "DRAW_MISMATCH", "SCORE_MISMATCH", "HAND_INCOMPLETE"):
        write(logs / f"{code.lower()}.jsonl", defect_log(code, 1))
    write(logs / "domena.jsonl", list(simulate(SimConfig(profiles=("domena_2p",), hands=40, seed=5))))
    got = {}
    for mode in ("pure", "native"):
        db = tmp_path / mode / "r.duckdb"
        env = {**os.environ, "REPLAY_PURE": "1"} if mode == "pure" else {
            k: v for k, v in os.environ.items() if k != "REPLAY_PURE"}  # fmt: skip
        cmd = [sys.executable, "-m", "replay", "ingest", str(logs), "--db", str(db), "--quiet", "--no-analysis"]
        assert subprocess.run(cmd, env=env, check=False).returncode in (0, 1)
        got[mode] = (snapshot(db), table_hashes(db, PLAYER_TABLES))
    assert got["pure"] == got["native"]
    assert got["native"][0]["moves"][0] > 20 * got["native"][0]["hands"][0] > 0


def test_moves_are_the_replayed_plies(sample: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    ingest([sample / "a.jsonl"], db=db, workers=0)
    report = validate_paths([sample / "a.jsonl"], keep_moves=True)
    want = Counter((m.match, h.hand, mv.kind) for m in report.matches for h in m.hands for mv in h.moves)
    conn = open_store(db, read_only=True)
    got = Counter({(m, h, k): n for m, h, k, n in conn.execute(
        "SELECT match, hand, kind, count(*) FROM moves GROUP BY ALL").fetchall()})  # fmt: skip
    forced = conn.execute("SELECT bool_and(forced = (legal = 1)), bool_and(len(legal_moves) = legal) FROM moves").fetchall()
    conn.close()
    assert got == want and forced == [(True, True)]


# -- nothing lost, nothing doubled --------------------------------------------------


def test_files_are_kept_by_content(sample: Path, tmp_path: Path) -> None:
    lay = layout(tmp_path / "data" / "r.duckdb").make()
    kf = keep_file(sample / "b.jsonl.gz", lay)
    assert kf.stored == f"logs/{kf.sha256}.jsonl.gz"
    assert kf.kept.read_bytes() == (sample / "b.jsonl.gz").read_bytes()
    again = keep_file(sample / "b.jsonl.gz", lay)
    assert again.kept == kf.kept and len(list(lay.logs.iterdir())) == 1


def test_a_kept_copy_of_many_blocks_is_the_file_and_its_hash(tmp_path: Path) -> None:
    """A file of several read blocks (and a part block) is kept byte for
    byte, named by the sha256 of all of it."""
    body = bytes(range(256)) * (3 * (1 << 20) // 256 + 7)
    src = tmp_path / "big.jsonl"
    src.write_bytes(body)
    lay = layout(tmp_path / "data" / "r.duckdb").make()
    kf = keep_file(src, lay)
    assert kf.sha256 == hashlib.sha256(body).hexdigest() and kf.size == len(body)
    assert kf.kept.read_bytes() == body and kf.stored == f"logs/{kf.sha256}.jsonl"


def test_a_copy_is_durable_under_its_name_before_the_store_refers_to_it(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copies are synced and named in a thread while the run starts
    (`keep_file(sync=False)`, `Durable`): every one is under its name when
    the loader first loads, and the temporary names are gone at the end."""
    from replay.ingest import load as load_mod
    from replay.ingest.keep import Durable

    lay = layout(tmp_path / "data" / "r.duckdb").make()
    kf = keep_file(sample / "a.jsonl", lay, sync=False)
    assert kf.temp and kf.kept.name.startswith(".") and not (lay.data / kf.stored).exists()
    assert kf.kept.read_bytes() == (sample / "a.jsonl").read_bytes()
    durable = Durable([kf], lay)
    durable.start()
    durable.wait()
    assert (lay.data / kf.stored).read_bytes() == (sample / "a.jsonl").read_bytes()
    durable.drop()
    assert not kf.kept.exists()

    files = sorted(sample.iterdir())
    shas = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    named: list[bool] = []
    real_load, real_run = load_mod.load_batches, Durable.run

    def load(*args: Any, before_commit: Any = None, **kwargs: Any) -> int:
        def check() -> None:  # a group's batches are loaded as they come, then committed
            if before_commit is not None:
                before_commit()
            named.append(all(any(lay.logs.glob(f"{sha}.*")) for sha in shas))

        return real_load(*args, before_commit=check, **kwargs)

    def slow_run(self: Any) -> None:  # the fsyncs take their time
        time.sleep(1.5)
        real_run(self)

    monkeypatch.setattr(Durable, "run", slow_run)
    monkeypatch.setattr(load_mod, "load_batches", load)
    summary = ingest([sample], db=lay.db, workers=2, chunk_hands=50)
    assert summary.matches > 0 and named and all(named)
    assert sorted(p.name for p in lay.logs.iterdir() if p.name.startswith(".")) == []
    assert_same(lay.db, files)


def _refers_to(bdir: Path) -> set[str] | None:
    """The kept files a spooled batch refers to; None for the run's last
    batch (its log_files rows name every file)."""
    manifest = orjson.loads((bdir / "manifest.json").read_bytes())
    return None if "log_files" in manifest["tables"] else set(manifest["files"])


def test_a_batch_loads_once_its_own_files_are_durable_not_every_file(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader waits for the kept copies a group of batches refers to,
    not for every file of the run: at 1M hands the last files' fsyncs kept
    it idle for the run's first 25 s. Here the second file's fsync waits
    until a batch has been loaded, which only the per-file barrier allows;
    and no load ever refers to a file not yet under its name."""
    from replay.ingest import keep
    from replay.ingest import load as load_mod

    lay = layout(tmp_path / "data" / "r.duckdb").make()
    files = sorted(sample.iterdir())
    sha = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    loaded_one = threading.Event()
    seen: list[tuple[bool, bool]] = []  # (its files named, the gzip file named)
    real_load, real_fsync = load_mod.load_batches, keep.fsync_path

    def is_named(s: str) -> bool:
        return any(lay.logs.glob(f"{s}.*"))

    def load(conn: Any, bdirs: Any, *args: Any, before_commit: Any = None, **kwargs: Any) -> int:
        taken: list[Path] = []

        def tap() -> Any:
            for b in bdirs:
                taken.append(b)
                yield b

        def check() -> None:  # what the commit will refer to is durable
            if before_commit is not None:
                before_commit()
            refs: set[str] | None = set()
            for b in taken:
                got = _refers_to(b)
                refs = None if refs is None or got is None else refs | got
            wanted = set(sha.values()) if refs is None else refs
            seen.append((all(map(is_named, wanted)), is_named(sha["b.jsonl.gz"])))

        n = real_load(conn, tap(), *args, before_commit=check, **kwargs)
        loaded_one.set()
        return n

    def fsync(path: Any) -> None:
        p = Path(path)
        if p.is_file() and p.read_bytes()[:2] == b"\x1f\x8b":  # the gzip file's copy
            loaded_one.wait(30)
        real_fsync(path)

    monkeypatch.setattr(load_mod, "GROUP_BATCHES", 1)
    monkeypatch.setattr(keep, "fsync_path", fsync)
    monkeypatch.setattr(load_mod, "load_batches", load)
    summary = ingest([sample], db=lay.db, workers=2, chunk_hands=50)
    assert summary.matches > 0 and seen
    assert all(ok for ok, _ in seen)
    assert seen[0] == (True, False)  # loaded while the gzip file was still being synced
    assert_same(lay.db, files)


def test_with_the_store_held_elsewhere_no_batch_is_made_before_its_copies_are_durable(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spool's batches may be loaded by the server at once: each is made
    only once the kept copies it refers to are under their names, the last
    (log_files, naming every file) once they all are."""
    from replay.ingest import route
    from replay.ingest.keep import Durable

    db = tmp_path / "data" / "r.duckdb"
    logs = layout(db).logs
    named: list[bool] = []
    real_work, real_run, real_write = route.work, Durable.run, route.write_batch

    def is_named(s: str) -> bool:
        return any(logs.glob(f"{s}.*"))

    def work(task: Any) -> Any:
        refs = {task.files[fi][1] for it in task.items for fi, _ in it.segments}
        named.append(bool(refs) and all(map(is_named, refs)))
        return real_work(task)

    def write(spool: Any, batch: str, tables: Any, *args: Any, **kwargs: Any) -> Any:
        if "log_files" in tables:
            named.append(all(map(is_named, tables["log_files"].column("sha256").to_pylist())))
        return real_write(spool, batch, tables, *args, **kwargs)

    def slow_run(self: Any) -> None:
        time.sleep(1.5)
        real_run(self)

    monkeypatch.setattr(route, "work", work)
    monkeypatch.setattr(route, "write_batch", write)  # the run's last batch: log_files
    monkeypatch.setattr(Durable, "run", slow_run)
    server = hold(db)
    try:
        summary = ingest([sample], db=db, workers=0, chunk_hands=50)
    finally:
        server.communicate("")
    assert not summary.loaded and summary.pending >= 2
    assert len(named) >= 3 and all(named)


def test_the_same_file_again_changes_nothing(sample: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "r.duckdb"
    ingest([sample], db=db, workers=0)
    before = snapshot(db)
    batches = table_counts(duckdb.connect(str(db), read_only=True))["batches"]
    again = ingest([sample], db=db, workers=0)
    assert again.files_known == 2 and again.matches == 0
    assert snapshot(db) == before
    assert table_counts(duckdb.connect(str(db), read_only=True))["batches"] == batches
    # the same bytes under another name: only the name is remembered
    copy = tmp_path / "copy.jsonl"
    shutil.copy(sample / "a.jsonl", copy)
    ingest([copy], db=db, workers=0)
    conn = open_store(db, read_only=True)
    paths = conn.execute("SELECT paths FROM log_files WHERE path LIKE '%a.jsonl'").fetchall()
    conn.close()
    assert paths == [([f"{sample.name}/a.jsonl", "copy.jsonl"],)]  # named from the folder given
    after = snapshot(db)
    assert {t: v for t, v in after.items() if t != "log_files"} == {
        t: v for t, v in before.items() if t != "log_files"
    }


def test_a_match_over_two_runs_is_completed(tmp_path: Path) -> None:
    lines = sim_lines(120, seed=21, tables=6)
    half = len(lines) // 2
    a = write(tmp_path / "logs" / "day1.jsonl", lines[:half])
    b = write(tmp_path / "logs" / "day2.jsonl", lines[half:])
    db = tmp_path / "data" / "r.duckdb"
    first = ingest([a], db=db, workers=2, chunk_hands=20)
    assert first.findings["MATCH_INCOMPLETE"] > 0  # tables still playing at the cut
    ingest([b], db=db, workers=2, chunk_hands=20)
    got = assert_same(db, [a, b])
    assert all(m["verdict"] == "valid" for m in got["matches"].values())
    conn = open_store(db, read_only=True)
    spread = conn.execute(
        "SELECT count(*) FROM (SELECT match FROM match_files GROUP BY match HAVING count(*) = 2)"
    ).fetchall()[0][0]
    conn.close()
    assert spread > 0
    both = tmp_path / "both" / "r.duckdb"
    ingest([a, b], db=both, workers=0)
    assert {t: v for t, v in snapshot(both).items() if t != "log_files"} == {
        t: v for t, v in snapshot(db).items() if t != "log_files"
    }


def test_a_rematch_before_the_match_it_follows(tmp_path: Path) -> None:
    lines = sim_lines(200, seed=5, tables=3)
    parents = {
        orjson.loads(x)["rematch_of"] for x in lines if b'"rematch_of"' in x
    }
    assert parents
    first = [x for x in lines if orjson.loads(x)["match"] not in parents]
    later = [x for x in lines if orjson.loads(x)["match"] in parents]
    a = write(tmp_path / "rematches.jsonl", first)
    b = write(tmp_path / "parents.jsonl", later)
    db = tmp_path / "data" / "r.duckdb"
    s1 = ingest([a], db=db, workers=0)
    assert s1.findings["REMATCH_UNKNOWN"] > 0
    ingest([b], db=db, workers=0)
    got = assert_same(db, [a, b])  # validate reads both: no REMATCH_UNKNOWN left
    assert not any(m["codes"]["REMATCH_UNKNOWN"] for m in got["matches"].values())


def test_lines_after_a_match_end_are_not_lost(tmp_path: Path) -> None:
    lines = sim_lines(80, seed=8, tables=2)
    mid = orjson.loads(lines[0])["match"]
    mine = [i for i, x in enumerate(lines) if orjson.loads(x)["match"] == mid]
    end = mine[-1]
    reveal = next(i for i in reversed(mine) if b'"type":"reveal"' in lines[i])
    moved = lines[:reveal] + lines[reveal + 1 : end + 1] + lines[end + 1 :] + [lines[reveal]]
    path = write(tmp_path / "late.jsonl", moved)
    db = tmp_path / "data" / "r.duckdb"
    ingest([path], db=db, workers=2, chunk_hands=10)
    got = assert_same(db, [path])
    assert got["matches"][mid]["verdict"] == "valid"


def test_unreadable_lines_are_findings_with_file_and_line(tmp_path: Path) -> None:
    lines = sim_lines(30, seed=4, tables=2)
    mid = orjson.loads(lines[0])["match"]
    mixed = lines[:5] + [b"not json", b"", b"   ", b'{"type":"pass","match":"' + mid.encode() + b'","seq":'] \
        + [b'{"match": "' + mid.encode() + b'", "type": "nap", "seq": 9999, "ts": "2026-11-01T00:00:00Z"}'] \
        + [b"[1,2]", b'{"type":"play","match":"m-\xff","seq":1}', b"\xff\xfe", b'{"type":"pass","seq":3}'] \
        + lines[5:]  # fmt: skip
    # a repeated "match" key: JSON readers keep the last one, and so must routing
    other = next(orjson.loads(x)["match"] for x in lines if orjson.loads(x)["match"] != mid)
    twice = next(x for x in lines[5:] if b'"type":"pass"' in x and mid.encode() in x)
    mixed.append(twice[:-1] + b',"match":"' + other.encode() + b'"}')
    a = write(tmp_path / "logs" / "mixed.jsonl", mixed)
    raw = gzip.compress(b"\n".join(lines[:40]) + b"\n")
    broken = tmp_path / "logs" / "broken.jsonl.gz"
    broken.write_bytes(raw[: len(raw) // 2])
    db = tmp_path / "data" / "r.duckdb"
    summary = ingest([tmp_path / "logs"], db=db, workers=2, chunk_hands=5)
    got = assert_same(db, [broken, a], [tmp_path / "logs"])
    assert {c for c, _, _ in got["top"]} == {"MALFORMED_LINE", "SCHEMA_ERROR"}
    assert all(f is not None and line is not None for _, f, line in got["top"])
    assert got["matches"][mid]["codes"]["UNKNOWN_EVENT"] == 1
    assert summary.bad_lines == sum(bad for _, _, bad in got["files"]) > 0


# -- the server holds the database ---------------------------------------------------


def hold(db: Path) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from replay.store import open_store
            c = open_store({str(db)!r})
            print("held", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_a_locked_database_gets_the_batches_through_the_spool(sample: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "r.duckdb"
    server = hold(db)
    try:
        summary = ingest([sample], db=db, workers=2, chunk_hands=50)
        assert not summary.loaded and summary.pending >= 2
        assert "is open in another process" in summary.lines_out()[-1]
    finally:
        server.communicate("")
    conn = open_store(db)  # what the server does on its timer
    assert load_spool(conn) == summary.pending
    conn.close()
    assert pending_batches(layout(db).spool) == []
    assert_same(db, sorted(sample.iterdir()))
    direct = tmp_path / "direct" / "r.duckdb"
    ingest([sample], db=direct, workers=0)
    assert snapshot(direct) == snapshot(db)


def test_reingest_rebuilds_the_derived_tables(sample: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "r.duckdb"
    ingest([sample], db=db, workers=0)
    before = snapshot(db)
    conn = open_store(db)
    conn.execute("DELETE FROM moves WHERE hand = 1")
    conn.execute("UPDATE matches SET verdict = 'invalid'")
    conn.execute("DELETE FROM findings WHERE match IS NULL")
    conn.close()
    assert snapshot(db) != before
    summary = reingest(db=db, workers=2, chunk_hands=40)
    assert summary.matches == before["matches"][0]
    assert snapshot(db) == before


def test_reingest_refuses_a_locked_database(sample: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "r.duckdb"
    ingest([sample / "a.jsonl"], db=db, workers=0)
    server = hold(db)
    try:
        assert cli_main(["reingest", "--db", str(db), "--quiet"]) == 1
    finally:
        server.communicate("")


# -- crash safety --------------------------------------------------------------------


def children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def test_kill_9_mid_ingest_then_rerun_completes_without_doubles(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for i in range(3):
        write(logs / f"part{i}.jsonl", sim_lines(700, seed=40 + i, tables=8))
    db = tmp_path / "data" / "r.duckdb"
    cmd = [sys.executable, "-m", "replay", "ingest", str(logs), "--db", str(db),
           "--chunk-hands", "40", "--quiet", "--no-analysis"]  # fmt: skip
    proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    spool = layout(db).spool
    deadline = time.monotonic() + 120
    # kill right after the loader committed a batch: its folder appeared, then
    # went (a run that holds the store loads its batches from spool/.tmp)
    seen: set[str] = set()

    def batches() -> set[str]:
        found = set()
        for where in (spool, spool / ".tmp"):
            with contextlib.suppress(OSError):
                found |= {p.name for p in where.iterdir() if not p.name.startswith((".", "held-"))}
        return found

    while time.monotonic() < deadline and proc.poll() is None:
        now = batches()
        if seen - now:
            break
        seen |= now
        time.sleep(0.01)
    assert proc.poll() is None, "the ingest ended before it could be killed"
    workers = children(proc.pid)
    assert workers  # the pool
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    while workers and time.monotonic() < deadline:  # orphaned workers leave by themselves
        workers = [p for p in workers if Path(f"/proc/{p}").exists()]
        time.sleep(0.1)
    assert workers == []
    conn = open_store(db)  # consistent: every stored match is whole
    partial = table_counts(conn)
    broken = conn.execute(
        "SELECT count(*) FROM matches m WHERE m.hands <> (SELECT count(*) FROM hands h WHERE h.match = m.match) "
        "OR NOT EXISTS (SELECT 1 FROM match_files f WHERE f.match = m.match)"
    ).fetchall()[0][0]
    conn.close()
    assert broken == 0
    assert subprocess.run(cmd, check=False).returncode == 0
    clean = tmp_path / "clean" / "r.duckdb"
    assert subprocess.run([*cmd[:5], "--db", str(clean), "--quiet", "--no-analysis"], check=False).returncode == 0
    assert snapshot(db) == snapshot(clean)
    assert partial["matches"] < table_counts(duckdb.connect(str(clean), read_only=True))["matches"]


# -- the command line -----------------------------------------------------------------


def test_cli_ingest_uses_replay_db(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    db = tmp_path / "env" / "r.duckdb"
    monkeypatch.setenv("REPLAY_DB", str(db))
    assert cli_main(["ingest", str(sample / "a.jsonl"), "--workers", "0", "--no-analysis"]) == 0
    err = capsys.readouterr().err
    assert "matches:" in err and f"stored in {db}" in err and "\r" not in err  # no bar off a tty
    assert table_counts(duckdb.connect(str(db), read_only=True))["matches"] > 0
    assert cli_main(["ingest", str(tmp_path / "missing.jsonl")]) == 2


def test_default_database_is_under_data(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLAY_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    assert cli_main(["ingest", str(sample / "a.jsonl"), "--workers", "0", "--quiet", "--no-analysis"]) == 0
    assert (tmp_path / "data" / "replay.duckdb").exists()
    assert len(list((tmp_path / "data" / "replay" / "logs").iterdir())) == 1


def test_progress_is_a_bar_on_a_terminal_and_a_line_every_10_s_in_a_log() -> None:
    import io

    from replay.ingest.load import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    for out in (tty, pipe):
        bar = Progress(1000, out)
        bar.show(500, 2000, 1000, force=True)  # half read: ~4000 hands expected, 1000 done
    text = tty.getvalue()
    assert text.startswith("\r[#######       ") and "25.0%" in text and "1,000/4,000 hands" in text
    assert "/s" in text and "left" in text and "(read 50%)" in text
    line = pipe.getvalue()
    assert line.startswith("1,000/4,000 hands (25%), ") and line.endswith("left (read 50%)\n")
    quiet = io.StringIO()  # not a terminal, and less than 10 s since the last line: nothing yet
    bar = Progress(1000, quiet)
    bar.show(500, 2000, 1000)
    assert quiet.getvalue() == ""
    bar.line.last -= 10.0
    bar.show(600, 2000, 1200)
    assert quiet.getvalue().count("\n") == 1 and quiet.getvalue().startswith("1,200/")


def test_read_match_records_reads_only_those_matches(sample: Path) -> None:
    report = validate_paths([sample / "a.jsonl"])
    wanted = [m.match for m in report.matches[:2]]
    got = read_match_records([("a", sample / "a.jsonl")], wanted)
    assert sorted(got) == sorted(wanted)
    assert [len(got[m]) for m in wanted] == [m.events for m in report.matches[:2]]
