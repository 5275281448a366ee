"""The web app run over the store, as the database's one owner (`replay serve`).

The server opens the DuckDB file read-write and keeps it: `replay ingest`
run meanwhile cannot open it, so it leaves Arrow batches in the store's
spool, and the server loads them at start, every 2 seconds and after
uploads. The command line, `replay serve`, is `cli.serve`.

On SIGTERM or SIGINT it stops everything it started, within
:data:`STOP_SECONDS`: uvicorn stops taking requests and gives those under
way :data:`GRACE` seconds, the app's shutdown stops the background
sampling, the spool timer and the render pool (api.app), and then every
process still below the server (an audit's graders, the processes of the
multiprocessing fork server) is terminated, then killed.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from replay.accel import native
from replay.store import StoreLocked, default_db_path, layout, open_store

#: Sampled deals a decision the server gives stored hands in the background (replay serve --deepen).
DEEPEN = 20

#: Seconds requests under way get once the server is told to stop.
GRACE = 2
#: Seconds within which a stopped server leaves no process of its own behind.
STOP_SECONDS = 5.0


def descendants(pid: int | None = None) -> list[int]:
    """The processes below ``pid`` (this one by default), children first (from /proc)."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])  # the name may hold spaces and parens
            children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def stop_descendants(wait: float = 1.0) -> int:
    """Terminate every process below this one, then kill what is left after
    ``wait`` seconds; how many there were."""
    procs = descendants()
    for pid in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    left = procs
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [pid for pid in left if _running(pid)]
    for pid in left + descendants():  # and what was forked meanwhile
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in procs:  # reap our own children (the others are their parents' or init's)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
    return len(procs)


def _running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2 :].split()[0] != "Z"


def _watchdog(code: int, after: float) -> None:
    """However the shutdown goes, the process and everything below it are
    gone ``after`` seconds from now (a load or a page that does not let go)."""

    def run() -> None:
        time.sleep(after)
        stop_descendants(wait=0.3)
        os._exit(code)

    threading.Thread(target=run, name="stop-watchdog", daemon=True).start()


class _Stopped(SystemExit):
    """uvicorn re-raises the signal that stopped it once it is done: here it
    ends `serve` through its ``finally`` instead of killing the process at once."""


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    raise _Stopped(128 + signum)


def _quiet_gc() -> None:
    """Fewer, cheaper garbage collections in the server process.

    A full collection walks every object of the process (FastAPI, pydantic,
    polars, DuckDB and the caches) with the GIL held: measured under load it
    paused every request for up to 300 ms. What exists after start-up is
    moved out of the collector's sight (`gc.freeze`), and collections run
    less often.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 50)


def serve(
    db: str | None = None, *, host: str = "127.0.0.1", port: int = 8000, load_every: float = 2.0,
    render_workers: int | None = None, threads: int = 4, deepen: int = DEEPEN, deepen_workers: int | None = None,
) -> int:
    """Start uvicorn; returns its exit status (2 if the database is held elsewhere).
    `render_workers`, `deepen_workers` None: one per core."""
    # here, not at the top: `replay ingest` and the other commands build the
    # parser of `replay serve` too, and need neither uvicorn nor the app
    import uvicorn  # noqa: PLC0415

    from api.app import create_app  # noqa: PLC0415

    db = db or str(default_db_path())
    lay = layout(db)
    try:
        open_store(db).close()  # create or migrate now, and fail early if another process holds it
    except StoreLocked as exc:
        print(f"replay serve: {db} is open in another process: {exc}", file=sys.stderr)
        return 2
    workers = render_workers if render_workers is not None else (os.cpu_count() or 1)
    deepen = max(0, deepen) if native is not None else 0  # the pure-Python solver: seconds a hand
    app = create_app(db, spool_dir=lay.spool, load_every=load_every, render_workers=max(0, workers),
                     threads=max(1, threads), deepen=deepen, deepen_workers=deepen_workers)
    _quiet_gc()
    # A thread back from DuckDB (which runs without the GIL) waits for the
    # thread holding it to let go, up to the switch interval (5 ms by default),
    # and a match's replay makes five such reads: measured under 20 clients,
    # 1 ms cut the p95 of a match's first hand from about 200 to 140 ms.
    sys.setswitchinterval(0.001)
    shown = f"[{host}]" if ":" in host else host
    print(f"replay serve: http://{shown}:{port}/  (database {db})", flush=True)
    if not os.environ.get("REPLAY_TOKEN"):
        print("replay serve: REPLAY_TOKEN is not set: uploads and deletes are refused", flush=True)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if not self.should_exit:
                _watchdog(128 + sig, STOP_SECONDS - 0.5)
            super().handle_exit(sig, frame)

    before = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=GRACE)
        Server(config).run()
    except _Stopped as stopped:
        return int(stopped.code or 0)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        stop_descendants()
    return 0
