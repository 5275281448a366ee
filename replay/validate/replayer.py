"""The replayer: one match's events through the engine, and what they break.

Visitor style, as python-chess reads PGN: `MatchReplayer` walks one match's
events in `seq` order and calls `on_<type>` for each, which calls
`report(code, ...)`; it never raises for bad input, and one bad hand never
hides the next. `validate_match` is a pure function of one match's lines
(the unit of work for a process pool).
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from replay import events as ev
from replay.deal import (
    Deal,
    DealError,
    derive_deal,
    derive_lead_deck,
    resolve_lead_draw,
    verify_chain,
)
from replay.engine import (
    DRAW,
    END_NAMES,
    FIT,
    LEFT,
    PASS,
    PLAYS,
    RIGHT,
    YIELD,
    HandState,
    Move,
    Play,
    act,
    can_yield,
    legal_moves,
    new_hand,
)
from replay.findings import (
    CLAIM_CODES,
    CODES,
    Finding,
    FindingCode,
    HandReport,
    MatchReport,
    MoveRecord,
    SeatRecord,
    cap_findings,
)
from replay.match import (
    HandScore,
    Lead,
    MatchState,
    new_match,
    next_lead,
    record,
    redeal_due,
    score_hand,
)
from replay.reader import EventLine
from replay.rules import PROFILES, Rules, RulesError, resolve
from replay.tiles import BIT, OTHER, iter_tiles, mask_of, tile_name
from replay.validate.order import Record, by_seq, locate, read_ahead, seq_gaps

# --- one hand being replayed -----------------------------------------------------


@dataclass
class _Hand:
    """Working state of one hand while its events are replayed."""

    no: int
    deal: ev.Deal
    state: HandState
    lead: Lead
    masks: tuple[int, ...]
    stock: tuple[int, ...]
    leader_flagged: bool = False
    play_error: bool = False
    ended: bool = False
    cancelled: bool = False
    claim_seen: bool = False
    end_seq: int | None = None
    end_ts: str = ""
    claimed: ev.HandEnd | None = None
    moves: list[MoveRecord] = field(default_factory=list)
    redeal_checked: bool = False
    claim_seat: int | None = None
    deal_ok: bool | None = None
    report: HandReport | None = None


def _legal_names(moves: Sequence[Move]) -> tuple[str, ...]:
    out = []
    for m in moves:
        if isinstance(m, Play):
            out.append(f"{tile_name(m.tile)}:{END_NAMES[m.end]}")
        else:
            out.append(repr(m))
    return tuple(out)


class MatchReplayer:
    """Replays one match's events (already grouped) and reports what it finds."""

    def __init__(
        self,
        records: Sequence[Record],
        *,
        rematch_leaders: Mapping[str, int | None] | None = None,
        keep_moves: bool = True,
    ) -> None:
        self.records = records
        self.rematch_leaders = rematch_leaders or {}
        self.keep_moves = keep_moves
        self.findings: list[Finding] = []
        self.hand_reports: list[HandReport] = []
        self.match_id = ""
        self.at: int | None = None  # the seq of the event being replayed (an internal error names it)
        self.rules: Rules | None = None
        self.start: ev.MatchStart | None = None
        self.seats: list[SeatRecord] = []
        self.m: MatchState | None = None
        self.hand: _Hand | None = None
        self.last_hand_no = 0
        self.claimed_score: tuple[int, ...] = ()
        self.past_end = False
        self.end_event: ev.MatchEnd | None = None
        self.lead_draw: ev.LeadDraw | None = None
        self.drawn_leader: int | None = None
        self.lead_draw_bad = False
        self.bad_hands: set[int] = set()
        self.dealt_ok: set[int] = set()  # hands whose deal was replayed  # hands with an unreadable line: their gaps are not news
        self.chain: dict[int, bool] = {}  # hand -> its revealed seed chains to the anchor
        self.reveals: dict[int, tuple[str, int, str]] = {}  # hand -> (seed, seq, ts)
        self.ended_hands: dict[int, int] = {}  # hand -> seq of its end
        self.first_leader: int | None = None
        self.files: list[str] = []
        self.rematch_leader: int | None = None
        self.started = ""
        self.ended = ""
        self.end_seqs: dict[int, int] = {}  # hand -> seq of its first hand_end/hand_cancelled
        self.dealt: set[int] = set()  # hands that have a deal
        self.draws: dict[int, list[int]] = {}  # hand -> drawn tiles in seq order

    # -- reporting

    def report(
        self, code: FindingCode, message: str, hand: int | None = None, seq: int | None = None,
        at: EventLine | None = None,
    ) -> None:
        """A finding; it names the file and line of `at`, else of its seq's
        event (filled in at the end, see `locate`)."""
        if code in CLAIM_CODES and self.hand is not None and self.hand.play_error:
            return  # follows from an error in play
        file, line = (at.file, at.line) if at is not None else (None, None)
        self.findings.append(Finding(code, message, hand, seq, file, line, match=self.match_id))

    def _play_error(self, code: FindingCode, message: str, e: ev.HandEvent) -> None:
        if self.hand is not None:
            self.hand.play_error = True
        self.report(code, message, e.hand, e.seq)

    # -- the walk

    def run(self) -> MatchReport:
        events = self._order()
        if self.start is None:
            return MatchReport(
                match=self.match_id,
                verdict="unreadable",
                findings=cap_findings(locate(self.findings, self.records)[0]),
                files=tuple(self.files),
            )
        i, count = 0, len(events)
        while i < count:
            e = events[i]
            self.at = e.seq
            i += 1
            if self.rules is None and e.type != "match_end":
                continue  # RULES_UNKNOWN: nothing can be replayed
            if self.past_end and e.type not in ("reveal", "match_end", "seat_change"):
                continue
            getattr(self, "on_" + e.type)(e)
        return self._finish()

    def _order(self) -> list[ev.Event]:
        """Events in seq order; sequence findings; bad lines as findings."""
        got = by_seq(self.records)
        self.files, self.match_id, self.bad_hands = got.files, got.match, got.bad_hands
        self.findings.extend(got.findings)
        starts = [e for e in got.events.values() if e.type == "match_start"]
        if not starts:
            return []
        start = min(starts, key=lambda e: e.seq)
        self._on_start(start)
        seqs = sorted(got.events)  # logs come in seq order: timsort makes this one pass
        self.findings.extend(seq_gaps(seqs, got.bad_seqs, self.match_id))
        ordered = [got.events[s] for s in seqs]
        ordered.remove(start)
        ahead = read_ahead(start, ordered, self.match_id)
        self.findings.extend(ahead.findings)
        self.reveals, self.end_seqs, self.dealt, self.draws = ahead.reveals, ahead.end_seqs, ahead.dealt, ahead.draws
        if start.anchor and start.scheme == "deal-v1":
            self.chain = verify_chain(start.anchor, {h: v[0] for h, v in self.reveals.items()})
        return ordered

    def _on_start(self, e: ev.MatchStart) -> None:
        self.start = e
        self.started = e.ts
        if e.seq != 0:
            self.report(FindingCode.SCHEMA_ERROR, f"match_start has seq {e.seq}, not 0", None, e.seq)
        try:
            self.rules = resolve(e.profile, e.rules)
        except RulesError as exc:
            self.report(FindingCode.RULES_UNKNOWN, f"rules of profile {e.profile!r}: {exc}", None, e.seq)
            return
        if e.scheme != "deal-v1":
            self.report(FindingCode.COMMIT_MISSING, f"scheme {e.scheme!r} is not deal-v1: deals cannot be checked", None, e.seq)
        elif not e.anchor:
            self.report(FindingCode.COMMIT_MISSING, "match_start has no anchor: the seeds are not committed", None, e.seq)
        seats = sorted(s.seat for s in e.seats)
        if seats != list(range(self.rules.players)):
            self.report(FindingCode.SCHEMA_ERROR, f"seats {seats} do not match {self.rules.players} players", None, e.seq)
        for s in e.seats:
            self.seats.append(SeatRecord(s.seat, s.player, s.name, False, 1, e.seq))
        profile = PROFILES.get(e.profile)
        self.m = new_match(self.rules, profile.shutout_note if profile else "shutout")
        if e.rematch_of is not None:
            if e.rematch_of in self.rematch_leaders and self.rematch_leaders[e.rematch_of] is not None:
                prev = self.rematch_leaders[e.rematch_of]
                assert prev is not None
                self.rematch_leader = (prev + 1) % self.rules.players
            else:
                self.report(FindingCode.REMATCH_UNKNOWN, f"rematch_of {e.rematch_of!r} is not among the logs read; its first lead is taken as logged", None, e.seq)
        self.claimed_score = self.m.score

    # -- event handlers (on_<type>) ---------------------------------------------------

    def on_match_start(self, e: ev.MatchStart) -> None:
        self.report(FindingCode.SEQ_DUPLICATE, "a second match_start", None, e.seq)

    def on_seat_change(self, e: ev.SeatChange) -> None:
        if self.rules is not None and not 0 <= e.seat < self.rules.players:
            self.report(FindingCode.SCHEMA_ERROR, f"seat_change names seat {e.seat}", None, e.seq)
            return
        if e.hand is not None:
            start = e.hand
        elif self.hand is not None and not self.hand.ended:
            start = self.hand.no
        else:
            start = self.last_hand_no + 1
        self.seats.append(SeatRecord(e.seat, e.player, None, e.bot, start, e.seq))

    def on_lead_draw(self, e: ev.LeadDraw) -> None:
        if self.rules is None:
            return
        if e.hand != 1 or self.last_hand_no != 0 or self.lead_draw is not None:
            self.report(FindingCode.LEAD_DRAW_MISMATCH, "a lead draw may only come once, before hand 1's deal", e.hand, e.seq)
            return
        if not self.rules.lead_draw_used:
            self.report(FindingCode.LEAD_DRAW_MISMATCH, f"no lead draw is made under first_lead = {self.rules.first_lead}", e.hand, e.seq)
            return
        self.lead_draw = e
        tiles = [t for _, t in e.draws]
        try:
            draws, leader = resolve_lead_draw(tiles, self.rules.players, self.rules.first_lead)  # type: ignore[arg-type]
        except (DealError, ValueError, IndexError) as exc:
            self.report(FindingCode.LEAD_DRAW_MISMATCH, f"the lead draw cannot be read: {exc}", e.hand, e.seq)
            self.lead_draw_bad = True
            return
        if [tuple(d) for d in draws] != [tuple(d) for d in e.draws]:
            self.report(FindingCode.LEAD_DRAW_MISMATCH, "the lead draw's seats do not follow the drawing rule", e.hand, e.seq)
            self.lead_draw_bad = True
            return
        self.drawn_leader = leader

    def _check_lead_draw(self, deal: ev.Deal, seed: bytes | None) -> None:
        """Compare the logged lead draw with its derivation from hand 1's seed."""
        r = self.rules
        assert r is not None and self.start is not None
        if not r.lead_draw_used or self.m is None or self.m.played > 0 or deal.hand != 1:
            return
        if self.start.rematch_of is not None:
            return  # a rematch's first lead follows the earlier match, not a draw
        if self.start.scheme != "deal-v1":
            return  # COMMIT_MISSING: nothing can be derived
        if self.lead_draw is None:
            self.report(FindingCode.LEAD_DRAW_MISMATCH, f"first_lead = {r.first_lead} needs a lead_draw before hand 1", deal.hand, deal.seq)
            return
        if seed is None:
            return
        try:
            deck = derive_lead_deck(
                seed,
                table=self.start.table,
                match=self.start.match,
                players=r.players,
                client_seeds=deal.client_seeds,
                beacon=self.start.beacon,
                doubles_only=r.first_lead == "drawn_double",
            )
            draws, leader = resolve_lead_draw(deck, r.players, r.first_lead)  # type: ignore[arg-type]
        except (DealError, ValueError) as exc:
            self.report(FindingCode.LEAD_DRAW_MISMATCH, f"the lead draw cannot be derived: {exc}", 1, self.lead_draw.seq)
            return
        logged = [tuple(d) for d in self.lead_draw.draws]
        if [tuple(d) for d in draws] != logged:
            if not self.lead_draw_bad:  # one finding for one bad lead draw
                shown = " ".join(f"{s}:{tile_name(t)}" for s, t in draws)
                self.report(FindingCode.LEAD_DRAW_MISMATCH, f"the lead draw differs from its derivation ({shown})", 1, self.lead_draw.seq)
            self.drawn_leader = leader

    def _seed_bytes(self, hand: int) -> bytes | None:
        got = self.reveals.get(hand)
        if got is None:
            return None
        try:
            seed = binascii.unhexlify(got[0])
        except (binascii.Error, ValueError):
            return None
        return seed if len(seed) == 32 else None

    def on_deal(self, e: ev.Deal) -> None:
        r, m = self.rules, self.m
        if r is None or m is None:
            return
        prev = self.hand
        if prev is not None and not prev.ended:
            self.report(FindingCode.HAND_INCOMPLETE, f"hand {prev.no} has no hand_end before the deal of hand {e.hand}", prev.no, e.seq)
            self._close_incomplete(prev)
        if m.over:
            self.report(FindingCode.MATCH_END_MISMATCH, f"the match was over after hand {self.last_hand_no} ({m.result}, score {list(m.score)}) but went on", e.hand, e.seq)
            self.past_end = True
            return
        skipped = range(self.last_hand_no + 1, e.hand)
        if e.hand != self.last_hand_no + 1 and not (skipped and all(x in self.bad_hands for x in skipped)):
            self.report(FindingCode.SCHEMA_ERROR, f"deal of hand {e.hand} does not follow hand {self.last_hand_no}", e.hand, e.seq)
        self.last_hand_no = e.hand
        self.dealt_ok.add(e.hand)
        n = r.players
        hands = [tuple(h) for h in e.hands]
        shape_ok = len(hands) == n and all(len(h) == 7 for h in hands) and len(e.client_seeds) == n
        masks = tuple(mask_of(h) for h in hands) if len(hands) == n else tuple(mask_of(hands[s]) if s < len(hands) else 0 for s in range(n))
        dealt = 0
        overlap = False
        for mk in masks:
            overlap |= bool(dealt & mk)
            dealt |= mk
        seed = self._seed_bytes(e.hand)
        derived = self._derive(e, seed, r)
        deal_ok: bool | None = None
        if not shape_ok or overlap:
            self.report(FindingCode.DEAL_MISMATCH, f"the deal is not {n} hands of 7 distinct tiles with {n} client seeds", e.hand, e.seq)
            deal_ok = False
        elif e.stock != r.stock_size:
            self.report(FindingCode.DEAL_MISMATCH, f"stock is {e.stock}, the rules leave {r.stock_size}", e.hand, e.seq)
            deal_ok = False
        elif derived is not None:
            deal_ok = self._check_hands(e, masks, derived)
        stock = self._boneyard(e, dealt, derived) if r.stock == "draw" else ()
        if e.hand == 1:
            self._check_lead_draw(e, seed)
        lead = self._lead(e, m, masks, r)
        leader_flagged = False
        if e.leader != lead.seat:
            why = f", who must open with {tile_name(lead.tile)}" if lead.tile >= 0 else ""
            self.report(FindingCode.WRONG_LEADER, f"deal names seat {e.leader} as leader; the rules entitle seat {lead.seat}{why}", e.hand, e.seq)
            leader_flagged = True
        dealt_tiles = hands if len(hands) == n else [tuple(iter_tiles(mk)) for mk in masks]
        state = new_hand(r, dealt_tiles, leader=lead.seat, opening=lead.tile, stock=stock)
        self.hand = _Hand(
            no=e.hand, deal=e, state=state, lead=lead, masks=masks, stock=stock,
            leader_flagged=leader_flagged, deal_ok=deal_ok,
        )  # fmt: skip
        if leader_flagged:
            self.hand.play_error = True

    def _derive(self, e: ev.Deal, seed: bytes | None, r: Rules) -> Deal | None:
        """The deal the revealed seed gives (None: no seed, or none to derive)."""
        n = r.players
        if seed is None or self.start is None or self.start.scheme != "deal-v1" or len(e.client_seeds) != n:
            return None
        try:
            return derive_deal(
                seed,
                table=self.start.table,
                match=self.start.match,
                hand=e.hand,
                players=n,
                client_seeds=e.client_seeds,
                beacon=self.start.beacon,
                doubles_aside=r.stock == "doubles_aside",
            )
        except DealError:
            return None

    def _check_hands(self, e: ev.Deal, masks: Sequence[int], derived: Deal) -> bool:
        """Whether the logged hands are the derived ones (per seat, as sets)."""
        want = [mask_of(h) for h in derived.hands]
        if list(masks) == want:
            return True
        bad = [s for s in range(len(want)) if masks[s] != want[s]]
        self.report(FindingCode.DEAL_MISMATCH, f"hands of seats {bad} differ from the derivation of the revealed seed", e.hand, e.seq)
        return False

    def _boneyard(self, e: ev.Deal, dealt: int, derived: Deal | None) -> tuple[int, ...]:
        """The boneyard: the derivation's order, restricted to what was not dealt."""
        rest = ((1 << 28) - 1) & ~dealt
        if derived is not None:
            order = [t for t in derived.stock if rest & BIT[t]]
        else:
            order = []  # unknown seed: the logged draws stand
            for t in self.draws.get(e.hand, ()):
                if rest & BIT[t] and t not in order:
                    order.append(t)
        return tuple(order) + tuple(t for t in iter_tiles(rest) if t not in order)

    def _lead(self, e: ev.Deal, m: MatchState, masks: Sequence[int], r: Rules) -> Lead:
        """Who must lead the hand, and with which tile."""
        first = m.played == 0
        if first and self.rematch_leader is None and self.start is not None and self.start.rematch_of is not None:
            lead = Lead(e.leader)  # REMATCH_UNKNOWN: taken as logged
        elif first and r.lead_draw_used and self.drawn_leader is None and self.rematch_leader is None:
            lead = Lead(e.leader)  # no usable lead draw: already reported
        else:
            lead = next_lead(m, masks, drawn_leader=self.drawn_leader, rematch_leader=self.rematch_leader)
        if not 0 <= lead.seat < r.players:
            lead = Lead(0)
        return lead

    def _current(self, e: ev.HandEvent) -> _Hand | None:
        h = self.hand
        if h is None or e.hand != h.no:
            if e.hand in self.bad_hands and e.hand not in self.dealt_ok:
                return None  # its deal was unreadable: already reported
            if e.hand <= self.last_hand_no and e.type in ("play", "pass", "draw", "lead_yield"):
                self.report(FindingCode.EVENT_AFTER_END, f"{e.type} in hand {e.hand}, which is over", e.hand, e.seq)
            elif e.hand <= self.last_hand_no:
                self.report(FindingCode.SCHEMA_ERROR, f"{e.type} for hand {e.hand}, which is over (hand {self.last_hand_no} is on)", e.hand, e.seq)
            else:
                self.report(FindingCode.SCHEMA_ERROR, f"{e.type} for hand {e.hand}, which has not been dealt", e.hand, e.seq)
            return None
        return h

    def _check_redeal_missing(self, h: _Hand, e: ev.HandEvent) -> None:
        if h.redeal_checked:
            return
        h.redeal_checked = True
        if self.rules is not None and self.rules.redeal == "five_doubles_auto" and redeal_due(self.rules, h.masks):
            self.report(FindingCode.REDEAL_INVALID, f"a seat was dealt 5+ doubles: hand {h.no} must be cancelled", h.no, e.seq)
            h.play_error = True

    def on_redeal_claim(self, e: ev.RedealClaim) -> None:
        h = self._current(e)
        if h is None or self.rules is None:
            return
        h.redeal_checked = True
        ok = (
            self.rules.redeal == "five_doubles_claim"
            and h.state.plays == 0
            and not h.ended
            and 0 <= e.seat < len(h.masks)
            and e.seat in redeal_due(self.rules, h.masks)
        )
        if not ok:
            self.report(FindingCode.REDEAL_INVALID, f"seat {e.seat} may not claim a redeal here (redeal = {self.rules.redeal}, needs 5+ doubles before the first tile)", e.hand, e.seq)
            return
        h.claim_seat = e.seat

    def on_hand_cancelled(self, e: ev.HandCancelled) -> None:
        h = self._current(e)
        if h is None or self.rules is None:
            return
        if h.ended:
            self.report(FindingCode.EVENT_AFTER_END, f"hand {h.no} is cancelled after it ended", e.hand, e.seq)
            return
        r = self.rules
        due = redeal_due(r, h.masks)
        allowed = h.state.plays == 0 and (
            (r.redeal == "five_doubles_auto" and due) or (r.redeal == "five_doubles_claim" and h.claim_seat is not None)
        )
        if not allowed:
            self.report(FindingCode.REDEAL_INVALID, f"hand {h.no} is cancelled, but the rules do not allow it here (redeal = {r.redeal})", e.hand, e.seq)
        h.redeal_checked = True
        h.ended = True
        h.cancelled = True
        h.end_seq = e.seq
        h.end_ts = e.ts
        self.ended_hands[h.no] = e.seq
        zero = (0,) * r.sides
        self._keep(h, self._hand_report(h, "cancelled", None, zero, self.m.score if self.m else zero, ()))

    def on_lead_yield(self, e: ev.LeadYield) -> None:
        h = self._current(e)
        if h is None or self.rules is None:
            return
        self._check_redeal_missing(h, e)
        s = h.state
        n = len(s.hands)
        physical = e.seat == s.turn and e.to == (e.seat + 2) % n and s.plays == 0 and not s.yielded
        if not (physical and can_yield(s) and e.seat == s.leader):
            h.play_error = True
            self.report(FindingCode.LEAD_YIELD_INVALID, f"seat {e.seat} may not hand the lead to seat {e.to} here", e.hand, e.seq)
        before = legal_moves(s)
        if physical:
            h.state = act(s, e.seat, YIELD)
        self._record(h, e, "yield", None, None, before, FindingCode.LEAD_YIELD_INVALID if h.play_error else None)

    # plays, passes, draws: one code per bad event, in the spec's precedence

    def _judge_common(self, h: _Hand, e: ev.Play | ev.Pass | ev.Draw) -> FindingCode | None:
        s = h.state
        if h.ended or s.over:
            return FindingCode.EVENT_AFTER_END
        if s.must_play >= 0 and not (isinstance(e, ev.Play) and e.tile == s.must_play and e.seat == s.turn):
            return FindingCode.DRAWN_TILE_NOT_PLAYED
        if s.plays == 0 and isinstance(e, ev.Play):
            opener = s.turn
            if e.seat != opener and not (h.leader_flagged and e.seat == h.deal.leader):
                return FindingCode.WRONG_LEADER
            if e.seat != opener:
                return None  # the wrongly named leader opens: reported on the deal
        if e.seat != s.turn:
            return FindingCode.NOT_YOUR_TURN
        return None

    def on_play(self, e: ev.Play) -> None:
        h = self._current(e)
        if h is None:
            return
        self._check_redeal_missing(h, e)
        s = h.state
        n = len(s.hands)
        code = self._judge_common(h, e)
        first = s.plays == 0 and s.result is None
        end = LEFT
        if first:
            end = self._opening_end(e)
        elif e.end is not None:
            end = LEFT if e.end == "left" else RIGHT
        holds = 0 <= e.seat < n and bool(s.hands[e.seat] & BIT[e.tile])
        fits = first or (s.result is None and e.end is not None and OTHER[e.tile][s.left if end == LEFT else s.right] >= 0)
        if e.end is None and not first and s.result is None and s.left == s.right and OTHER[e.tile][s.left] >= 0:
            fits = True  # equal ends: either end is the same move
        if code is None and first and s.opening >= 0 and e.tile != s.opening:
            code = FindingCode.WRONG_OPENING
        if code is None and not holds:
            code = FindingCode.TILE_NOT_IN_HAND
        if code is None and not fits:
            code = FindingCode.TILE_DOES_NOT_FIT
        msg = {
            "EVENT_AFTER_END": f"seat {e.seat} plays {tile_name(e.tile)} after hand {h.no} was over",
            "DRAWN_TILE_NOT_PLAYED": f"seat {s.turn} drew {tile_name(s.must_play) if s.must_play >= 0 else ''}, which fits, and must play it now",
            "WRONG_LEADER": f"seat {e.seat} opens hand {h.no}; seat {s.turn} is entitled to",
            "NOT_YOUR_TURN": f"seat {e.seat} plays {tile_name(e.tile)}, but it is seat {s.turn}'s turn",
            "WRONG_OPENING": f"hand {h.no} must open with {tile_name(s.opening) if s.opening >= 0 else ''} ({h.lead.fixed_by}), not {tile_name(e.tile)}",
            "TILE_NOT_IN_HAND": f"seat {e.seat} does not hold {tile_name(e.tile)}",
            "TILE_DOES_NOT_FIT": f"{tile_name(e.tile)} does not carry the {s.left if end == LEFT else s.right} on the {END_NAMES[end]} end" if e.end is not None or first else f"{tile_name(e.tile)} is played with no end named on ends {s.left}|{s.right}",
        }
        before = legal_moves(s) if s.result is None else ()
        if code is not None:
            self._play_error(code, msg[code], e)
        if holds and fits and not s.over and 0 <= e.seat < n:
            h.state = act(s, e.seat, PLAYS[e.tile][end])
        self._record(h, e, "play", e.tile, None if first else END_NAMES[end], before, code)

    def _opening_end(self, e: ev.Play) -> int:
        """Where the first tile's high half went: the log writes "xy" as x left."""
        name = e.face
        return RIGHT if len(name) == 2 and name[0] < name[1] else LEFT

    def on_pass(self, e: ev.Pass) -> None:
        h = self._current(e)
        if h is None:
            return
        self._check_redeal_missing(h, e)
        s = h.state
        code = self._judge_common(h, e)
        before = legal_moves(s) if not s.over else ()
        if code is None and before and PASS not in before:
            code = FindingCode.FALSE_PASS
        if code is not None:
            if code == FindingCode.FALSE_PASS:  # only then is the seat one of the table's
                msg = self._false_pass_msg(s, e.seat)
            else:
                msg = {
                    "EVENT_AFTER_END": f"seat {e.seat} passes after hand {h.no} was over",
                    "DRAWN_TILE_NOT_PLAYED": f"seat {s.turn} drew {tile_name(s.must_play) if s.must_play >= 0 else ''}, which fits, and must play it now",
                    "NOT_YOUR_TURN": f"seat {e.seat} passes, but it is seat {s.turn}'s turn",
                }.get(code, code)
            self._play_error(code, msg, e)
        if not s.over and 0 <= e.seat < len(s.hands) and code != FindingCode.EVENT_AFTER_END:
            h.state = act(s, e.seat, PASS)
        self._record(h, e, "pass", None, None, before, code)

    def _false_pass_msg(self, s: HandState, seat: int) -> str:
        if s.left < 0:
            return f"seat {seat} passes instead of opening"
        fit = s.hands[seat] & FIT[s.left * 7 + s.right]
        if fit:
            names = ", ".join(tile_name(t) for t in iter_tiles(fit))
            return f"seat {seat} passes holding {names}, which fit {s.left}|{s.right}"
        return f"seat {seat} passes with {len(s.stock)} tiles left to draw"

    def on_draw(self, e: ev.Draw) -> None:
        h = self._current(e)
        if h is None:
            return
        self._check_redeal_missing(h, e)
        s = h.state
        code = self._judge_common(h, e)
        before = legal_moves(s) if not s.over else ()
        if code is None and DRAW not in before:
            code = FindingCode.ILLEGAL_DRAW
        in_stock = e.tile in s.stock
        if code is None and (not s.stock or s.stock[0] != e.tile):
            code = FindingCode.DRAW_MISMATCH
        if code is not None:
            if code == FindingCode.ILLEGAL_DRAW:
                if self.rules is not None and self.rules.stock != "draw":
                    why = "there is no boneyard"
                elif not s.stock:
                    why = "the boneyard is empty"
                else:
                    why = "a tile can be played"
                msg = f"seat {e.seat} draws, but {why}"
            elif code == FindingCode.DRAW_MISMATCH:
                nxt = tile_name(s.stock[0]) if s.stock else "nothing"
                msg = f"seat {e.seat} draws {tile_name(e.tile)}; the next boneyard tile is {nxt}"
            elif code == FindingCode.NOT_YOUR_TURN:
                msg = f"seat {e.seat} draws, but it is seat {s.turn}'s turn"
            else:
                msg = f"{code.lower().replace('_', ' ')}: seat {e.seat} draws {tile_name(e.tile)}"
            self._play_error(code, msg, e)
        if in_stock and not s.over and 0 <= e.seat < len(s.hands) and code != FindingCode.EVENT_AFTER_END:
            h.state = act(s, e.seat, DRAW, drawn=e.tile)
        self._record(h, e, "draw", e.tile, None, before, code)

    def _record(
        self,
        h: _Hand,
        e: ev.HandEvent,
        kind: str,
        tile: int | None,
        end: str | None,
        before: Sequence[Move],
        code: FindingCode | None,
    ) -> None:
        if not self.keep_moves:
            return
        s = h.state
        seat = getattr(e, "seat", -1)
        h.moves.append(
            MoveRecord(
                hand=h.no,
                ply=len(h.moves) + 1,
                seq=e.seq,
                seat=seat,
                kind=kind,  # type: ignore[arg-type]
                tile=tile,
                end=end,
                left=s.left,
                right=s.right,
                pips=s.pips(),
                stock=len(s.stock),
                legal=len(before),
                forced=len(before) == 1,
                legal_moves=_legal_names(before),
                error=code,
                ts=e.ts,
            )
        )

    def on_hand_end(self, e: ev.HandEnd) -> None:
        h = self._current(e)
        if h is None or self.rules is None or self.m is None:
            return
        if h.ended:
            self.report(FindingCode.EVENT_AFTER_END, f"a second end of hand {h.no}", e.hand, e.seq)
            return
        r = self.rules
        m = self.m
        s = h.state
        h.ended = True
        h.claimed = e
        h.end_seq = e.seq
        h.end_ts = e.ts
        self.ended_hands[h.no] = e.seq
        if not h.play_error and not s.over:
            if s.result is None:
                self.report(FindingCode.HAND_NOT_OVER, f"hand {h.no} ends, but seat {s.turn} can still move (ends {s.left}|{s.right})", e.hand, e.seq)
                h.play_error = True  # nothing recomputed: the claims stand
            else:
                self.report(FindingCode.HAND_NOT_OVER, f"hand {h.no} is blocked, but {s.closing} more pass(es) are due before it ends", e.hand, e.seq)
        claimed_winner = e.winner
        if h.play_error or s.result is None:
            side = r.side_of(claimed_winner) if claimed_winner is not None and 0 <= claimed_winner < r.players else None
            hs = HandScore(e.result, claimed_winner, side, tuple(e.points) if len(e.points) == r.sides else (0,) * r.sides,
                           tuple(e.notes), s.pips(), s.blocker if s.blocker >= 0 else None)  # fmt: skip
            self.m = record(m, hs, leader=h.deal.leader)
            score = tuple(e.score) if len(e.score) == r.sides else self.m.score
            self.m = replace(self.m, score=score)
            self.claimed_score = score
            self._keep(h, self._hand_report(h, e.result, claimed_winner, tuple(e.points), score, tuple(e.notes)))
            return
        hs = score_hand(m, s)
        if (e.result, e.winner) != (hs.result, hs.winner):
            self.report(FindingCode.RESULT_MISMATCH, f"claimed {e.result} won by {e.winner}; the replay gives {hs.result} won by {hs.winner}", e.hand, e.seq)
        if tuple(e.points) != hs.points:
            self.report(FindingCode.POINTS_MISMATCH, f"claimed points {list(e.points)}; recomputed {list(hs.points)}", e.hand, e.seq)
        expect = tuple(a + b for a, b in zip(self.claimed_score, hs.points, strict=False))
        if tuple(e.score) != expect:
            self.report(FindingCode.SCORE_MISMATCH, f"claimed score {list(e.score)}; the previous claimed score plus this hand's points is {list(expect)}", e.hand, e.seq)
        if sorted(e.notes) != sorted(hs.notes):
            self.report(FindingCode.NOTE_MISMATCH, f"claimed notes {list(e.notes)}; the replay gives {list(hs.notes)}", e.hand, e.seq)
        self.claimed_score = tuple(e.score)
        self.m = record(m, hs, leader=h.deal.leader)
        self._keep(h, self._hand_report(h, hs.result, hs.winner, hs.points, self.m.score, hs.notes))

    def _hand_report(
        self,
        h: _Hand,
        result: str | None,
        winner: int | None,
        points: tuple[int, ...],
        score: tuple[int, ...],
        notes: tuple[str, ...],
    ) -> HandReport:
        s = h.state
        c = h.claimed
        seed = self.reveals.get(h.no)
        opener = None
        for mv in h.moves:
            if mv.kind == "play":
                opener = mv.seat
                break
        return HandReport(
            hand=h.no,
            result=result,  # type: ignore[arg-type]
            winner=winner,
            points=tuple(points),
            score=tuple(score),
            notes=tuple(notes),
            leader=h.deal.leader,
            opener=opener,
            blocker=s.blocker if s.blocker >= 0 else None,
            hands=tuple(h.deal.hands),
            stock=h.stock,
            pips=s.pips(),
            client_seeds=tuple(h.deal.client_seeds),
            server_seed=seed[0] if seed else None,
            seed_ok=self.chain.get(h.no),
            deal_ok=h.deal_ok,
            play_ok=not h.play_error,
            claimed_result="cancelled" if h.cancelled else (c.result if c else None),
            claimed_winner=c.winner if c else None,
            claimed_points=tuple(c.points) if c else None,
            claimed_score=tuple(c.score) if c else None,
            claimed_notes=tuple(c.notes) if c else None,
            started=h.deal.ts,
            ended=h.end_ts,
            moves=tuple(h.moves),
        )

    def _keep(self, h: _Hand, report: HandReport) -> None:
        h.report = report
        self.hand_reports.append(report)

    def _close_incomplete(self, h: _Hand) -> None:
        r = self.rules
        zero = (0,) * (r.sides if r else 2)
        self._keep(h, self._hand_report(h, None, None, zero, self.m.score if self.m else zero, ()))
        h.ended = True

    def on_reveal(self, e: ev.Reveal) -> None:
        got = self.reveals.get(e.hand)
        if got is not None and got[1] != e.seq and got[0] != e.server_seed:
            self.report(FindingCode.COMMIT_MISMATCH, f"a second, different seed is revealed for hand {e.hand}", e.hand, e.seq)
            return
        if e.hand in self.ended_hands or (self.past_end and e.hand > self.last_hand_no):
            return
        # early only if the hand does end later (else HAND_INCOMPLETE covers it)
        if self.end_seqs.get(e.hand, -1) > e.seq:
            self.report(FindingCode.REVEAL_EARLY, f"the seed of hand {e.hand} is revealed before the hand ended", e.hand, e.seq)

    def on_match_end(self, e: ev.MatchEnd) -> None:
        if self.end_event is not None:
            self.report(FindingCode.SEQ_DUPLICATE, "a second match_end", None, e.seq)
            return
        self.end_event = e
        self.ended = e.ts
        m = self.m
        if m is None:
            return
        h = self.hand
        if h is not None and not h.ended and e.result != "abandoned":
            self.report(FindingCode.HAND_INCOMPLETE, f"hand {h.no} has no hand_end before the match ends", h.no, e.seq)
            self._close_incomplete(h)
        if e.result == "abandoned":
            return
        if self.past_end:
            return  # "went on past its end" is reported once, at the extra deal
        if not m.over:
            self.report(FindingCode.MATCH_END_MISMATCH, f"the match ends ({e.result}), but the rules say it goes on (score {list(m.score)})", None, e.seq)
            return
        problems = []
        if (e.result, e.winner) != (m.result, m.winner):
            problems.append(f"claimed {e.result} for {e.winner}, the rules give {m.result} for {m.winner}")
        if tuple(e.score) != self.claimed_score:
            problems.append(f"claimed score {list(e.score)}, the last hand's score is {list(self.claimed_score)}")
        if problems:
            self.report(FindingCode.MATCH_END_MISMATCH, "; ".join(problems), None, e.seq)
        elif sorted(e.notes) != sorted(m.notes):
            self.report(FindingCode.NOTE_MISMATCH, f"claimed match notes {list(e.notes)}; the rules give {list(m.notes)}", None, e.seq)

    # -- the end of the log

    def _finish(self) -> MatchReport:
        assert self.start is not None
        h = self.hand
        abandoned = self.end_event is not None and self.end_event.result == "abandoned"
        if h is not None and not h.ended:
            if not abandoned:
                self.report(FindingCode.HAND_INCOMPLETE, f"the log stops in the middle of hand {h.no}", h.no, None)
            self._close_incomplete(h)
        if self.end_event is None:
            self.report(FindingCode.MATCH_INCOMPLETE, "no match_end: the match is stored as unfinished", None, None)
        self._check_chain()
        hands = self._collect_hands()
        m = self.m
        r = self.rules
        result: str | None = None
        winner: int | None = None
        notes: tuple[str, ...] = ()
        if abandoned:
            result = "abandoned"
        elif m is not None and m.over:
            result, winner, notes = m.result, m.winner, m.notes
        score = m.score if m is not None else ()
        end = self.end_event
        profile = PROFILES.get(self.start.profile)
        seeds = {0: self.start.seq} | {
            h.hand: self.reveals[h.hand][1] for h in hands if h.server_seed and h.hand in self.reveals
        }
        findings, places = locate(self.findings, self.records, set(seeds.values()))
        findings = cap_findings(findings)
        seed_lines = tuple((h, *places[q]) for h, q in seeds.items() if q in places)
        verdict = "invalid" if any(CODES[f.code] == "error" for f in findings) else "valid"
        return MatchReport(
            match=self.match_id,
            verdict=verdict,  # type: ignore[arg-type]
            profile=self.start.profile,
            table=self.start.table,
            rules=r.model_dump(mode="json") if r else None,
            players=r.players if r else len(self.start.seats),
            hands=tuple(hands),
            result=result,
            winner=winner,
            score=tuple(score),
            notes=notes,
            claimed_result=end.result if end else None,
            claimed_winner=end.winner if end else None,
            claimed_score=tuple(end.score) if end else None,
            claimed_notes=tuple(end.notes) if end else None,
            findings=findings,
            seats=tuple(self.seats),
            anchor=self.start.anchor,
            beacon=self.start.beacon,
            rematch_of=self.start.rematch_of,
            started=self.started,
            ended=self.ended,
            files=tuple(self.files),
            events=len(self.records),
            lead_draw=tuple(tuple(d) for d in self.lead_draw.draws) if self.lead_draw else (),  # type: ignore[misc]
            estimates=tuple(sorted(profile.estimates)) if profile else (),
            seed_lines=seed_lines,
        )

    def _collect_hands(self) -> list[HandReport]:
        return self.hand_reports

    def _check_chain(self) -> None:
        assert self.start is not None
        if self.start.scheme != "deal-v1":
            return
        finished = self.end_event is not None
        for no in sorted(self.ended_hands):
            if no not in self.reveals and finished:
                self.report(FindingCode.REVEAL_MISSING, f"hand {no} ended but its seed was never revealed", no, self.ended_hands[no])
        if not self.start.anchor:
            return
        # hands played past the match's end get no findings of their own
        listed = {h.hand for h in self.hand_reports} | set(self.ended_hands)
        for no, ok in sorted(self.chain.items()):
            if not ok and no in listed:
                self.report(FindingCode.COMMIT_MISMATCH, f"the seed revealed for hand {no} does not hash to its predecessor in the chain", no, self.reveals[no][1])


