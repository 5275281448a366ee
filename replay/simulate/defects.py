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

from replay.findings import FindingCode
from replay.simulate.config import EPOCH_MS, SimConfig, make_pool
from replay.simulate.match import Plant, SimMatch, Stamp, format_ts
from replay.tiles import parse_tile, tile_name, weight_key

#: A log's events as the match runner collects them: (ms, event) in log order.
Events = list[tuple[int, dict[str, Any]]]

#: Codes no log can plant: INTERNAL_ERROR is a defect of the validator itself.
UNPLANTABLE: Final = frozenset({FindingCode.INTERNAL_ERROR})

#: Every finding code -> the codes a validator reports on its defect log
#: (sorted): the code itself, and a log that stops in a hand stops in its match.
DEFECTS: Final[dict[str, tuple[str, ...]]] = {
    code: (code, FindingCode.MATCH_INCOMPLETE) if code == FindingCode.HAND_INCOMPLETE else (code,)
    for code in FindingCode
    if code not in UNPLANTABLE
}

#: The short tables defect logs are played at.
_INTL_SHORT: Final = ("international", {"match_end": {"kind": "points", "target": 50}})
_DOMENA_SHORT: Final = ("domena_2p", {"match_end": {"kind": "points", "target": 40}})
_PR_SHORT: Final = ("puerto_rico", {"match_end": {"kind": "points", "target": 50}})
_VEN_SHORT: Final = ("venezuela", {"match_end": {"kind": "points", "target": 40}})
_COL_SHORT: Final = ("colombia", {"match_end": {"kind": "points", "target": 40}})


def defect_log(code: str, seed: int = 0) -> list[bytes]:
    """A tiny log with one planted `code` (see `DEFECTS` for what it should yield).

    Tries seeds from `seed` on until the match gives the chance (e.g. a
    blocked hand for HAND_NOT_OVER).
    """
    if code not in DEFECTS:
        raise ValueError(f"no defect for {code!r} (known: {', '.join(DEFECTS)})")
    plant = _PLANTERS[code]
    for s in range(seed, seed + 500):
        events = plant(code, s)
        if events is not None:
            return [e["__raw__"] if "__raw__" in e else orjson.dumps(e) for _, e in events]
    raise RuntimeError(f"no seed from {seed} gave a chance to plant {code}")


# --- planted in play: the match runner's hooks ----------------------------------------

#: The table, and the hand and ply to plant from, of each code planted in play.
_IN_PLAY: Final[dict[str, tuple[tuple[str, dict[str, Any]], int, int]]] = {
    FindingCode.COMMIT_MISMATCH: (_INTL_SHORT, 2, 0),
    FindingCode.DEAL_MISMATCH: (_INTL_SHORT, 2, 0),
    FindingCode.DRAW_MISMATCH: (_DOMENA_SHORT, 1, 0),
    FindingCode.WRONG_LEADER: (_INTL_SHORT, 2, 0),
    FindingCode.WRONG_OPENING: (_VEN_SHORT, 1, 0),
    FindingCode.NOT_YOUR_TURN: (_INTL_SHORT, 1, 4),
    FindingCode.TILE_NOT_IN_HAND: (_INTL_SHORT, 1, 4),
    FindingCode.TILE_DOES_NOT_FIT: (_INTL_SHORT, 1, 4),
    FindingCode.FALSE_PASS: (_INTL_SHORT, 1, 4),
    FindingCode.ILLEGAL_DRAW: (_DOMENA_SHORT, 1, 2),
    FindingCode.DRAWN_TILE_NOT_PLAYED: (_DOMENA_SHORT, 1, 0),
    FindingCode.LEAD_YIELD_INVALID: (_INTL_SHORT, 2, 0),
    FindingCode.REDEAL_INVALID: (_COL_SHORT, 2, 0),
    FindingCode.EVENT_AFTER_END: (_INTL_SHORT, 1, 0),
    FindingCode.HAND_NOT_OVER: (_PR_SHORT, 1, 0),
}


def _in_play(code: str, seed: int) -> Events | None:
    table, hand, ply = _IN_PLAY[code]
    plant = Plant(code, hand=hand, ply=ply)
    sim = _one_match(code, seed, table, plant=plant)
    return sim.events if plant.done else None


