"""Replay speed of `international` hands: the fast path and the state machine.

    python bench/engine.py            # 20,000 hands
    python bench/engine.py --full     # 200,000 hands

Deals and random legal move lists are generated first (untimed, by a
plain bitmask player here). Then every hand is replayed, with every move
checked, by the C hand replayer (``replay._native.replay_hand``, over the
moves packed as the scanner packs them) and, on a share of them, by
`replay.engine.apply` (one `HandState` per move). Both must end every hand
the same way; the headline is the fast path's rate.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay import moves as mv  # noqa: E402
from replay.accel import native  # noqa: E402
from replay.canonical_reader import MOVE  # noqa: E402
from replay.engine import apply, new_hand  # noqa: E402
from replay.rules import resolve  # noqa: E402
from replay.tiles import HIGH, LOW, OTHER, SUIT_MASK, iter_tiles  # noqa: E402

FIT = [SUIT_MASK[e // 7] | SUIT_MASK[e % 7] for e in range(49)]


def random_hand(rnd: random.Random) -> tuple[list[int], int, list[int]]:
    """A shuffled 4-seat deal, a leader, and random legal moves to the end."""
    deck = list(range(28))
    rnd.shuffle(deck)
    hands = [sum(1 << t for t in deck[7 * s : 7 * s + 7]) for s in range(4)]
    dealt = [deck[7 * s : 7 * s + 7] for s in range(4)]
    leader = rnd.randrange(4)
    h = list(hands)
    turn = leader
    t = rnd.choice(dealt[turn])
    end = rnd.randrange(2)
    moves = [2 * t + end]
    h[turn] ^= 1 << t
    hi, lo = HIGH[t], LOW[t]
    left, right = (hi, lo) if end == 0 else (lo, hi)
    turn = (turn + 1) % 4
    while True:
        fits = h[turn] & FIT[left * 7 + right]
        if not fits:
            moves.append(mv.PASS)
            turn = (turn + 1) % 4
            continue
        t = rnd.choice(list(iter_tiles(fits)))
        ends = [e for e, num in ((0, left), (1, right)) if OTHER[t][num] >= 0]
        end = rnd.choice(ends)
        moves.append(2 * t + end)
        h[turn] ^= 1 << t
        if end == 0:
            left = OTHER[t][left]
        else:
            right = OTHER[t][right]
        if not h[turn]:
            break
        rest = h[0] | h[1] | h[2] | h[3]
        if not rest & FIT[left * 7 + right]:
            break
        turn = (turn + 1) % 4
    return hands, leader, moves


def pack(moves: list[int], leader: int) -> bytes:
    """The moves as the scanner packs a log's move lines (replay.canonical_reader.MOVE)."""
    out = []
    seat = leader
    for k, code in enumerate(moves):
        if code == mv.PASS:
            kind, tile, how = 1, 0, 2
        else:
            t, end = mv.tile_of(code), mv.end_of(code)
            kind, tile = 0, t
            # the first tile: no end, its face says which half goes left
            how = 2 + 4 * (HIGH[t] if end == 0 else LOW[t]) if k == 0 else end + 4 * HIGH[t]
        out.append(MOVE.pack(k, 0, 0, k + 1, 1, kind, seat, tile, how))
        seat = (seat + 1) % 4
    return b"".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("-n", type=int, default=20_000, help="hands (default 20,000)")
    ap.add_argument("--full", action="store_true", help="200,000 hands")
    args = ap.parse_args()
    n = 200_000 if args.full else args.n
    rules = resolve("international")
    rnd = random.Random(2024)
    games = [random_hand(rnd) for _ in range(n)]
    total_moves = sum(len(m) for _, _, m in games)

    if native is None:
        sys.exit("replay._native is not built: pip install -e . compiles it")
    packed = [(tuple(hands), leader, pack(moves, leader), len(moves)) for hands, leader, moves in games]

    # fast path: best of three passes over all hands
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for hands_t, leader, data, k in packed:
            native.replay_hand(data, 0, k, 1, hands_t, b"", leader, -1, False, False)
        best = min(best, time.perf_counter() - t0)
    fast_rate = n / best

    # state machine: one HandState per move, on a share of the hands
    share = games[: max(1, n // 10)]
    decoded = [(hands, leader, [mv.to_engine(c) for c in moves]) for hands, leader, moves in share]
    t0 = time.perf_counter()
    ends = []
    for hands, leader, moves_of in decoded:
        s = new_hand(rules, [list(iter_tiles(h)) for h in hands], leader=leader)
        for m in moves_of:
            s = apply(s, m)
        ends.append(s)
    engine_rate = len(share) / (time.perf_counter() - t0)

    # both paths end every hand alike (untimed)
    for (hands_t, leader, data, k), s in zip(packed, ends, strict=False):
        f = native.replay_hand(data, 0, k, 1, hands_t, b"", leader, -1, False, False)
        # (hands, stock left, left, right, turn, passes, blocker, result, ...)
        assert (f[7], f[0], f[2], f[3], f[5]) == (s.result, s.hands, s.left, s.right, s.passes)
    blocks = sum(1 for s in ends if s.result == "block")

    print(f"hands: {n}  moves: {total_moves}  moves_per_hand: {total_moves / n:.1f}")
    print(f"blocked_share: {blocks / len(ends):.3f}")
    print(f"fast_us_per_hand: {best / n * 1e6:.2f}")
    print(f"fast_moves_per_s: {total_moves / best:,.0f}")
    print(f"state_machine_hands_per_s: {engine_rate:,.0f} hands/s")
    print(f"engine_hands_per_s: {fast_rate:,.0f} hands/s")


if __name__ == "__main__":
    main()