def validate_match(
    records: Sequence[Record],
    *,
    rematch_leaders: Mapping[str, int | None] | None = None,
    keep_moves: bool = True,
) -> MatchReport:
    """Validate one match from its lines (any order; they are sorted by seq).

    An exception raised on the way is a defect of the validator, not of the
    log: the match gets an INTERNAL_ERROR finding that names it, the file and
    the line it was at, and no hands; the run goes on with the next match."""
    replayer = MatchReplayer(records, rematch_leaders=rematch_leaders, keep_moves=keep_moves)
    try:
        return replayer.run()
    except Exception as exc:  # noqa: BLE001 -- any defect, so that one match never ends the run
        return internal_error(records, exc, replayer.at)


def internal_error(records: Sequence[Record], exc: BaseException, seq: int | None = None) -> MatchReport:
    """The report of a match the validator failed on: one INTERNAL_ERROR,
    on the line of event `seq` (else the match's first line)."""
    names = (r.event.match if isinstance(r, EventLine) else r.match for r in records)
    match = next((m for m in names if m is not None), "")
    where: Record | None = next((r for r in records if isinstance(r, EventLine) and r.event.seq == seq), None)
    if where is None and records:
        where = min(records, key=lambda r: (r.file, r.line))
    what = f"{type(exc).__name__}: {exc}"
    if len(what) > 300:
        what = what[:300] + "..."
    finding = Finding(
        FindingCode.INTERNAL_ERROR,
        f"the validator failed on this match ({what}); it is kept without its hands: a defect to report",
        seq=seq if where is not None and isinstance(where, EventLine) else None,
        file=where.file if where is not None else None,
        line=where.line if where is not None else None,
    )
    files = tuple(dict.fromkeys(r.file for r in records))
    return MatchReport(match=match, verdict="invalid", findings=(finding,), files=files, events=len(records))