def _wrong_leader(code: str, seed: int) -> Events | None:
    # the last hand, so that no later lead depends on the wrong one
    table, _, ply = _IN_PLAY[code]
    clean = _one_match(code, seed, table)
    hand = len(_hand_ends(clean.events))
    if hand < 2:
        return None
    plant = Plant(code, hand=hand, ply=ply)
    sim = _one_match(code, seed, table, plant=plant)
    if not plant.done or len(_hand_ends(sim.events)) != plant.hand_done:
        return None
    return sim.events


# --- across matches ----------------------------------------------------------------


def _seed_reused(code: str, seed: int) -> Events:
    a = _one_match(code, seed, _INTL_SHORT, match_id=f"m-seed-reused-{seed}-a")
    b = _one_match(
        code, seed + 1, _INTL_SHORT, match_id=f"m-seed-reused-{seed}-b", top_seed=a.top_seed
    )
    return a.events + b.events


def _rematch_unknown(code: str, seed: int) -> Events:
    return _one_match(code, seed, _INTL_SHORT, rematch_of=f"m-gone-{seed}").events


# --- planted by editing a clean log -------------------------------------------------
# Each edit changes a clean international match's events in place; False:
# this match gives no chance to plant it.


def _edited(code: str, seed: int) -> Events | None:
    events = _one_match(code, seed, _INTL_SHORT).events
    hands, edit = _EDITS[code]
    if len(_hand_ends(events)) < hands:
        return None
    return events if edit(events) else None


def _malformed_line(ev: Events) -> bool:
    ev.insert(5, (ev[4][0], {"__raw__": b'{"type":"play","match":"m-mal'}))
    return True


def _schema_error(ev: Events) -> bool:
    # no readable `match`: a top-level finding, no match touched
    ms, e = ev[5]
    ev.insert(5, (ms, {"type": "pass", "seq": 5, "ts": e["ts"], "hand": 1, "seat": 0}))
    return True


def _unknown_event(ev: Events) -> bool:
    # an event type v1 does not know; no seq, so no seq finding either way
    ms, e = ev[5]
    ev.insert(
        5, (ms, {"type": "chat", "match": e["match"], "ts": e["ts"], "hand": 1, "text": "gg"})
    )
    return True


def _rules_unknown(ev: Events) -> bool:
    ev[0][1]["rules"] = {**ev[0][1]["rules"], "spinner": True}
    return True


def _seq_gap(ev: Events) -> bool:
    for _, e in ev[6:]:
        e["seq"] += 1
    return True


def _seq_repeated(ev: Events, *, changed: bool = False) -> bool:
    # a reveal is harmless to replay twice, whichever copy a reader keeps
    i = _find(ev, lambda e: e["type"] == "reveal")
    ms, e = ev[i]
    copy = dict(e)
    if changed:
        copy["ts"] = format_ts(ms + 1)  # a different event with the same seq
    ev.insert(i + 1, (ms + 1, copy))
    return True


def _seq_duplicate(ev: Events) -> bool:
    return _seq_repeated(ev, changed=True)


def _time_order(ev: Events) -> bool:
    ms, e = ev[6]
    e["ts"] = format_ts(ev[5][0] - 1000)
    return True


def _match_incomplete(ev: Events) -> bool:
    i = _find(ev, lambda e: e["type"] == "reveal")
    del ev[i + 1 :]
    return True


def _hand_incomplete(ev: Events) -> bool:
    i = _find(ev, lambda e: e["type"] == "hand_end")
    del ev[i - 2 :]  # the log stops two moves before the end of hand 1
    return True


def _commit_missing(ev: Events) -> bool:
    del ev[0][1]["anchor"]
    return True


def _reveal_missing(ev: Events) -> bool:
    # hand 2's: hand 1's seed also checks the lead draw
    del ev[_find(ev, lambda e: e["type"] == "reveal" and e["hand"] == 2)]
    _renumber(ev)
    return True


def _reveal_early(ev: Events) -> bool:
    i = _find(ev, lambda e: e["type"] == "reveal")
    r = ev.pop(i)
    d = _find(ev, lambda e: e["type"] == "deal" and e["hand"] == r[1]["hand"])
    ev.insert(d + 2, r)  # after the hand's first tile, long before its end
    _renumber(ev)
    _retime(ev)
    return True


def _lead_draw_mismatch(ev: Events) -> bool:
    i = _find(ev, lambda e: e["type"] == "lead_draw")
    draws = ev[i][1]["draws"]
    tiles = [parse_tile(t) for _, t in draws]
    top = max(tiles, key=weight_key)
    low = min(range(len(draws)), key=lambda k: weight_key(tiles[k]))
    other = [t for t in range(28) if t not in tiles and weight_key(t) < weight_key(top)]
    if not other:
        return False
    draws[low][1] = tile_name(other[0])  # the leader stays the leader
    return True


