"""The render worker's reply: header and page sent without joining them."""

from __future__ import annotations

import socket
import struct
import threading

from api.pool import read_exactly, send_all

_LEN = struct.Struct("!I")  # a frame's length, as the pool writes it


def test_send_all_delivers_every_byte_in_order_past_the_socket_buffer() -> None:
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # many partial sends
    page = bytes(range(256)) * 4096  # 1 MiB, every byte value
    got: list[bytes | None] = []
    reader = threading.Thread(target=lambda: got.append(read_exactly(b, _LEN.size + 1 + len(page))))
    reader.start()
    try:
        send_all(a, (_LEN.pack(len(page) + 1) + b"+", page))
    finally:
        reader.join(timeout=30)
        a.close()
        b.close()
    assert got and got[0] is not None
    assert _LEN.unpack(got[0][:_LEN.size])[0] == len(page) + 1
    assert got[0][_LEN.size:] == b"+" + page


def test_send_all_of_empty_parts_sends_nothing() -> None:
    a, b = socket.socketpair()
    try:
        send_all(a, (b"", b""))
        b.setblocking(False)
        try:
            assert b.recv(1) == b""
            raise AssertionError("unreachable: the socket is still open")
        except BlockingIOError:
            pass  # nothing was sent
    finally:
        a.close()
        b.close()
