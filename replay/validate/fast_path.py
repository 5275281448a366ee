"""The validation of a clean match at the level of hands.

Nearly every match in a log is valid. For a match whose lines the C
scanner read (:mod:`replay.canonical_reader`), :func:`fast_report` walks its deals,
hand ends, reveals and the few other events in seq order, derives every
deal, replays every hand's moves in C and scores it with
:mod:`replay.match`, exactly as :class:`replay.validate.MatchReplayer`
does. It never reports: at the first thing that would be a finding (a
warning included) or that it does not handle, it answers ``None`` and the
match is validated line by line. So its report, when it gives one, is
the one the line-by-line validator gives; tests/test_fast_path.py checks
that on every sample log and on simulated matches of every profile, clean
and with planted defects.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from hashlib import sha256
from typing import Any, Final

import orjson

from replay import events as ev
from replay._records import positional
from replay.accel import native
from replay.canonical_reader import DEAL, HAND_END, MOVE, OTHER, REVEAL, Source
from replay.deal import (
    ALL_IDS,
    DEAL_LABEL,
    NON_DOUBLE_IDS,
    DealError,
    derive_lead_deck,
    enc_int,
    enc_str,
    resolve_lead_draw,
    verify_chain,
)
from replay.findings import HandReport, MatchReport, SeatRecord
from replay.match import redeal_due
from replay.rules import PROFILES, Rules, RulesError, RulesSpec, resolve, spec_of
from replay.tiles import BIT, FULL_SET, iter_tiles

__all__ = ["fast_report"]

_HAND: Final = 7
_hand_report: Final = positional(HandReport)
_match_report: Final = positional(MatchReport)
_seat_record: Final = positional(SeatRecord)

# resolve() per (profile, overrides), with the rules' JSON for the report and
# the Scorer's arguments: a table plays the same rules over and over, and
# building a Rules value is a pydantic validation.
_RULES: dict[tuple[str, bytes], tuple[Rules, bytes, tuple[RulesSpec, str]]] = {}


def _rules(profile: str, overrides: dict[str, Any]) -> tuple[Rules, bytes, tuple[RulesSpec, str]]:
    """The resolved rules, their ``model_dump(mode="json")`` as JSON bytes
    (each report gets a dict of its own from them) and the ``Scorer``'s
    arguments: the rules' spec and the profile's word for a shutout."""
    try:
        key: tuple[str, bytes] | None = (profile, orjson.dumps(overrides, option=orjson.OPT_SORT_KEYS))
    except TypeError:  # not JSON (cannot come from a log line)
        key = None
    got = _RULES.get(key) if key is not None else None
    if got is None:
        r = resolve(profile, overrides)
        p = PROFILES.get(profile)
        got = (r, orjson.dumps(r.model_dump(mode="json")), (spec_of(r), p.shutout_note if p else "shutout"))
        if key is not None:
            _RULES[key] = got
    return got


def _chain(anchor: str, reveals: Mapping[int, tuple[str, int, str]]) -> dict[int, bool]:
    """verify_chain's answer: straight down the chain when hands 1..k each
    hash to the one before (the common case), else verify_chain itself."""
    try:
        prev = binascii.unhexlify(anchor)
        out: dict[int, bool] = {}
        for k, no in enumerate(sorted(reveals), 1):
            seed = binascii.unhexlify(reveals[no][0])
            if no != k or len(prev) == 0 or sha256(seed).digest() != prev:
                break
            out[no] = True
            prev = seed
        else:
            return out
    except (binascii.Error, ValueError):
        pass
    return verify_chain(anchor, {h: v[0] for h, v in reveals.items()})


class _Decline(Exception):
    """Something the line-by-line validator must see (it names the finding)."""


class MoveColumns:
    """The store's moves rows of fast matches, made in C (for ingest).

    ``cols`` are bytearrays of ints in the machine's byte order, one per column of
    :data:`COLUMNS` (``pips`` holds one value per seat and move, ``alts``
    the legal moves as codes, ``n_alts`` of them per move); ``matches``
    lists (match, seats, rows) in row order and ``hands`` the plies and the
    passes per seat of each hand, by (match, hand).
    """

    #: (name, numpy dtype) of each column, in the order of _hand.c's column enum.
    COLUMNS: Final = (
        ("hand", "i4"), ("ply", "i2"), ("seq", "i4"), ("seat", "i1"), ("kind", "i1"),
        ("tile", "i1"), ("on_end", "i1"), ("left", "i1"), ("right", "i1"), ("stock", "i1"),
        ("legal", "i1"), ("ts", "i8"), ("pips", "i2"), ("n_alts", "i1"), ("alts", "i2"),
    )  # fmt: skip

    def __init__(self) -> None:
        self.cols: list[bytearray] = [bytearray() for _ in self.COLUMNS]
        self.matches: list[tuple[str, int, int]] = []
        self.hands: dict[tuple[str, int], tuple[int, tuple[int, ...]]] = {}

    def rows(self) -> int:
        return len(self.cols[0]) // 4

    def _mark(self) -> list[int]:
        return [len(c) for c in self.cols] + [len(self.hands)]

    def _rollback(self, mark: list[int]) -> None:
        """Take back what a match that declined wrote (its hands before the decline).

        Its hands are the newest keys of ``hands`` (a dict keeps its order),
        so a decline costs what the match wrote, not what the batch holds.
        """
        for c, size in zip(self.cols, mark[:-1], strict=True):
            del c[size:]
        for _ in range(len(self.hands) - mark[-1]):
            self.hands.popitem()


def fast_report(
    src: Source,
    *,
    rematch_leaders: Mapping[str, int | None] | None = None,
    moves: MoveColumns | None = None,
) -> MatchReport | None:
    """The report of a clean match, or None when it must be validated line by line.

    With ``moves``, every move's row goes there (as ``keep_moves`` would
    make them, but in C) and the hands' ``opener`` is filled in.
    """
    if native is None or not src.fast:
        return None
    mark = moves._mark() if moves is not None else []
    try:
        rep = _FastMatch(src, rematch_leaders or {}, moves).run()
    except Exception:  # _Decline, or a defect of this path: the line-by-line path decides
        if moves is not None:
            moves._rollback(mark)
        return None
    if moves is not None:
        moves.matches.append((src.match, rep.players or 0, moves.rows() - mark[0] // 4))
    return rep


class _FastMatch:
    """One match, hand by hand (the clean path of MatchReplayer; see its methods)."""

    def __init__(self, src: Source, rematch_leaders: Mapping[str, int | None], moves: MoveColumns | None) -> None:
        self.src = src
        self.rematch_leaders = rematch_leaders
        self.moves = moves

    def run(self) -> MatchReport:
        src = self.src
        segs = src.segments
        placed = src.placed
        first = segs[0].events[0] if segs[0].events else None
        if first is None or first[0] != OTHER or first[3] != 0:
            raise _Decline
        start = placed[first[1]].event  # type: ignore[union-attr]
        if start.type != "match_start":
            raise _Decline
        assert isinstance(start, ev.MatchStart)
        try:
            r, rules_json, scoring = _rules(start.profile, start.rules)
        except RulesError:
            raise _Decline from None
        if start.scheme != "deal-v1" or not start.anchor:
            raise _Decline
        n = r.players
        if sorted(s.seat for s in start.seats) != list(range(n)):
            raise _Decline
        seats = [_seat_record(s.seat, s.player, s.name, False, 1, start.seq) for s in start.seats]
        profile = PROFILES.get(start.profile)
        # match.py's new_match, next_lead, score_hand and record, in C
        m = native.Scorer(*scoring)  # type: ignore[union-attr]
        rematch_leader = -1
        if start.rematch_of is not None:
            prev = self.rematch_leaders.get(start.rematch_of)
            if prev is None:
                raise _Decline  # REMATCH_UNKNOWN
            rematch_leader = (prev + 1) % n

        # What the line-by-line validator learns up front (its _order).
        reveals: dict[int, tuple[str, int, str]] = {}
        reveal_lines: dict[int, int] = {}  # hand -> line of its first reveal
        end_seqs: dict[int, int] = {}
        for seg in segs:
            for e in seg.events:
                kind = e[0]
                if kind == REVEAL:
                    if e[5] not in reveals:
                        reveals[e[5]] = (e[6], e[3], e[4])
                        reveal_lines[e[5]] = e[1]
                elif kind == HAND_END:
                    end_seqs.setdefault(e[5], e[3])
                elif kind == OTHER:
                    o = placed[e[1]].event  # type: ignore[union-attr]
                    if o.type == "hand_cancelled":
                        raise _Decline
        chain = _chain(start.anchor, reveals)

        draw_mode = r.stock == "draw"
        stock_size = r.stock_size
        lead_draw_used = r.lead_draw_used
        sink = self.moves
        yield_ok = r.lead_to_partner and r.teams == "pairs"
        # With moves kept, a hand's opener is its leader (the first move of a
        # clean hand is the leader's play: a pass or a draw needs a line);
        # without them the line-by-line validator leaves it None.
        keep = sink is not None
        all_pass = r.block_end == "all_pass"
        auto_redeal = r.redeal == "five_doubles_auto"
        nonce_head = enc_str(start.table) + enc_str(start.match)
        pers_head = enc_str(DEAL_LABEL) + enc_str(start.beacon or "") + enc_int(n)
        ids = bytes(NON_DOUBLE_IDS if r.stock == "doubles_aside" else ALL_IDS)
        claimed_score: tuple[int, ...] = m.score
        hand_reports: list[HandReport] = []
        ended_hands: dict[int, int] = {}
        last_hand_no = 0
        lead_draw: ev.LeadDraw | None = None
        drawn_leader = -1
        end_event: ev.MatchEnd | None = None
        # the hand being played: its deal tuple, lead and boneyard
        deal: tuple[Any, ...] | None = None
        lead_seat = lead_tile = 0
        stock: tuple[int, ...] = ()
        hand_open = False
        started = start.ts
        ended = ""
        for seg in segs:
            moved = 0  # moves of this segment taken so far
            for e in seg.events:
                kind = e[0]
                at = e[-1]  # moves of the segment before this event
                if at != moved and not hand_open:
                    raise _Decline  # moves outside a hand
                if kind == DEAL:
                    # (DEAL, line, off, seq, ts, hand, client_seeds, hands, masks, stock, leader, moves)
                    if hand_open or m.over or e[5] != last_hand_no + 1:
                        raise _Decline
                    last_hand_no = e[5]
                    seeds, hands, masks = e[6], e[7], e[8]
                    if len(hands) != n or len(seeds) != n or e[9] != stock_size:
                        raise _Decline
                    for h in hands:
                        if len(h) != _HAND:
                            raise _Decline
                    got = reveals.get(e[5])
                    if got is None:
                        raise _Decline
                    try:
                        seed = binascii.unhexlify(got[0])
                    except (binascii.Error, ValueError):
                        raise _Decline from None
                    if len(seed) != 32:
                        raise _Decline
                    # deal-v1 (replay.deal.derive_deal), the encodings of the match made once
                    derived, rest_of_deck = native.deal(seed, nonce_head, e[5], pers_head, seeds, ids, n)  # type: ignore[union-attr]
                    if derived != masks:
                        raise _Decline  # DEAL_MISMATCH
                    if draw_mode:
                        dealt = 0
                        for mk in masks:
                            dealt |= mk
                        rest = FULL_SET & ~dealt
                        order = [t for t in rest_of_deck if rest & BIT[t]]
                        stock = tuple(order) + tuple(t for t in iter_tiles(rest) if t not in order)
                    else:
                        stock = ()
                    if e[5] == 1 and lead_draw_used and m.played == 0 and start.rematch_of is None:
                        drawn_leader = self._lead_draw(lead_draw, r, start, seeds, seed)
                    if m.played == 0 and lead_draw_used and drawn_leader < 0 and rematch_leader < 0:
                        raise _Decline
                    got_lead = m.lead(masks, drawn_leader, rematch_leader)
                    if got_lead is None:
                        raise _Decline
                    lead_seat, lead_tile = got_lead
                    if not 0 <= lead_seat < n or e[10] != lead_seat:
                        raise _Decline  # WRONG_LEADER
                    if auto_redeal and redeal_due(r, masks):
                        raise _Decline
                    deal, hand_open = e, True
                elif kind == HAND_END:
                    # (HAND_END, line, off, seq, ts, hand, result, winner, points, score, notes, moves)
                    if not hand_open or deal is None or e[5] != deal[5] or at == deal[-1]:
                        raise _Decline
                    no = deal[5]
                    if sink is None:
                        got_state = native.replay_hand(  # type: ignore[union-attr]
                            seg.moves, deal[-1], at, no, deal[8], bytes(stock), lead_seat, lead_tile,
                            draw_mode, all_pass,
                        )  # fmt: skip
                    else:
                        got_state = native.replay_hand(  # type: ignore[union-attr]
                            seg.moves, deal[-1], at, no, deal[8], bytes(stock), lead_seat, lead_tile,
                            draw_mode, all_pass, seg.data, yield_ok and lead_tile < 0, sink.cols,
                        )  # fmt: skip
                    if got_state is None:
                        raise _Decline
                    moved = at
                    # score_hand and record (the leader is deal[10], checked above)
                    scored = m.record(got_state, lead_seat)
                    if scored is None:
                        raise _Decline
                    result, winner, points, notes = scored
                    score = e[9]
                    if e[6] != result or e[7] != winner or e[8] != points:
                        raise _Decline
                    # the claims add up hand by hand, as the replayer checks them,
                    # so the running claim is the running score
                    total = m.score
                    if score != total:
                        raise _Decline
                    if e[10] != notes and sorted(e[10]) != sorted(notes):
                        raise _Decline
                    claimed_score = score
                    blocker, pips, pass_counts = got_state[6], got_state[10], got_state[11]
                    ended_hands[no] = e[3]
                    hand_open = False
                    seed_info = reveals.get(no)
                    # HandReport(hand, result, winner, points, score, notes, leader, opener,
                    # blocker, hands, stock, pips, client_seeds, server_seed, seed_ok, deal_ok,
                    # play_ok, claimed_result, claimed_winner, claimed_points, claimed_score,
                    # claimed_notes, started, ended, moves)
                    if sink is not None:
                        sink.hands[(src.match, no)] = (at - deal[-1], pass_counts)
                    hand_reports.append(_hand_report(
                        no, result, winner, points, total, notes, deal[10], lead_seat if keep else None,
                        blocker if blocker >= 0 else None, deal[7], stock, pips, deal[6],
                        seed_info[0] if seed_info else None, chain.get(no), True,
                        True, e[6], e[7], e[8], score,
                        e[10], deal[4], e[4], (),
                    ))  # fmt: skip
                elif kind == REVEAL:
                    # (REVEAL, line, off, seq, ts, hand, server_seed, moves)
                    no = e[5]
                    first_reveal = reveals[no]
                    if first_reveal[1] != e[3] and first_reveal[0] != e[6]:
                        raise _Decline  # COMMIT_MISMATCH: a second seed
                    if no not in ended_hands and end_seqs.get(no, -1) > e[3]:
                        raise _Decline  # REVEAL_EARLY
                else:
                    o = placed[e[1]].event  # type: ignore[union-attr]
                    t = o.type
                    if t == "seat_change":
                        assert isinstance(o, ev.SeatChange)
                        if not 0 <= o.seat < n:
                            raise _Decline
                        if o.hand is not None:
                            begins = o.hand
                        elif hand_open and deal is not None:
                            begins = deal[5]
                        else:
                            begins = last_hand_no + 1
                        seats.append(_seat_record(o.seat, o.player, None, o.bot, begins, o.seq))
                        continue
                    if hand_open:
                        raise _Decline  # only reveals and seat changes come in a hand
                    if t == "match_start":
                        if o is not start:
                            raise _Decline
                    elif t == "lead_draw":
                        assert isinstance(o, ev.LeadDraw)
                        if o.hand != 1 or last_hand_no != 0 or lead_draw is not None or not r.lead_draw_used:
                            raise _Decline
                        try:
                            draws, leader = resolve_lead_draw([x for _, x in o.draws], n, r.first_lead)  # type: ignore[arg-type]
                        except (DealError, ValueError, IndexError):
                            raise _Decline from None
                        if [tuple(d) for d in draws] != [tuple(d) for d in o.draws]:
                            raise _Decline
                        lead_draw, drawn_leader = o, leader
                    elif t == "match_end":
                        assert isinstance(o, ev.MatchEnd)
                        if end_event is not None or o.result == "abandoned":
                            raise _Decline  # abandoned: the line-by-line path keeps it exact
                        end_event, ended = o, o.ts
                        if not m.over or (o.result, o.winner) != (m.result, m.winner):
                            raise _Decline
                        if o.score != claimed_score or sorted(o.notes) != sorted(m.notes):
                            raise _Decline
                    else:
                        raise _Decline  # redeal claims, lead yields, odd lines
            if hand_open or len(seg.moves) != MOVE.size * moved:
                raise _Decline  # a hand across two buffers, or moves after the last event
        if hand_open or end_event is None:
            raise _Decline  # HAND_INCOMPLETE / MATCH_INCOMPLETE
        for no in ended_hands:
            if no not in reveals:
                raise _Decline  # REVEAL_MISSING
        for no, ok in chain.items():
            if not ok and no in ended_hands:
                raise _Decline  # COMMIT_MISMATCH
        # MatchReport's fields in order (a positional constructor: one a match)
        return _match_report(
            src.match, "valid", start.profile, start.table, orjson.loads(rules_json), n, tuple(hand_reports),
            m.result, m.winner, m.score, m.notes, end_event.result, end_event.winner, end_event.score,
            end_event.notes, (), tuple(seats), start.anchor, start.beacon, start.rematch_of, started, ended,
            (src.file,), src.count,
            tuple(tuple(d) for d in lead_draw.draws) if lead_draw else (),
            tuple(sorted(profile.estimates)) if profile else (),
            ((0, src.file, first[1]),
             *((h.hand, src.file, reveal_lines[h.hand]) for h in hand_reports if h.server_seed)),
        )  # fmt: skip

    def _lead_draw(
        self, lead_draw: ev.LeadDraw | None, r: Rules, start: ev.MatchStart, seeds: tuple[str, ...], seed: bytes
    ) -> int:
        """The leader of a lead draw that matches its derivation (else decline)."""
        if lead_draw is None:
            raise _Decline
        try:
            deck = derive_lead_deck(seed, table=start.table, match=start.match, players=r.players,
                                    client_seeds=seeds, beacon=start.beacon,
                                    doubles_only=r.first_lead == "drawn_double")  # fmt: skip
            draws, leader = resolve_lead_draw(deck, r.players, r.first_lead)  # type: ignore[arg-type]
        except (DealError, ValueError):
            raise _Decline from None
        if [tuple(d) for d in draws] != [tuple(d) for d in lead_draw.draws]:
            raise _Decline
        return leader