def _result_mismatch(ev: Events) -> bool:
    k = next((i for i in _hand_ends(ev) if ev[i][1]["result"] == "domino"), None)
    if k is None:
        return False
    e = ev[k][1]
    e["winner"] = (e["winner"] + 2) % 4  # the partner: same side, same points
    return True


def _points_mismatch(ev: Events) -> bool:
    e = ev[_hand_ends(ev)[0]][1]
    e["points"] = [p + 10 for p in e["points"]]  # the score stays the true one
    return True


def _score_mismatch(ev: Events) -> bool:
    # the last hand's running score is off by one; match_end repeats that
    # claimed score (a later claim builds on the earlier claim, so this is
    # reported once)
    e = ev[_hand_ends(ev)[-1]][1]
    low = min(range(len(e["score"])), key=lambda k: e["score"][k])
    target = 50
    if e["score"][low] + 1 >= target:
        return False
    e["score"][low] += 1
    ev[-1][1]["score"] = list(e["score"])
    return True


def _match_end_mismatch(ev: Events) -> bool:
    e = ev[-1][1]
    if e["winner"] is None:
        return False
    e["winner"] = 1 - e["winner"]
    return True


def _note_mismatch(ev: Events) -> bool:
    k = next((i for i in _hand_ends(ev) if not ev[i][1].get("notes")), None)
    if k is None:
        return False
    ev[k][1]["notes"] = ["capicua"]
    return True


#: The hands the clean match needs, and the edit, of each code planted by editing.
_EDITS: Final[dict[str, tuple[int, Callable[[Events], bool]]]] = {
    FindingCode.MALFORMED_LINE: (1, _malformed_line),
    FindingCode.SCHEMA_ERROR: (1, _schema_error),
    FindingCode.UNKNOWN_EVENT: (1, _unknown_event),
    FindingCode.RULES_UNKNOWN: (1, _rules_unknown),
    FindingCode.SEQ_GAP: (1, _seq_gap),
    FindingCode.SEQ_DUPLICATE: (1, _seq_duplicate),
    FindingCode.SEQ_REPEATED: (1, _seq_repeated),
    FindingCode.TIME_ORDER: (1, _time_order),
    FindingCode.MATCH_INCOMPLETE: (2, _match_incomplete),
    FindingCode.HAND_INCOMPLETE: (1, _hand_incomplete),
    FindingCode.COMMIT_MISSING: (1, _commit_missing),
    FindingCode.REVEAL_MISSING: (2, _reveal_missing),
    FindingCode.REVEAL_EARLY: (1, _reveal_early),
    FindingCode.LEAD_DRAW_MISMATCH: (1, _lead_draw_mismatch),
    FindingCode.RESULT_MISMATCH: (1, _result_mismatch),
    FindingCode.POINTS_MISMATCH: (1, _points_mismatch),
    FindingCode.SCORE_MISMATCH: (2, _score_mismatch),
    FindingCode.MATCH_END_MISMATCH: (1, _match_end_mismatch),
    FindingCode.NOTE_MISMATCH: (1, _note_mismatch),
}

#: How each code is planted: (code, seed) -> the log's events, or None when
#: that seed gives no chance to plant it.
_PLANTERS: Final[dict[str, Callable[[str, int], Events | None]]] = {
    **dict.fromkeys(_IN_PLAY, _in_play),
    FindingCode.WRONG_LEADER: _wrong_leader,
    FindingCode.SEED_REUSED: _seed_reused,
    FindingCode.REMATCH_UNKNOWN: _rematch_unknown,
    **dict.fromkeys(_EDITS, _edited),
}


# --- helpers -----------------------------------------------------------------------


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


def _renumber(events: Events) -> None:
    for i, (_, ev) in enumerate(events):
        ev["seq"] = i


def _find(events: Sequence[tuple[int, dict[str, Any]]], pred: Callable[[dict[str, Any]], bool]) -> int:
    for i, (_, ev) in enumerate(events):
        if pred(ev):
            return i
    raise LookupError("no such event")


def _hand_ends(events: Sequence[tuple[int, dict[str, Any]]]) -> list[int]:
    return [i for i, (_, ev) in enumerate(events) if ev["type"] == "hand_end"]


def _retime(events: Events) -> None:
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
