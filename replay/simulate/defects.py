"""The catalogue of planted defects: a tiny log with one error of each finding code.

`defect_log(code)` plays a short clean match and plants one error of that
code, either in play (the match runner's hooks, `replay.simulate.match`) or
by editing the finished log; `DEFECTS` maps each code to the codes a
validator reports for it. The sample logs in `sample_logs_defects/` are
these logs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Final

import orjson

from replay.simulate.config import EPOCH_MS, SimConfig, make_pool
from replay.simulate.match import Plant, SimMatch, Stamp
from replay.tiles import parse_tile, tile_name, weight_key

# --- defects -------------------------------------------------------------------------

#: The short tables defect logs are played at.
_INTL_SHORT: Final = ("international", {"match_end": {"kind": "points", "target": 50}})
_DOMENA_SHORT: Final = ("domena_2p", {"match_end": {"kind": "points", "target": 40}})
_PR_SHORT: Final = ("puerto_rico", {"match_end": {"kind": "points", "target": 50}})
_VEN_SHORT: Final = ("venezuela", {"match_end": {"kind": "points", "target": 40}})
_COL_SHORT: Final = ("colombia", {"match_end": {"kind": "points", "target": 40}})

#: Every planted code -> the codes a validator reports on that log (sorted).
DEFECTS: Final[dict[str, tuple[str, ...]]] = {
    "MALFORMED_LINE": ("MALFORMED_LINE",),
    "SCHEMA_ERROR": ("SCHEMA_ERROR",),
    "UNKNOWN_EVENT": ("UNKNOWN_EVENT",),
    "RULES_UNKNOWN": ("RULES_UNKNOWN",),
    "SEQ_GAP": ("SEQ_GAP",),
    "SEQ_DUPLICATE": ("SEQ_DUPLICATE",),
    "SEQ_REPEATED": ("SEQ_REPEATED",),
    "TIME_ORDER": ("TIME_ORDER",),
    "MATCH_INCOMPLETE": ("MATCH_INCOMPLETE",),
    "HAND_INCOMPLETE": ("HAND_INCOMPLETE", "MATCH_INCOMPLETE"),
    "COMMIT_MISSING": ("COMMIT_MISSING",),
    "REVEAL_MISSING": ("REVEAL_MISSING",),
    "REVEAL_EARLY": ("REVEAL_EARLY",),
    "COMMIT_MISMATCH": ("COMMIT_MISMATCH",),
    "SEED_REUSED": ("SEED_REUSED",),
    "DEAL_MISMATCH": ("DEAL_MISMATCH",),
    "DRAW_MISMATCH": ("DRAW_MISMATCH",),
    "LEAD_DRAW_MISMATCH": ("LEAD_DRAW_MISMATCH",),
    "WRONG_LEADER": ("WRONG_LEADER",),
    "WRONG_OPENING": ("WRONG_OPENING",),
    "NOT_YOUR_TURN": ("NOT_YOUR_TURN",),
    "TILE_NOT_IN_HAND": ("TILE_NOT_IN_HAND",),
    "TILE_DOES_NOT_FIT": ("TILE_DOES_NOT_FIT",),
    "FALSE_PASS": ("FALSE_PASS",),
    "ILLEGAL_DRAW": ("ILLEGAL_DRAW",),
    "DRAWN_TILE_NOT_PLAYED": ("DRAWN_TILE_NOT_PLAYED",),
    "LEAD_YIELD_INVALID": ("LEAD_YIELD_INVALID",),
    "REDEAL_INVALID": ("REDEAL_INVALID",),
    "EVENT_AFTER_END": ("EVENT_AFTER_END",),
    "HAND_NOT_OVER": ("HAND_NOT_OVER",),
    "RESULT_MISMATCH": ("RESULT_MISMATCH",),
    "POINTS_MISMATCH": ("POINTS_MISMATCH",),
    "SCORE_MISMATCH": ("SCORE_MISMATCH",),
    "MATCH_END_MISMATCH": ("MATCH_END_MISMATCH",),
    "NOTE_MISMATCH": ("NOTE_MISMATCH",),
    "REMATCH_UNKNOWN": ("REMATCH_UNKNOWN",),
}

#: Table, planted-in-play flag and the hand/ply to plant from, per code.
_DEFECT_TABLE: Final[dict[str, tuple[tuple[str, dict[str, Any]], int, int]]] = {
    "COMMIT_MISMATCH": (_INTL_SHORT, 2, 0),
    "DEAL_MISMATCH": (_INTL_SHORT, 2, 0),
    "DRAW_MISMATCH": (_DOMENA_SHORT, 1, 0),
    "WRONG_LEADER": (_INTL_SHORT, 2, 0),
    "WRONG_OPENING": (_VEN_SHORT, 1, 0),
    "NOT_YOUR_TURN": (_INTL_SHORT, 1, 4),
    "TILE_NOT_IN_HAND": (_INTL_SHORT, 1, 4),
    "TILE_DOES_NOT_FIT": (_INTL_SHORT, 1, 4),
    "FALSE_PASS": (_INTL_SHORT, 1, 4),
    "ILLEGAL_DRAW": (_DOMENA_SHORT, 1, 2),
    "DRAWN_TILE_NOT_PLAYED": (_DOMENA_SHORT, 1, 0),
    "LEAD_YIELD_INVALID": (_INTL_SHORT, 2, 0),
    "REDEAL_INVALID": (_COL_SHORT, 2, 0),
    "EVENT_AFTER_END": (_INTL_SHORT, 1, 0),
    "HAND_NOT_OVER": (_PR_SHORT, 1, 0),
}


def _renumber(events: list[tuple[int, dict[str, Any]]]) -> None:
    for i, (_, ev) in enumerate(events):
        ev["seq"] = i


def _find(
    events: Sequence[tuple[int, dict[str, Any]]], pred: Callable[[dict[str, Any]], bool]
) -> int:
    for i, (_, ev) in enumerate(events):
        if pred(ev):
            return i
    raise LookupError("no such event")


def _one_match(
    code: str,
    seed: int,
    table: tuple[str, dict[str, Any]],
    *,
    plant: Plant | None = None,
    rematch_of: str | None = None,
    top_seed: bytes | None = None,
    match_id: str | None = None,
) -> SimMatch:
    profile, overrides = table
    if match_id is None:
        match_id = f"m-{code.lower().replace('_', '-')}-{seed}"
    # no rematches, seat changes or late reveals: nothing but the planted error
    cfg = SimConfig(
        profiles=(profile,),
        overrides=overrides,
        seed=seed,
        rematch_rate=0.0,
        seat_change_rate=0.0,
        reveal_delay_rate=0.0,
        flip_openings=False,
    )
    # the code is part of the seed: no two defect logs share a match id or an
    # anchor, so a folder of them can be read at once
    rng = random.Random(f"{code}/{seed}")
    n = cfg.rules_for(profile).players
    pool = make_pool(12)
    seats = rng.sample(pool, n)
    sim = SimMatch(
        cfg,
        rng,
        match_id=match_id,
        table="t-9",
        profile=profile,
        seats=seats,
        start_ms=EPOCH_MS + 40 * 86_400_000 + seed * 3_600_000 % 86_400_000,
        pool=pool,
        rematch_of=rematch_of,
        rematch_leader=None if rematch_of is None else rng.randrange(n),
        top_seed=top_seed,
        plant=plant,
    )
    return sim.run()


def _hand_ends(events: Sequence[tuple[int, dict[str, Any]]]) -> list[int]:
    return [i for i, (_, ev) in enumerate(events) if ev["type"] == "hand_end"]


def _defect_events(code: str, seed: int) -> list[tuple[int, dict[str, Any]]] | None:
    """One try at a defect log; None when this seed does not give the chance."""
    if code in _DEFECT_TABLE:
        table, hand, ply = _DEFECT_TABLE[code]
        if code == "WRONG_LEADER":
            # the last hand, so that no later lead depends on the wrong one
            clean = _one_match(code, seed, table)
            hand = len(_hand_ends(clean.events))
            if hand < 2:
                return None
        plant = Plant(code, hand=hand, ply=ply)
        sim = _one_match(code, seed, table, plant=plant)
        if not plant.done:
            return None
        if code == "WRONG_LEADER" and len(_hand_ends(sim.events)) != plant.hand_done:
            return None
        return sim.events
    if code == "SEED_REUSED":
        a = _one_match(code, seed, _INTL_SHORT, match_id=f"m-seed-reused-{seed}-a")
        b = _one_match(
            code, seed + 1, _INTL_SHORT, match_id=f"m-seed-reused-{seed}-b", top_seed=a.top_seed
        )
        return a.events + b.events
    if code == "REMATCH_UNKNOWN":
        return _one_match(code, seed, _INTL_SHORT, rematch_of=f"m-gone-{seed}").events
    ev = _one_match(code, seed, _INTL_SHORT).events
    ends = _hand_ends(ev)
    stamp = Stamp()
    if code in ("SCORE_MISMATCH", "REVEAL_MISSING", "MATCH_INCOMPLETE") and len(ends) < 2:
        return None
    if code == "MALFORMED_LINE":
        ev.insert(5, (ev[4][0], {"__raw__": b'{"type":"play","match":"m-mal'}))
    elif code == "SCHEMA_ERROR":
        # no readable `match`: a top-level finding, no match touched
        ms, e = ev[5]
        ev.insert(5, (ms, {"type": "pass", "seq": 5, "ts": e["ts"], "hand": 1, "seat": 0}))
    elif code == "UNKNOWN_EVENT":
        # an event type v1 does not know; no seq, so no seq finding either way
        ms, e = ev[5]
        ev.insert(
            5, (ms, {"type": "chat", "match": e["match"], "ts": e["ts"], "hand": 1, "text": "gg"})
        )
    elif code == "RULES_UNKNOWN":
        ev[0][1]["rules"] = {**ev[0][1]["rules"], "spinner": True}
    elif code == "SEQ_GAP":
        for _, e in ev[6:]:
            e["seq"] += 1
    elif code in ("SEQ_DUPLICATE", "SEQ_REPEATED"):
        # a reveal is harmless to replay twice, whichever copy a reader keeps
        i = _find(ev, lambda e: e["type"] == "reveal")
        ms, e = ev[i]
        copy = dict(e)
        if code == "SEQ_DUPLICATE":
            copy["ts"] = stamp(ms + 1)  # a different event with the same seq
        ev.insert(i + 1, (ms + 1, copy))
    elif code == "TIME_ORDER":
        ms, e = ev[6]
        e["ts"] = stamp(ev[5][0] - 1000)
    elif code == "MATCH_INCOMPLETE":
        i = _find(ev, lambda e: e["type"] == "reveal")
        del ev[i + 1 :]
    elif code == "HAND_INCOMPLETE":
        i = _find(ev, lambda e: e["type"] == "hand_end")
        del ev[i - 2 :]  # the log stops two moves before the end of hand 1
    elif code == "COMMIT_MISSING":
        del ev[0][1]["anchor"]
    elif code == "REVEAL_MISSING":
        # hand 2's: hand 1's seed also checks the lead draw
        del ev[_find(ev, lambda e: e["type"] == "reveal" and e["hand"] == 2)]
        _renumber(ev)
    elif code == "REVEAL_EARLY":
        i = _find(ev, lambda e: e["type"] == "reveal")
        r = ev.pop(i)
        d = _find(ev, lambda e: e["type"] == "deal" and e["hand"] == r[1]["hand"])
        ev.insert(d + 2, r)  # after the hand's first tile, long before its end
        _renumber(ev)
        _retime(ev)
    elif code == "LEAD_DRAW_MISMATCH":
        i = _find(ev, lambda e: e["type"] == "lead_draw")
        draws = ev[i][1]["draws"]
        tiles = [parse_tile(t) for _, t in draws]
        top = max(tiles, key=weight_key)
        low = min(range(len(draws)), key=lambda k: weight_key(tiles[k]))
        other = [t for t in range(28) if t not in tiles and weight_key(t) < weight_key(top)]
        if not other:
            return None
        draws[low][1] = tile_name(other[0])  # the leader stays the leader
    elif code == "RESULT_MISMATCH":
        k = next((i for i in ends if ev[i][1]["result"] == "domino"), None)
        if k is None:
            return None
        e = ev[k][1]
        e["winner"] = (e["winner"] + 2) % 4  # the partner: same side, same points
    elif code == "POINTS_MISMATCH":
        e = ev[ends[0]][1]
        e["points"] = [p + 10 for p in e["points"]]  # the score stays the true one
    elif code == "SCORE_MISMATCH":
        # the last hand's running score is off by one; match_end repeats that
        # claimed score (a later claim builds on the earlier claim, so this is
        # reported once)
        e = ev[ends[-1]][1]
        low = min(range(len(e["score"])), key=lambda k: e["score"][k])
        target = 50
        if e["score"][low] + 1 >= target:
            return None
        e["score"][low] += 1
        ev[-1][1]["score"] = list(e["score"])
    elif code == "MATCH_END_MISMATCH":
        e = ev[-1][1]
        if e["winner"] is None:
            return None
        e["winner"] = 1 - e["winner"]
    elif code == "NOTE_MISMATCH":
        k = next((i for i in ends if not ev[i][1].get("notes")), None)
        if k is None:
            return None
        ev[k][1]["notes"] = ["capicua"]
    else:
        raise ValueError(f"no defect for {code!r} (known: {', '.join(DEFECTS)})")
    return ev


def _retime(events: list[tuple[int, dict[str, Any]]]) -> None:
    """Stamps in list order again (after moving an event), keeping the spacing."""
    stamp = Stamp()
    ms = events[0][0]
    out = []
    prev = ms
    for k, (orig, ev) in enumerate(events):
        if k:
            ms += max(400, orig - prev) if orig > prev else 1500
        prev = orig
        ev["ts"] = stamp(ms)
        out.append((ms, ev))
    events[:] = out


def defect_log(code: str, seed: int = 0) -> list[bytes]:
    """A tiny log with one planted `code` (see `DEFECTS` for what it should yield).

    Tries seeds from `seed` on until the match gives the chance (e.g. a
    blocked hand for HAND_NOT_OVER).
    """
    if code not in DEFECTS:
        raise ValueError(f"no defect for {code!r} (known: {', '.join(DEFECTS)})")
    for s in range(seed, seed + 500):
        events = _defect_events(code, s)
        if events is not None:
            return [e["__raw__"] if "__raw__" in e else orjson.dumps(e) for _, e in events]
    raise RuntimeError(f"no seed from {seed} gave a chance to plant {code}")
