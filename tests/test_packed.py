"""replay.store.replay_blob: a match's replay rows in one value, and back.

Every match of the test store is compared with its SQL reads in
tests/test_api.py; here the corners: NULLs of every kind, strings outside
the codes, a batch whose moves are not in order, a body the same whatever
batch it was packed in, and no polars in the workers' path.
"""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc

from replay.store.replay_blob import pack_replays, unpack_replay
from replay.store.rows import SCHEMAS

T = pa.timestamp("ms", tz="UTC")


def _batch(moves_in_order: bool = True) -> dict[str, pa.Table]:
    matches = pa.table({"match": ["m-b", "m-a"]})
    seats = pa.table({
        "match": ["m-a", "m-b", "m-a", "m-a"], "seat": [1, 0, 0, 0], "player": ["p2", "p9", "p1", "p3"],
        "name": ["Ana", None, "Luis", "Bot"], "bot": [False, False, False, True], "from_hand": [1, 1, 1, 3],
        "seq": [2, 1, 1, 40],
    }, schema=pa.schema([SCHEMAS["seats"].field(c) for c in ("match", "seat", "player", "name", "bot", "from_hand", "seq")]))
    hands = pa.table({
        "match": ["m-a", "m-a", "m-b"], "hand": [1, 2, 1], "result": ["domino", None, "block"],
        "winner": [0, None, None], "points": [[12, 0], None, [3, 3]], "score": [[12, 0], [12, 0], [3, 3]],
        "notes": [["capicua"], [], None], "leader": [0, 1, None], "blocker": [None, None, 1],
        "dealt": [[[27, 26], [0, 1, 2]], None, [[]]], "stock": [[5, 6], None, []],
        "started": pa.array([1_764_547_200_000, None, 1_764_547_260_999], T),
        "deal_ok": [True, None, False], "seed_ok": [True, True, None], "play_ok": [False, True, True],
    }, schema=pa.schema([SCHEMAS["hands"].field(c) for c in (
        "match", "hand", "result", "winner", "points", "score", "notes", "leader", "blocker", "dealt",
        "stock", "started", "deal_ok", "seed_ok", "play_ok")]))
    rows = [  # match, hand, ply, seq, seat, kind, tile, on_end, left, right, stock, forced, legal, error
        ("m-a", 1, 1, 5, 0, "play", 27, None, 6, 6, 0, True, [54], None),
        ("m-a", 1, 2, 6, 1, "pass", None, None, 6, 6, None, None, None, "NOT_VOID"),
        ("m-a", 2, 1, 9, 1, "draw", 3, None, -1, -1, 4, False, [], None),
        ("m-b", 1, 1, 2, 0, "yield", None, "right", 2, 3, 7, False, [-3, -1, 12], "ODD"),
        ("m-b", 1, 2, 3, 1, "wait", None, "top", 2, 3, 7, False, [], None),  # strings not coded
    ]
    if not moves_in_order:
        rows = [rows[4], rows[3], rows[2], rows[0], rows[1]]
    cols = list(zip(*rows, strict=True))
    names = ("match", "hand", "ply", "seq", "seat", "kind", "tile", "on_end", "left_end", "right_end",
             "stock", "forced", "legal_moves", "error")
    moves = pa.table(dict(zip(names, map(list, cols), strict=True)),
                     schema=pa.schema([SCHEMAS["moves"].field(c) for c in names]))
    return {"matches": matches, "seats": seats, "hands": hands, "moves": moves}


def test_a_body_gives_back_every_row_and_null() -> None:
    # moves in the order written, and not (then sorted)
    for in_order in (True, False):
        got = pack_replays(_batch(in_order))  # in the batch's match order: m-b, m-a
        assert len(got) == 2
        body = got[1].as_py()
        assert unpack_replay(b"\x00" + body[1:]) is None  # another format: read the tables
        unpacked = unpack_replay(body)
        assert unpacked is not None
        seats, hands, moves = unpacked
        assert seats == [  # in seat history order: seq, then seat
            {"seat": 0, "player": "p1", "name": "Luis", "bot": False, "from_hand": 1},
            {"seat": 1, "player": "p2", "name": "Ana", "bot": False, "from_hand": 1},
            {"seat": 0, "player": "p3", "name": "Bot", "bot": True, "from_hand": 3},
        ]
        assert hands[1] == {
            "hand": 1, "result": "domino", "winner": 0, "points": [12, 0], "score": [12, 0],
            "notes": ["capicua"], "leader": 0, "blocker": None, "dealt": [[27, 26], [0, 1, 2]],
            "boneyard": 2, "started": "2025-12-01 00:00", "deal_ok": True, "seed_ok": True, "play_ok": False,
        }
        assert hands[2]["dealt"] is None and hands[2]["points"] is None and hands[2]["notes"] == []
        assert hands[2]["started"] is None and hands[2]["boneyard"] is None and hands[2]["deal_ok"] is None
        assert moves == {
            1: [(1, 5, 0, "play", 27, None, 6, 6, 0, [54], True, None),
                (2, 6, 1, "pass", None, None, 6, 6, None, None, None, "NOT_VOID")],
            2: [(1, 9, 1, "draw", 3, None, -1, -1, 4, [], False, None)],
        }
        unpacked = unpack_replay(got[0].as_py())
        assert unpacked is not None
        seats, hands, moves = unpacked
        assert [s["player"] for s in seats] == ["p9"]
        assert hands[1]["dealt"] == [[]] and hands[1]["notes"] is None and hands[1]["started"] == "2025-12-01 00:01"
        assert moves == {1: [(1, 2, 0, "yield", None, "right", 2, 3, 7, [-3, -1, 12], False, "ODD"),
                             (2, 3, 1, "wait", None, "top", 2, 3, 7, [], False, None)]}


def test_a_body_depends_on_its_match_alone() -> None:
    both = _batch()
    alone = {t: v.filter(pc.equal(v.column("match"), "m-b")) for t, v in both.items()}
    assert pack_replays(alone)[0] == pack_replays(both)[0]


def test_the_workers_path_needs_no_polars() -> None:
    """Workers are forked: polars' thread pool, started in the parent, would
    leave a polars call in the child waiting for ever."""
    code = "import sys, replay.store.replay_blob, replay.store.rows; assert 'polars' not in sys.modules, 'polars imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _as_format_1(body: bytes) -> bytes:
    """A FORMAT 2 body written as FORMAT 1 wrote it (the moves as records)."""
    import numpy as np

    from replay.store.replay_blob import _HEAD, _SIZE, _ZSTD, MOVE  # noqa: PLC2701 - the byte layout under test

    _, whole = _SIZE.unpack_from(body)
    raw = _ZSTD.decompress(memoryview(body)[_SIZE.size :], whole, asbytes=True)
    size, count, _ = _HEAD.unpack_from(raw)
    start = _HEAD.size + size
    rec, at = np.empty(count, MOVE), start
    for f in MOVE.names:
        rec[f] = np.frombuffer(raw, MOVE[f], count, at)
        at += count * MOVE[f].itemsize
    old = raw[:start] + rec.tobytes() + raw[at:]
    return _SIZE.pack(1, len(old)) + _ZSTD.compress(old, asbytes=True)


def test_a_body_of_the_first_format_still_reads() -> None:
    """Stores hold FORMAT 1 bodies (moves row by row) from before FORMAT 2."""
    for body in pack_replays(_batch()).to_pylist():
        assert body[0] == 2
        old = _as_format_1(body)
        assert old != body and unpack_replay(old) == unpack_replay(body) is not None
