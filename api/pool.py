"""Replay pages and their JSON twins rendered in worker processes.

Drawing a hand (its board as SVG, every ply's notes as HTML, the page
around them; or its JSON twin, every ply with the principal lines laid on
the board) is pure Python, and the server's one process holds one core
at a time: the GIL. `replay serve` therefore hands the drawing to a small
pool of processes, one per core, which send back the bytes; the server
keeps the database, the routing and the caches.

Each worker is a process at the end of a socket pair: the event loop
writes a hand to an idle worker and reads its page back (`sock_sendall`,
`sock_recv_into`; a frame is a 4-byte length, then a pickle or the page).
No thread is involved on the server's side; `concurrent.futures`' process
pool cost three thread hand-offs and 0.46 ms of the server's CPU a page,
the socket 0.13 ms.

Workers are spawned, never forked: the server runs DuckDB's threads, and a
forked child would inherit their locks. A worker leaves when its pipe
closes, so a server killed with -9 leaves none behind. A pool that breaks
(a worker killed) is not fatal: pages are then drawn in the server
process, on a thread, as they are without a pool (the tests and
`create_app` by default).
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import pickle
import socket
import struct
import time
from collections import deque
from multiprocessing.process import BaseProcess
from typing import Any, cast

import anyio.to_thread

from api.hand_page import hand_json
from api.pages import draw_hand_page, warm
from api.replay_model import HandData

__all__ = ["RenderPool", "read_exactly", "send_all"]

TIMEOUT = 60.0  # seconds a page may take before its worker counts as lost
READY = 60.0  # seconds a worker may take to load before the pool gives up on workers
_OK, _FAILED = b"+", b"-"
#: What a worker draws, by the name a job carries.
_DRAW: dict[str, Any] = {"page": draw_hand_page, "json": hand_json}


_LEN = struct.Struct("!I")


def _frame(body: bytes) -> bytes:
    return _LEN.pack(len(body)) + body


def read_exactly(sock: socket.socket, n: int) -> bytes | None:
    """`n` bytes from a blocking socket; None at its end."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            return None
        got += k
    return bytes(buf)


def _serve(sock: socket.socket) -> None:
    """A worker's life: say it is ready (its modules and templates loaded),
    then read a hand, send its page, until the socket closes."""
    warm()
    # what start-up made (modules, templates) out of the collector's sight,
    # and collections less often: a drawing allocates about 100,000 short-lived
    # containers, and the default threshold ran a collection every 700 of them
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 50, 50)
    try:
        sock.sendall(_OK)
    except OSError:
        return
    while True:
        try:
            head = read_exactly(sock, _LEN.size)
            body = read_exactly(sock, _LEN.unpack(head)[0]) if head is not None else None
        except OSError:
            return
        if body is None:  # the server is gone
            return
        try:
            kind, args = pickle.loads(body)
            status, reply = _OK, _DRAW[kind](*args)
        except Exception as exc:  # the server raises it, with the worker's words
            status, reply = _FAILED, f"{type(exc).__name__}: {exc}".encode()
        try:  # the page as it is: joined to its header, its 100 KB were copied twice
            send_all(sock, (_LEN.pack(len(reply) + 1) + status, reply))
        except OSError:
            return


def send_all(sock: socket.socket, parts: tuple[bytes, ...]) -> None:
    """`parts` down a blocking socket, one after the other, with no copy joining them."""
    views = [memoryview(p) for p in parts]
    while views:
        sent = sock.sendmsg(views)
        while views and sent >= len(views[0]):
            sent -= len(views[0])
            views.pop(0)
        if views:
            views[0] = views[0][sent:]


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Mark a finished ask's outcome as seen (its request may have gone)."""
    if not task.cancelled():
        task.exception()


class WorkerLost(RuntimeError):
    """A render worker died or hung mid-page."""


