"""One simulated match: bots play it to the letter of the spec, or plant an error.

Every match follows table-log.md and deal-commitment.md to the letter: the
anchor is S_0 of a real reverse hash chain, every deal (and lead draw) is
derived by deal-v1 from the hand's seed, draws take the boneyard in order,
and the server's claims (`hand_end`, `match_end`) are what `replay.match`
computes. In some matches a player leaves and a marked bot (`bot-<style>`)
or another player takes the seat, and some reveals come after the next deal.

A `Plant` makes the match carry one error: the runner's hooks
(`_tamper_deal`, `_tamper_lead`, `_redeal`, `_plant_move`, and the end of
`_play`) write it at the first chance from the plant's hand and ply; the
catalogue of defects (`replay.simulate.defects`) says which plant to make.

Speed: the hands go through `replay.engine` itself (no second move
generator to keep in step); 100,000 international hands take ~26 s
(bench/simulate.py).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from replay.belief.history import Recorder
from replay.bots import BOTS, Bot, Memo
from replay.deal import (
    SCHEME,
    Deal,
    derive_deal,
    derive_lead_deck,
    make_chain,
    resolve_lead_draw,
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
    legal_moves,
    new_hand,
)
from replay.knowledge import Tracker
from replay.match import (
    Lead,
    MatchState,
    new_match,
    next_lead,
    record,
    redeal_due,
    score_hand,
)
from replay.rules import PROFILES
from replay.searchbots import SearchBot, search_bot
from replay.simulate.config import Player, SimConfig
from replay.solver import HandContext
from replay.tiles import (
    BIT,
    DOUBLE_SIX,
    OTHER,
    SUIT_MASK,
    iter_tiles,
    mask_of,
    tile_name,
)

#: Seeds per match chain (S_1 .. S_256); a match that would need more is abandoned.
CHAIN_LENGTH: Final = 256

# --- time stamps -------------------------------------------------------------------


class Stamp:
    """RFC 3339 UTC with milliseconds; the date-time part cached per second."""

    __slots__ = ("_sec", "_prefix")

    def __init__(self) -> None:
        self._sec = -1
        self._prefix = ""

    def __call__(self, ms: int) -> str:
        sec, milli = divmod(ms, 1000)
        if sec != self._sec:
            self._sec = sec
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        return f"{self._prefix}.{milli:03d}Z"


def format_ts(ms: int) -> str:
    """RFC 3339 UTC time of epoch milliseconds, as logs write it.

    >>> from replay.simulate.config import EPOCH_MS
    >>> format_ts(EPOCH_MS + 5120)
    '2026-11-01T00:00:05.120Z'
    """
    return Stamp()(ms)


# --- planted errors ------------------------------------------------------------------


@dataclass
class Plant:
    """One error to plant in a match: `code` at the first chance from `hand`, `ply`."""

    code: str
    hand: int = 1
    ply: int = 3
    done: bool = False
    hand_done: int = 0  # the hand it went into


# --- one match ---------------------------------------------------------------------

_NO_PLANT: Final = Plant("", hand=1 << 30)


class SimMatch:
    """Plays one match and collects its events as (ms, dict) in log order."""

    def __init__(
        self,
        cfg: SimConfig,
        rng: random.Random,
        *,
        match_id: str,
        table: str,
        profile: str,
        seats: Sequence[Player],
        start_ms: int,
        pool: Sequence[Player] = (),
        rematch_of: str | None = None,
        rematch_leader: int | None = None,
        top_seed: bytes | None = None,
        plant: Plant | None = None,
    ) -> None:
        self.cfg = cfg
        self.rng = rng
        self.id = match_id
        self.table = table
        self.profile = profile
        self.rules = cfg.rules_for(profile)
        self.players = list(seats)
        self.bots: list[Bot] = [bot_for(p.style, cfg.search_samples) for p in seats]
        self.pool = pool
        self.rematch_of = rematch_of
        self.rematch_leader = rematch_leader
        self.top_seed = top_seed if top_seed is not None else rng.randbytes(32)
        self.plant = plant or _NO_PLANT
        self.events: list[tuple[int, dict[str, Any]]] = []
        self.ms = start_ms
        self.stamp = Stamp()
        self.hands = 0
        self.state: MatchState | None = None
        self.beacon: str | None = None
        self.seeds: dict[int, bytes] = {}
        self.original = list(seats)  # the players who sat down (rematches keep them)
        self.hand_draws = 0

    # events

    def emit(self, type_: str, **fields: Any) -> dict[str, Any]:
        self.ms += 400 + int(self.rng.random() * 5600)  # randint is 10x slower
        ev = {"type": type_, "match": self.id, "seq": len(self.events), "ts": self.stamp(self.ms)}
        ev.update(fields)
        self.events.append((self.ms, ev))
        return ev

    def reveal(self, hand: int) -> None:
        self.emit("reveal", hand=hand, server_seed=self.seeds[hand].hex())

    def client_seed(self) -> str:
        r = self.rng
        return "" if r.random() < 0.4 else f"{r.getrandbits(28):07x}"

    # the match

    def run(self) -> SimMatch:
        cfg, rng, r = self.cfg, self.rng, self.rules
        n = r.players
        plant = self.plant
        chain = make_chain(self.top_seed, CHAIN_LENGTH)
        self._start(chain[0])
        m = new_match(r, PROFILES[self.profile].shutout_note)
        drawn_leader: int | None = None
        late: list[int] = []  # hands whose reveal waits for the next deal
        change = self._plan_seat_change()
        abandoned = False
        hand_no = 0
        while not m.over:
            hand_no += 1
            if hand_no > CHAIN_LENGTH or (hand_no > 1 and rng.random() < cfg.abandon_rate):
                abandoned = True
                break
            if change is not None and change[0] < hand_no:
                self._seat_change(change[2], None)
                change = None
            seed = chain[hand_no]
            if plant.code == "COMMIT_MISMATCH" and not plant.done and hand_no >= plant.hand:
                seed = rng.randbytes(32)  # a seed from outside the committed chain
                plant.done, plant.hand_done = True, hand_no
            self.seeds[hand_no] = seed
            seeds = [self.client_seed() for _ in range(n)]
            deal = derive_deal(
                seed,
                table=self.table,
                match=self.id,
                hand=hand_no,
                players=n,
                client_seeds=seeds,
                beacon=self.beacon,
                doubles_aside=r.stock == "doubles_aside",
            )
            if hand_no == 1 and r.lead_draw_used and self.rematch_leader is None:
                deck = derive_lead_deck(
                    seed,
                    table=self.table,
                    match=self.id,
                    players=n,
                    client_seeds=seeds,
                    beacon=self.beacon,
                    doubles_only=r.first_lead == "drawn_double",
                )
                draws, drawn_leader = resolve_lead_draw(deck, n, r.first_lead)  # type: ignore[arg-type]
                self.emit("lead_draw", hand=1, draws=[[s, tile_name(t)] for s, t in draws])
            deal, stock = self._tamper_deal(deal, hand_no)
            masks = [mask_of(h) for h in deal.hands]
            lead = next_lead(
                m, masks, drawn_leader=drawn_leader, rematch_leader=self.rematch_leader
            )
            logged_lead = self._tamper_lead(lead, hand_no, n)
            self.emit(
                "deal",
                hand=hand_no,
                client_seeds=seeds,
                hands=[[tile_name(t) for t in h] for h in deal.hands],
                stock=len(deal.stock),
                leader=logged_lead.seat,
            )
            self.hands += 1
            for h in late:
                self.reveal(h)
            late = []
            if self._redeal(masks, hand_no):
                if rng.random() < cfg.reveal_delay_rate:
                    late.append(hand_no)
                else:
                    self.reveal(hand_no)
                continue
            state = new_hand(
                r, deal.hands, leader=logged_lead.seat, opening=logged_lead.tile, stock=stock
            )
            state = self._play(state, hand_no, change, HandContext(m.played, m.first_block_paid), lead.fixed_by)
            if change is not None and change[0] == hand_no and change[1] < 0:
                change = None  # done within the hand
            score = score_hand(m, state)
            m = record(m, score, leader=logged_lead.seat)
            end: dict[str, Any] = {
                "hand": hand_no,
                "result": score.result,
                "winner": score.winner,
                "points": list(score.points),
                "score": list(m.score),
            }
            if score.notes:
                end["notes"] = list(score.notes)
            self.emit("hand_end", **end)
            if not m.over and rng.random() < cfg.reveal_delay_rate:
                late.append(hand_no)
            else:
                self.reveal(hand_no)
        for h in late:
            self.reveal(h)
        self._end(m, abandoned)
        self.state = m
        return self

    def _start(self, anchor: bytes) -> None:
        """The match_start event (and the beacon, drawn first)."""
        rng = self.rng
        if rng.random() < self.cfg.beacon_rate:
            self.beacon = f"drand:quicknet:{rng.randrange(10_000_000, 20_000_000)}"
        start: dict[str, Any] = {
            "v": 1,
            "table": self.table,
            "profile": self.profile,
            "rules": dict(self.cfg.overrides),
            "seats": [
                {"seat": s, "player": p.id, "name": p.name} for s, p in enumerate(self.players)
            ],
            "scheme": SCHEME,
            "anchor": anchor.hex(),
        }
        if self.beacon is not None:
            start["beacon"] = self.beacon
        if self.rematch_of is not None:
            start["rematch_of"] = self.rematch_of
        self.emit("match_start", **start)

    def _end(self, m: MatchState, abandoned: bool) -> None:
        """The match_end event: the match's result, or abandoned."""
        if abandoned:
            self.emit("match_end", result="abandoned", winner=None, score=list(m.score))
        else:
            fin: dict[str, Any] = {"result": m.result, "winner": m.winner, "score": list(m.score)}
            if m.notes:
                fin["notes"] = list(m.notes)
            self.emit("match_end", **fin)

    # seat changes

    def _plan_seat_change(self) -> list[int] | None:
        """[hand, ply or -1, seat]: when a player leaves (ply -1 once done)."""
        rng = self.rng
        if rng.random() >= self.cfg.seat_change_rate:
            return None
        return [rng.randint(1, 4), rng.randint(0, 14), rng.randrange(self.rules.players)]

    def _seat_change(self, seat: int, hand: int | None) -> None:
        rng = self.rng
        others = [p for p in self.pool if p not in self.players]
        if others and rng.random() < 0.3:
            p = rng.choice(others)
            bot = False
        else:
            style = rng.choice(self.cfg.bots)
            p = Player(f"bot-{style}", f"Bot ({style})", style)
            bot = True
        self.players[seat] = p
        self.bots[seat] = bot_for(p.style, self.cfg.search_samples)
        ev: dict[str, Any] = {"seat": seat, "player": p.id, "bot": bot}
        if hand is not None:
            ev["hand"] = hand
        self.emit("seat_change", **ev)

    # deal-level hooks (plants)

    def _tamper_deal(self, deal: Deal, hand_no: int) -> tuple[Deal, tuple[int, ...]]:
        """The deal to log and play, and the boneyard as the server will hand it out."""
        plant = self.plant
        if plant.done or hand_no < plant.hand:
            return deal, deal.stock
        if plant.code == "DEAL_MISMATCH":
            # one tile of seat 0 and one of seat 1 trade places: a deal the
            # seeds do not give, played out consistently
            h = [list(x) for x in deal.hands]
            h[0][0], h[1][0] = h[1][0], h[0][0]
            plant.done, plant.hand_done = True, hand_no
            return Deal(tuple(tuple(x) for x in h), deal.stock), deal.stock
        if plant.code == "DRAW_MISMATCH" and len(deal.stock) >= 2:
            s = list(deal.stock)
            s[0], s[1] = s[1], s[0]  # the first draw takes the second tile
            return deal, tuple(s)
        return deal, deal.stock

    def _tamper_lead(self, lead: Lead, hand_no: int, n: int) -> Lead:
        plant = self.plant
        if plant.done or hand_no < plant.hand:
            return lead
        if plant.code == "WRONG_LEADER":
            plant.done, plant.hand_done = True, hand_no
            return Lead((lead.seat + 1) % n)
        if plant.code == "WRONG_OPENING" and lead.tile >= 0:
            plant.done, plant.hand_done = True, hand_no
            return Lead(lead.seat, -2)  # -2: marks "open with anything but the fixed tile"
        return lead

    def _redeal(self, masks: Sequence[int], hand_no: int) -> bool:
        """Throw the deal in if the rules (or a bot's claim) say so."""
        r = self.rules
        plant = self.plant
        if (
            plant.code == "REDEAL_INVALID"
            and not plant.done
            and hand_no >= plant.hand
            and not redeal_due(r, masks)
        ):
            seat = self.rng.randrange(r.players)  # claims without five doubles
            self.emit("redeal_claim", hand=hand_no, seat=seat)
            self.emit("hand_cancelled", hand=hand_no, reason="five_doubles")
            plant.done, plant.hand_done = True, hand_no
            return True
        if r.redeal == "none":
            return False
        due = redeal_due(r, masks)
        if not due:
            return False
        seat = due[0]
        if r.redeal == "five_doubles_claim":
            if not self.bots[seat].claims_redeal(masks[seat], self.rng):
                return False
            self.emit("redeal_claim", hand=hand_no, seat=seat)
        self.emit("hand_cancelled", hand=hand_no, reason="five_doubles")
        return True

    # the hand

    def _play(self, state: HandState, hand_no: int, change: list[int] | None, ctx: HandContext,
              fixed_by: str) -> HandState:  # fmt: skip
        rng = self.rng
        n = state.players
        bots = self.bots
        memo = Memo.fresh(n)
        flip_ok = self.cfg.flip_openings
        plant = self.plant
        planting = bool(plant.code) and not plant.done and hand_no >= plant.hand
        # what the table showed, for the searching bots (a planted error may
        # break it: they play by rule of thumb in such a hand)
        tracker = Recorder(state, fixed_by=fixed_by) if self.cfg.searching and not planting else None
        if state.opening == -2:  # WRONG_OPENING: the fixed tile is refused
            state = state._replace(opening=-1)
            other = [mv for mv in legal_moves(state) if type(mv) is Play and mv.tile != DOUBLE_SIX]
            state = self._play_one(state, hand_no, other[0], memo, flip=False, tracker=tracker)
        ply = 0
        self.hand_draws = 0
        while not state.over:
            if change is not None and change[0] == hand_no and change[1] == ply:
                self._seat_change(change[2], hand_no)
                change[1] = -1
            if planting and not plant.done:
                planted = self._plant_move(state, hand_no, ply, memo)
                if planted is not None:
                    state = planted
                    ply += 1
                    continue
                if state.closing and plant.code == "HAND_NOT_OVER":
                    # the server ends the hand without the passes all_pass owes
                    while not state.over:
                        state = act(state, state.turn, legal_moves(state)[0])
                    plant.done, plant.hand_done = True, hand_no
                    break
            moves = legal_moves(state)
            seat = state.turn
            bot = bots[seat]
            if len(moves) == 1:
                mv = moves[0]
            elif tracker is not None and isinstance(bot, SearchBot) and state.result is None:
                mv = bot.think(state, moves, tracker, ctx, rng)
            else:
                mv = bot.choose(state, moves, memo, rng)
            flip = (
                flip_ok
                and state.left < 0
                and type(mv) is Play
                and bots[seat].flip_opening(mv.tile, rng)
            )
            state = self._play_one(state, hand_no, mv, memo, flip=flip, tracker=tracker)
            ply += 1
        if planting and not plant.done:
            if plant.code == "EVENT_AFTER_END":
                self.emit("pass", hand=hand_no, seat=state.turn)
                plant.done, plant.hand_done = True, hand_no
            elif plant.code == "DRAW_MISMATCH" and self.hand_draws:
                plant.done, plant.hand_done = True, hand_no
        return state

    def _play_one(
        self, state: HandState, hand_no: int, mv: Move, memo: Memo, *, flip: bool,
        tracker: Tracker | None = None,
    ) -> HandState:
        seat = state.turn
        if tracker is not None:
            tracker.see(state, mv)
        if type(mv) is Play:
            t = mv.tile
            if state.left < 0:
                # the first tile: written high half first ("63") = high half
                # on the left, unless the player laid it the other way round
                name = tile_name(t)
                if flip:
                    name = name[::-1]
                    mv = PLAYS[t][RIGHT]
                self.emit("play", hand=hand_no, seat=seat, tile=name, end=None)
                memo.saw_play(seat, t, -1)
            else:
                end = mv.end
                self.emit("play", hand=hand_no, seat=seat, tile=tile_name(t), end=END_NAMES[end])
                memo.saw_play(seat, t, OTHER[t][state.left if end == LEFT else state.right])
            return act(state, seat, mv)
        if mv is PASS:
            if state.result is None:
                memo.saw_pass(seat, state.left, state.right)
            self.emit("pass", hand=hand_no, seat=seat)
            return act(state, seat, mv)
        if mv is DRAW:
            if state.result is None:
                memo.saw_pass(seat, state.left, state.right)
            self.emit("draw", hand=hand_no, seat=seat, tile=tile_name(state.stock[0]))
            self.hand_draws += 1
            return act(state, seat, mv)
        # YIELD
        self.emit("lead_yield", hand=hand_no, seat=seat, to=(seat + 2) % state.players)
        return act(state, seat, mv)

    def _plant_move(self, state: HandState, hand_no: int, ply: int, memo: Memo) -> HandState | None:
        """Plant a bad move if this position allows it: the state after it, or
        None (also when only an extra bad event was written: the real move follows)."""
        plant = self.plant
        code = plant.code
        seat = state.turn
        n = state.players
        on = state.result is None

        def planted() -> None:
            plant.done, plant.hand_done = True, hand_no

        if code == "LEAD_YIELD_INVALID":
            if on and state.left < 0 and state.opening < 0 and not state.yielded:
                self.emit("lead_yield", hand=hand_no, seat=seat, to=(seat + 2) % n)
                planted()
                return act(state, seat, YIELD)
            return None
        if code == "DRAWN_TILE_NOT_PLAYED":
            if on and state.must_play >= 0:
                # the drawn tile fits, and the seat passes instead of playing it
                self.emit("pass", hand=hand_no, seat=seat)
                planted()
                return act(state, seat, PASS)
            return None
        if ply < plant.ply or not on or state.left < 0 or state.must_play >= 0:
            return None
        return self._plant_on_line(state, hand_no, memo)

    def _plant_on_line(self, state: HandState, hand_no: int, memo: Memo) -> HandState | None:
        """`_plant_move` for the codes of a move on a line with two ends."""
        plant = self.plant
        code = plant.code
        seat = state.turn
        n = state.players
        hand = state.hands[seat]

        def planted() -> None:
            plant.done, plant.hand_done = True, hand_no

        fit = FIT[state.left * 7 + state.right]
        if code == "NOT_YOUR_TURN":
            other = (seat + 1) % n
            theirs = state.hands[other]
            if theirs & fit and theirs.bit_count() >= 2:
                t = next(iter_tiles(theirs & fit))
                end = LEFT if BIT[t] & SUIT_MASK[state.left] else RIGHT
                self.emit("play", hand=hand_no, seat=other, tile=tile_name(t), end=END_NAMES[end])
                planted()
                return act(state, other, PLAYS[t][end])
        elif code == "TILE_NOT_IN_HAND":
            # a tile another seat holds, named on an end it fits: the replay
            # skips it, and the seat then makes its real move
            for s in range(n):
                cand = state.hands[s] & SUIT_MASK[state.left]
                if s != seat and cand:
                    t = next(iter_tiles(cand))
                    self.emit("play", hand=hand_no, seat=seat, tile=tile_name(t), end="left")
                    planted()
                    break
        elif code == "TILE_DOES_NOT_FIT":
            wrong = hand & ~fit  # fits neither end
            if wrong:
                t = next(iter_tiles(wrong))
                self.emit("play", hand=hand_no, seat=seat, tile=tile_name(t), end="left")
                planted()
        elif code == "FALSE_PASS" and hand & fit:
            memo.saw_pass(seat, state.left, state.right)
            self.emit("pass", hand=hand_no, seat=seat)
            planted()
            return act(state, seat, PASS)
        elif code == "ILLEGAL_DRAW" and hand & fit and state.stock:
            self.emit("draw", hand=hand_no, seat=seat, tile=tile_name(state.stock[0]))
            planted()
            return act(state, seat, DRAW)
        return None

# --- bots -------------------------------------------------------------------------


def bot_for(style: str, samples: int = 16) -> Bot:
    """The bot that plays `style` (replay.bots, or replay.searchbots with `samples`).

    >>> bot_for("heavy").style, bot_for("peeker", 8).style
    ('heavy', 'peeker')
    """
    return BOTS[style] if style in BOTS else search_bot(style, samples)
