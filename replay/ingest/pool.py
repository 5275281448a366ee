"""Where a run's tasks go: processes forked here, or a dask.distributed cluster.

:func:`make_pool` forks the local workers. With ``--cluster ADDRESS``,
``replay ingest``, ``reingest`` and ``validate`` hand their shards to a
cluster instead of their own processes (:func:`connect`, :class:`ClusterPool`).
A shard is one task: the lines of
some whole matches (about 10,000 hands), routed by this process exactly as
for the local pool (so a match spread over files is validated whole, and
a rematch after the match it follows). The worker validates it and sends
back the batch's files as bytes (:func:`replay.store.encode_tables`), which
this process writes into its spool under the batch's content name
(:mod:`replay.ingest.batch_id`); the loader loads them as today. Workers need no
shared folder and never see the data directory or the database.

``ADDRESS`` is a scheduler (``tcp://host:8786``, started with ``dask
scheduler``; workers with ``dask worker tcp://host:8786 --nthreads 1``),
or ``local`` / ``local:N`` for a LocalCluster of N worker processes on this
machine (default: one per core). See docs/scale.md.

A worker that dies takes its task with it; the scheduler gives the task to
another worker (``distributed.scheduler.allowed-failures`` times, 3 by
default). The task is a pure function of its shard, and its batch is named
by its content: whichever worker finishes it, the same batch is written,
once.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Final

from replay.ingest.batch_id import code_version

__all__ = ["WORKER_NICE", "ClusterError", "ClusterPool", "connect", "make_pool", "parse_address"]

#: Workers yield the CPU to the main process: its loader, one transaction at a
#: time, is the run's critical path, and the workers can only run ahead of it.
WORKER_NICE: Final = 10


def _watch_parent(parent: int) -> None:
    """Pool initializer: leave when the ingest that forked us is gone (kill -9
    leaves workers blocked on their task queue otherwise)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="replay-parent-watch", daemon=True).start()
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)


def make_pool(workers: int) -> ProcessPoolExecutor | None:
    """The validating processes, forked at once, before this process opens the
    database or starts a thread: a fork is cheap (nothing to import again,
    pages shared) and safe while the process is still single-threaded."""
    if workers <= 0:
        return None
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )
    pool.submit(os.getpid).result()  # fork start: every worker is launched on first use
    return pool


# -- a dask.distributed cluster --------------------------------------------------

#: Seconds to wait for the scheduler, and for its first worker.
CONNECT_TIMEOUT: Final = 30.0


class ClusterError(RuntimeError):
    """The cluster cannot be reached, has no worker, or runs other code."""


def parse_address(spec: str) -> tuple[str, int | None]:
    """``("local", N or None)`` for a LocalCluster, else ``(address, None)``.

    >>> parse_address("local"), parse_address("local:3"), parse_address("tcp://h:8786")
    (('local', None), ('local', 3), ('tcp://h:8786', None))
    >>> parse_address("local:x")
    Traceback (most recent call last):
    ...
    replay.ingest.pool.ClusterError: --cluster local:N wants a number of workers, not 'x'
    """
    if spec == "local":
        return "local", None
    if spec.startswith("local:"):
        n = spec.removeprefix("local:")
        if not n.isdigit() or int(n) < 1:
            raise ClusterError(f"--cluster local:N wants a number of workers, not {n!r}")
        return "local", int(n)
    return spec, None


class ClusterPool:
    """A dask Client as the executor the ingest run submits its tasks to.

    ``submit`` returns a :class:`concurrent.futures.Future` (the run waits on
    them as on a process pool's); the dask future behind it is released as
    soon as its result is here, so a worker keeps no batch longer than that.
    """

    remote: Final = True  # tasks carry their bytes; results bring the batches' files

    def __init__(self, client: Any) -> None:
        self.client = client
        self._live: dict[Future[Any], Any] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()

    @property
    def _max_workers(self) -> int:
        """Worker threads in the cluster now (the run keeps twice as many tasks out)."""
        threads: int = sum(self.client.nthreads().values())
        return max(1, threads)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        out: Future[Any] = Future()
        # a key of our own: the task's bytes are not hashed again to name it
        key = f"replay-{os.getpid()}-{next(self._ids)}"
        with warnings.catch_warnings():
            # a shard is some 36 MB of log lines: it is meant to travel in the task
            warnings.filterwarnings("ignore", message="Sending large graph")
            theirs = self.client.submit(fn, *args, key=key, pure=False)
        with self._lock:
            self._live[out] = theirs

        def done(f: Any) -> None:
            with self._lock:
                self._live.pop(out, None)
            if not out.set_running_or_notify_cancel():
                f.release()
                return
            try:
                out.set_result(f.result())
            except BaseException as exc:
                out.set_exception(exc)
            finally:
                f.release()

        theirs.add_done_callback(done)
        return out

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Cancel what is still out (the client stays open: :func:`connect` owns it)."""
        with self._lock:
            live = list(self._live.items())
            self._live.clear()
        for out, theirs in live:
            if cancel_futures:
                out.cancel()
                with contextlib.suppress(Exception):
                    theirs.cancel()


def _yield_cpu() -> None:
    """A LocalCluster's worker yields the CPU as a local pool's process does."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)


def _check_workers(client: Any) -> None:
    mine = code_version()
    theirs = client.run(code_version)
    other = {w: v for w, v in theirs.items() if v != mine}
    if other:
        w, v = sorted(other.items())[0]
        raise ClusterError(
            f"worker {w} runs other replay code (sources {v[:12]}) than this process "
            f"({mine[:12]}): install the same version on every machine"
        )


@contextlib.contextmanager
def connect(spec: str, *, timeout: float = CONNECT_TIMEOUT) -> Iterator[ClusterPool]:
    """The cluster ``spec`` names (see :func:`parse_address`), as a pool.

    A LocalCluster is started for the block and stopped after it. Every
    worker is checked to run this process's code (each task checks again:
    a worker that joins later is refused a task the same way).
    """
    try:
        # here, not at the top: dask is the [cluster] extra, and heavy
        from distributed import Client, LocalCluster  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - the [cluster] extra is not installed
        raise ClusterError(
            "--cluster needs dask.distributed: pip install 'domino-replay[cluster]'"
        ) from exc
    address, n = parse_address(spec)
    with contextlib.ExitStack() as stack:
        if address == "local":
            workers = n or os.cpu_count() or 1
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    dashboard_address=":0", silence_logs=40,  # any free port: never 8787 taken
                )  # fmt: skip
            )
            client = stack.enter_context(Client(cluster))
            client.wait_for_workers(workers, timeout=timeout)
            # they share this machine with the loader, the run's critical path:
            # they yield the CPU to it, as the local pool's processes do
            client.run(_yield_cpu)
        else:
            try:
                client = stack.enter_context(Client(address, timeout=timeout))
                client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError) as exc:
                raise ClusterError(f"cluster {address}: {exc}") from exc
        _check_workers(client)
        yield ClusterPool(client)