class RenderPool:
    """``draw_hand_page`` and ``hand_json`` in `workers` processes (0: on a
    thread of this one)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._procs: list[BaseProcess] = []
        self._idle: deque[socket.socket] = deque()
        self._waiting: deque[asyncio.Future[socket.socket]] = deque()
        ctx = multiprocessing.get_context("spawn")
        for _ in range(workers):
            ours, theirs = socket.socketpair()
            proc = ctx.Process(target=_serve, args=(theirs,), name="render-worker", daemon=True)
            proc.start()
            theirs.close()  # the worker's end lives in the worker only: its exit closes the socket
            self._procs.append(proc)
            self._idle.append(ours)
        # wait until every worker has loaded its modules and templates (a
        # second or two): a server answering before then would queue its
        # first pages behind the workers' imports
        for sock in self._idle:
            sock.settimeout(READY)
            try:
                ready = sock.recv(1) == _OK
            except OSError:
                ready = False
            if not ready:
                self._break()
                return
            sock.setblocking(False)

    @property
    def live(self) -> bool:
        """Whether pages go to the workers (False without any, or once one is lost)."""
        return bool(self._procs)

    async def page(self, hand: HandData, info: dict[str, Any], seats: list[dict[str, Any]], ply: int | None,
                   viewer: int | None = None, flagged: frozenset[str] = frozenset()) -> bytes:
        """The hand's replay page (api.pages.draw_hand_page), drawn by a free worker;
        `flagged`: the seats' players to mark (a worker has no store to ask).

        Call on the event loop that owns the pool; requests wait their turn
        for a worker, first come first served.
        """
        return await self._draw("page", (hand, info, seats, ply, viewer, flagged))

    async def twin(self, hand: HandData, info: dict[str, Any], seats: list[dict[str, Any]],
                   viewer: int | None = None) -> bytes:
        """The hand's JSON twin (api.hand_page.hand_json), drawn by a free
        worker: the hand carries its principal lines already (the server's
        `api.review.LineBook`), so a worker searches nothing."""
        return await self._draw("json", (hand, info, seats, viewer))

    async def _draw(self, kind: str, args: tuple[Any, ...]) -> bytes:
        if self._procs:
            payload = pickle.dumps((kind, args), protocol=pickle.HIGHEST_PROTOCOL)
            try:
                sock = await self._acquire()
                # shielded: a request cancelled mid-page still reads its reply,
                # which would otherwise be the next request's
                ask = asyncio.ensure_future(self._ask(sock, payload))
                ask.add_done_callback(_retrieved)
                reply = await asyncio.wait_for(asyncio.shield(ask), TIMEOUT)
            except (TimeoutError, WorkerLost):
                self._break()
            else:
                body = bytes(memoryview(reply)[1:])  # the one copy of the page the server makes
                if reply[:1] == _FAILED:
                    raise RuntimeError(f"render worker: {body.decode(errors='replace')}")
                return body
        return cast(bytes, await anyio.to_thread.run_sync(_DRAW[kind], *args))

    async def _acquire(self) -> socket.socket:
        if self._idle:
            return self._idle.popleft()
        got: asyncio.Future[socket.socket] = asyncio.get_running_loop().create_future()
        self._waiting.append(got)
        try:
            return await got
        except asyncio.CancelledError:
            if got.done() and not got.cancelled():  # handed a worker just as it was cancelled
                self._release(got.result())
            raise

    def _release(self, sock: socket.socket) -> None:
        while self._waiting:
            nxt = self._waiting.popleft()
            if not nxt.done():  # a waiter may have been cancelled (client gone)
                nxt.set_result(sock)
                return
        self._idle.append(sock)

    async def _ask(self, sock: socket.socket, payload: bytes) -> bytearray:
        """Send one hand down `sock` and read its reply; the worker is then free."""
        loop = asyncio.get_running_loop()
        try:
            await loop.sock_sendall(sock, _frame(payload))
            head = await self._read(loop, sock, _LEN.size)
            reply = await self._read(loop, sock, _LEN.unpack(head)[0])
        except OSError as exc:
            raise WorkerLost(f"render worker gone: {exc!r}") from None
        self._release(sock)
        return reply

    @staticmethod
    async def _read(loop: asyncio.AbstractEventLoop, sock: socket.socket, n: int) -> bytearray:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = await loop.sock_recv_into(sock, view[got:])
            if k == 0:
                raise WorkerLost("render worker gone mid-reply")
            got += k
        return buf

    def _break(self) -> None:
        """A worker is lost: stop them all and draw in-process from now on
        (waiting requests included)."""
        procs, self._procs = self._procs, []
        for proc in procs:
            proc.kill()
        self._idle.clear()
        while self._waiting:
            w = self._waiting.popleft()
            if not w.done():
                w.set_exception(WorkerLost("render pool stopped"))

    def close(self, wait: float = 1.0) -> None:
        """Stop the workers: an idle one leaves when its socket closes; one
        still drawing after ``wait`` seconds (for them all) is killed."""
        procs, self._procs = self._procs, []
        for sock in self._idle:
            sock.close()  # the worker's recv sees EOF and it leaves
        self._idle.clear()
        deadline = time.monotonic() + wait
        for proc in procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=1)
