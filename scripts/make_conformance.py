"""Write the conformance corpus (tests/conformance/*.jsonl) from the reference
engine (replay.engine, replay.match) and a brute-force minimax.

Deterministic: the same code gives the same files, byte for byte. Run it
(no arguments) after a change to the rules that changes a position, a score
or a value on purpose, and read the diff. tests/test_conformance.py checks
every implementation against these files.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from replay.engine import (
    LEFT,
    RIGHT,
    YIELD,
    HandState,
    Play,
    apply,
    can_apply,
    legal_moves,
    new_hand,
)
from replay.match import new_match, next_lead, record, redeal_due, score_hand
from replay.rules import PROFILES
from tests.conformance.corpus import brute, code, digest, successors, tiles_left, to_json, write
from tests.conformance.tables import TABLE_IDS, TABLES, deal, random_hand, rules_of

HANDS_PER_TABLE = 2
MATCH_HANDS = 5
ENDGAMES_PER_TABLE = 4


def play(s: HandState, rnd: random.Random) -> tuple[HandState, list[int], list[list[int]], list[list[str]]]:
    """Random legal moves to the end (no lead yield, so that a log could
    carry the hand), now and then the other end or orientation of a play."""
    moves: list[int] = []
    legal: list[list[int]] = []
    nexts: list[list[str]] = []
    while not s.over:
        codes, digests = successors(s)
        legal.append(codes)
        nexts.append(digests)
        m = rnd.choice([m for m in legal_moves(s) if m is not YIELD])
        if isinstance(m, Play) and rnd.random() < 0.3:
            alt = Play(m.tile, RIGHT if m.end == LEFT else LEFT)
            if can_apply(s, alt):
                m = alt
        moves.append(code(m))
        s = apply(s, m)
    return s, moves, legal, nexts


def score(s: HandState, profile: str) -> list[Any]:
    h = score_hand(new_match(s.rules, PROFILES[profile].shutout_note), s)
    return [h.result, h.winner, h.side, list(h.points), list(h.notes)]


def hands() -> list[dict[str, Any]]:
    out = []
    for table, tid in zip(TABLES, TABLE_IDS, strict=True):
        r = rules_of(table)
        rnd = random.Random(f"hands {tid}")
        for _ in range(HANDS_PER_TABLE):
            start = random_hand(r, rnd)
            final, moves, legal, nexts = play(start, rnd)
            assert legal_moves(final) == ()
            out.append({
                "table": tid, "start": to_json(start), "moves": moves, "legal": legal, "next": nexts,
                "final": to_json(final), "digest": digest(final), "score": score(final, table[0]),
            })  # fmt: skip
    return out


def matches() -> list[dict[str, Any]]:
    out = []
    for table, tid in zip(TABLES, TABLE_IDS, strict=True):
        r = rules_of(table)
        rnd = random.Random(f"match {tid}")
        m = new_match(r, PROFILES[table[0]].shutout_note)
        drawn = rnd.randrange(r.players) if r.lead_draw_used else None
        rematch = rnd.randrange(r.players) if not r.lead_draw_used and rnd.random() < 0.3 else None
        played: list[dict[str, Any]] = []
        while not m.over and len(played) < MATCH_HANDS:
            dealt, rest = deal(r, rnd)
            masks = [sum(1 << t for t in h) for h in dealt]
            if r.redeal != "none" and redeal_due(r, masks):
                continue  # thrown in: the match goes on as before
            lead = next_lead(m, masks, drawn_leader=drawn, rematch_leader=rematch)
            start = new_hand(r, dealt, leader=lead.seat, opening=lead.tile, stock=rest)
            final, moves, _, _ = play(start, rnd)
            h = score_hand(m, final)
            m = record(m, h, leader=lead.seat)
            played.append({
                "masks": masks, "stock": list(start.stock), "lead": [lead.seat, lead.tile], "moves": moves,
                "score": [h.result, h.winner, list(h.points), list(h.notes)],
                "match": [m.played, list(m.score), list(m.wins), m.over, m.result, m.winner, list(m.notes)],
            })  # fmt: skip
        out.append({"table": tid, "drawn": drawn, "rematch": rematch, "hands": played})
    return out


def endgame(r: Any, rnd: random.Random, left: int) -> HandState | None:
    s = random_hand(r, rnd)
    while s.result is None:
        if tiles_left(s) <= left:
            return s
        s = apply(s, rnd.choice(legal_moves(s)))
    return None


def endgames() -> list[dict[str, Any]]:
    out = []
    for table, tid in zip(TABLES, TABLE_IDS, strict=True):
        r = rules_of(table)
        rnd = random.Random(f"endgames {tid}")
        done = 0
        while done < ENDGAMES_PER_TABLE:
            s = endgame(r, rnd, rnd.randint(3, 9))
            if s is None:
                continue
            before, paid, seat = rnd.randrange(5), rnd.random() < 0.5, rnd.randrange(r.players)
            values = [[code(m), brute(apply(s, m), before, paid, seat)] for m in legal_moves(s)]
            out.append({"table": tid, "position": to_json(s), "played_before": before,
                        "first_block_paid": paid, "seat": seat, "values": values})  # fmt: skip
            done += 1
    return out


def main() -> None:
    t0 = time.perf_counter()
    for name, make in (("hands", hands), ("matches", matches), ("endgames", endgames)):
        lines = make()
        size = write(name, lines)
        print(f"{name}.jsonl: {len(lines)} lines, {size // 1024} KB")
    print(f"{len(TABLES)} tables, {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
