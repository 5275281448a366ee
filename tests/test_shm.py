"""replay.ingest.shm: a chunk's bytes through shared memory, not the pipe."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.ingest import shm

pytestmark = pytest.mark.skipif(not shm.available(), reason="no /dev/shm")


def _shm_path(name: str) -> str:
    return os.path.join(shm.SHM_DIR, name.lstrip("/"))


@given(st.lists(st.binary(max_size=300), max_size=40))
@settings(max_examples=60, deadline=None)
def test_what_goes_in_comes_out(blobs: list[bytes]) -> None:
    segs = shm.Segments()
    try:
        held = segs.put(blobs)
        assert held is not None
        assert shm.receive(held.name, held.spans) == blobs
    finally:
        segs.close()


def test_segments_are_reused_and_unlinked_at_close() -> None:
    segs = shm.Segments()
    first = segs.put([b"x" * 1000])
    assert first is not None
    segs.release(first)
    again = segs.put([b"y" * 900])  # fits the first one: no new segment
    assert again is not None and again.name == first.name
    assert shm.receive(again.name, again.spans) == [b"y" * 900]
    bigger = segs.put([b"z" * 5000])  # the first is busy: a second one
    assert bigger is not None and bigger.name != first.name
    names = [again.name, bigger.name]
    assert all(os.path.exists(_shm_path(n)) for n in names)
    segs.close()
    assert not any(os.path.exists(_shm_path(n)) for n in names)


def test_only_a_few_free_segments_are_kept() -> None:
    segs = shm.Segments()
    held = [segs.put([b"a" * (100 * (k + 1))]) for k in range(shm.KEEP + 3)]
    names = [h.name for h in held if h is not None]
    for h in held:
        assert h is not None
        segs.release(h)
    alive = [n for n in names if os.path.exists(_shm_path(n))]
    assert len(alive) == shm.KEEP
    assert alive == names[-shm.KEEP :]  # the smallest went first
    segs.close()


def _read(name: str, spans: list[int]) -> list[bytes]:
    return shm.receive(name, spans)


def test_a_forked_worker_reads_a_segment_made_after_it_started() -> None:
    # the pool's workers are forked before the run makes its first segment
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        pool.submit(os.getpid).result()
        segs = shm.Segments()
        try:
            held = segs.put([b'{"type":"deal"}', b"", b"\xff\x00 raw bytes"])
            assert held is not None
            got = pool.submit(_read, held.name, list(held.spans)).result()
            assert got == [b'{"type":"deal"}', b"", b"\xff\x00 raw bytes"]
        finally:
            segs.close()


def test_a_full_dev_shm_falls_back_to_the_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    # a tmpfs too small for the segment: no segment (and none left behind),
    # where writing through the mapping would have been a SIGBUS
    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(28, "No space left on device")

    before = set(os.listdir(shm.SHM_DIR))
    monkeypatch.setattr(os, "posix_fallocate", full)
    segs = shm.Segments()
    assert segs.put([b"x" * 4096]) is None
    segs.close()
    assert set(os.listdir(shm.SHM_DIR)) <= before
