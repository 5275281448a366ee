"""The simulator: whole matches of bot players, written as table logs.

Every match follows table-log.md and deal-commitment.md to the letter: the
anchor is S_0 of a real reverse hash chain, every deal (and lead draw) is
derived by deal-v1 from the hand's seed, draws take the boneyard in order,
and the server's claims (`hand_end`, `match_end`) are what `replay.match`
computes. Everything random comes from one `random.Random(seed)`, server
seeds included, so a run is a pure function of its `SimConfig`.

Players come from a pool with stable ids and names (`make_pool`), each
playing one bot style of `replay.bots`; several tables may play at once,
their events mixed in time order. Some matches are rematches
(`rematch_of`, no lead draw: the first lead rotates from the earlier
match's first leader), in some a player leaves and a marked bot
(`bot-<style>`) or another player takes the seat, and some reveals come
after the next deal. `defect_log(code)` writes instead a tiny log with one
planted error of that finding code (`DEFECTS` maps each code to the codes
a validator reports for it).

Command line (wired into `replay` by `add_simulate_parser`):

    replay simulate --profile P[,P2...] --matches N --seed S --out FILE
        [--rules JSON] [--players-pool N] [--bots random,heavy,partner]
        [--tables K] [--gz] [--hands N] [--defect CODE]
        [--cheater ID=STYLE ...] [--search-samples N]

Planted cheaters (`--cheater p-00003=omniscient`, or `peeker`) and the
honest searching bot (`--bots ...,sampler`) come from replay.searchbots; a
run has them only when asked.

Speed: the hands go through `replay.engine` itself (no second move
generator to keep in step); 100,000 international hands take ~26 s
(bench/simulate.py).

>>> cfg = SimConfig(profiles=("domena_2p",), matches=1, seed=7)
>>> lines = list(simulate(cfg))
>>> lines[0][:40]
b'{"type":"match_start","match":"m-7-0001"'
>>> orjson.loads(lines[-1])["type"]
'match_end'
"""

from __future__ import annotations

import argparse
import gzip
import heapq
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

import orjson

from replay.bots import BOTS, STYLES, Bot, Memo
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
from replay.rules import PROFILES, Rules, RulesError, resolve
from replay.searchbots import CHEATS, SEARCH_STYLES, SearchBot, search_bot
from replay.solver import HandContext
from replay.tiles import (
    BIT,
    DOUBLE_SIX,
    OTHER,
    SUIT_MASK,
    iter_tiles,
    mask_of,
    parse_tile,
    tile_name,
    weight_key,
)

__all__ = [
    "CHAIN_LENGTH",
    "DEFECTS",
    "NAMES",
    "Player",
    "SimConfig",
    "SimStats",
    "add_simulate_parser",
    "defect_log",
    "make_pool",
    "run_simulate",
    "simulate",
    "write_lines",
]

#: Seeds per match chain (S_1 .. S_256); a match that would need more is abandoned.
CHAIN_LENGTH: Final = 256

#: 2026-11-01T00:00:00Z in ms: the simulated platform's first day.
_EPOCH_MS: Final = 1_793_491_200_000

#: Player names of the pool, by index: id p-00001 is always NAMES[0], so
#: that every run and every sample file agrees on who is who. Non-ASCII,
#: quotes and one HTML-looking name are there on purpose (report escaping).
NAMES: Final[tuple[str, ...]] = (
    "Ana Torres",
    "Zoë Martin",
    "José Ñúñez",
    "李雷",
    "<script>alert(1)</script>",
    "Björn Ødegaard",
    "María-José Peña",
    "韩梅梅",
    'Luis "El Tigre" Díaz',
    "Dmitri Orlov",
    "Дарья Смирнова",
    "Σοφία Παππά",
    "Nguyễn Văn An",
    "Ayşe Yılmaz",
    "Kwame Mensah",
    "Chloé Dubois",
    "Iñaki Etxeberria",
    "O'Brien",
    "Priya Raman",
    "Jürgen Weiß",
    "Carmen Rivera",
    "Tomás Ortega",
    "Ngozi Okafor",
    "Raúl Castillo",
    "Yolanda Cruz",
    "Pedro Almonte",
    "Lucía Fernández",
    "Ōtani Shō",
    "Ahmed Al-Farsi",
    "Domino Dan 🁫",
)


@dataclass(frozen=True, slots=True)
class Player:
    """A platform player: stable id, display name, and the bot style it plays."""

    id: str
    name: str
    style: str


def make_pool(size: int, styles: Sequence[str] = STYLES) -> list[Player]:
    """Players p-00001 .. p-{size}: names and styles fixed by the index alone.

    >>> [(p.id, p.name, p.style) for p in make_pool(3, ["heavy", "random"])]
    [('p-00001', 'Ana Torres', 'heavy'), ('p-00002', 'Zoë Martin', 'random'), ('p-00003', 'José Ñúñez', 'heavy')]
    >>> make_pool(31)[30].name
    'Ana Torres 2'
    """
    out = []
    for i in range(size):
        base = NAMES[i % len(NAMES)]
        rnd = i // len(NAMES)
        name = base if rnd == 0 else f"{base} {rnd + 1}"
        out.append(Player(f"p-{i + 1:05d}", name, styles[i % len(styles)]))
    return out


@dataclass(frozen=True)
class SimConfig:
    """One simulator run. `profiles` are dealt to tables in turn."""

    profiles: tuple[str, ...] = ("international",)
    overrides: Mapping[str, Any] = field(default_factory=dict)
    matches: int = 1
    hands: int | None = None  # if set: play matches until this many deals (matches ignored)
    seed: int = 0
    players_pool: int = 40
    bots: tuple[str, ...] = STYLES
    tables: int = 1
    rematch_rate: float = 0.3  # a finished match is followed by its rematch
    seat_change_rate: float = 0.15  # a match in which a player leaves
    abandon_rate: float = 0.0  # per hand played: the match is abandoned after it
    reveal_delay_rate: float = 0.15  # a reveal written after the next deal
    beacon_rate: float = 0.3
    flip_openings: bool = True  # bots may lay the opening tile low half left
    # planted cheaters (never by default): (player id, style of replay.searchbots), e.g.
    # ("p-00003", "omniscient"); that player plays in that style whatever the pool gave it
    cheaters: tuple[tuple[str, str], ...] = ()
    search_samples: int = 16  # deals a searching bot (sampler, peeker) scores a decision

    @property
    def searching(self) -> bool:
        """Some seat may be played by a bot of replay.searchbots (it needs the table's view)."""
        return bool(self.cheaters) or any(b not in BOTS for b in self.bots)

    def rules_for(self, profile: str) -> Rules:
        return resolve(profile, self.overrides)


@dataclass(slots=True)
class SimStats:
    matches: int = 0
    hands: int = 0  # deals, cancelled ones included
    events: int = 0
    ids: list[str] = field(default_factory=list)


# --- time stamps -------------------------------------------------------------------


class _Stamp:
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

    >>> format_ts(_EPOCH_MS + 5120)
    '2026-11-01T00:00:05.120Z'
    """
    return _Stamp()(ms)


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


class _Match:
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
        self.stamp = _Stamp()
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

    def run(self) -> _Match:
        cfg, rng, r = self.cfg, self.rng, self.rules
        n = r.players
        plant = self.plant
        chain = make_chain(self.top_seed, CHAIN_LENGTH)
        if rng.random() < cfg.beacon_rate:
            self.beacon = f"drand:quicknet:{rng.randrange(10_000_000, 20_000_000)}"
        start: dict[str, Any] = {
            "v": 1,
            "table": self.table,
            "profile": self.profile,
            "rules": dict(cfg.overrides),
            "seats": [
                {"seat": s, "player": p.id, "name": p.name} for s, p in enumerate(self.players)
            ],
            "scheme": SCHEME,
            "anchor": chain[0].hex(),
        }
        if self.beacon is not None:
            start["beacon"] = self.beacon
        if self.rematch_of is not None:
            start["rematch_of"] = self.rematch_of
        self.emit("match_start", **start)

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
        if abandoned:
            self.emit("match_end", result="abandoned", winner=None, score=list(m.score))
        else:
            fin: dict[str, Any] = {"result": m.result, "winner": m.winner, "score": list(m.score)}
            if m.notes:
                fin["notes"] = list(m.notes)
            self.emit("match_end", **fin)
        self.state = m
        return self

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
        tracker = Tracker(state, fixed_by=fixed_by) if self.cfg.searching and not planting else None
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
        hand = state.hands[seat]
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


# --- tables and runs -------------------------------------------------------------------


def bot_for(style: str, samples: int = 16) -> Bot:
    """The bot that plays `style` (replay.bots, or replay.searchbots with `samples`).

    >>> bot_for("heavy").style, bot_for("peeker", 8).style
    ('heavy', 'peeker')
    """
    return BOTS[style] if style in BOTS else search_bot(style, samples)


def _seat_players(rng: random.Random, pool: Sequence[Player], n: int) -> list[Player]:
    return rng.sample(list(pool), n)


def _table(
    cfg: SimConfig,
    t: int,
    rng: random.Random,
    pool: Sequence[Player],
    quota: int | None,
    next_id: Callable[[], str | None],
    start_ms: int,
) -> Iterator[_Match]:
    """The matches of one table, one after the other (rematches follow their match)."""
    profile = cfg.profiles[t % len(cfg.profiles)]
    rules = cfg.rules_for(profile)
    table = f"t-{t + 1}"
    ms = start_ms
    prev: _Match | None = None
    played = 0
    while quota is None or played < quota:
        match_id = next_id()
        if match_id is None:
            return
        rematch = (
            prev is not None
            and prev.state is not None
            and prev.state.over
            and prev.state.first_leader is not None
            and rng.random() < cfg.rematch_rate
        )
        if rematch:
            assert (
                prev is not None and prev.state is not None and prev.state.first_leader is not None
            )
            seats = prev.original
            of: str | None = prev.id
            lead: int | None = (prev.state.first_leader + 1) % rules.players
        else:
            seats = _seat_players(rng, pool, rules.players)
            of = lead = None
        sim = _Match(
            cfg,
            rng,
            match_id=match_id,
            table=table,
            profile=profile,
            seats=seats,
            start_ms=ms,
            pool=pool,
            rematch_of=of,
            rematch_leader=lead,
        )
        sim.run()
        yield sim
        played += 1
        ms = sim.ms + rng.randint(30_000, 300_000)
        prev = sim


def _sub_pool(pool: Sequence[Player], t: int, tables: int, need: int) -> list[Player]:
    """Table t's players: a disjoint share of the pool when it is big enough
    (nobody sits at two tables at once), else the whole pool."""
    share = [p for i, p in enumerate(pool) if i % tables == t]
    return share if len(share) >= need else list(pool)


def check_config(cfg: SimConfig) -> None:
    """Raise ValueError (or RulesError) for a run that cannot be played."""
    for name in cfg.profiles:
        cfg.rules_for(name)
    if not cfg.profiles:
        raise ValueError("no profile given")
    if cfg.tables < 1 or cfg.players_pool < 1 or cfg.matches < 0:
        raise ValueError("tables and players_pool must be at least 1, matches at least 0")
    unknown = [b for b in cfg.bots if b not in BOTS and b not in SEARCH_STYLES]
    if unknown or not cfg.bots:
        raise ValueError(f"unknown bot style {unknown!r} (known: {', '.join(STYLES)}; searching: "
                         f"{', '.join(SEARCH_STYLES)})")
    for pid, style in cfg.cheaters:
        if style not in SEARCH_STYLES:
            raise ValueError(f"cheater {pid}: unknown style {style!r} (known: {', '.join(CHEATS)})")
        if pid not in {p.id for p in make_pool(cfg.players_pool)}:
            raise ValueError(f"cheater {pid}: no such player in a pool of {cfg.players_pool} (p-00001 ...)")
    if cfg.search_samples < 1:
        raise ValueError("search_samples must be at least 1")
    need = max(cfg.rules_for(p).players for p in cfg.profiles)
    if cfg.players_pool < need:
        raise ValueError(f"a pool of {cfg.players_pool} players cannot fill {need} seats")


def simulate(cfg: SimConfig, stats: SimStats | None = None) -> Iterator[bytes]:
    """The lines (without newline) of a run, tables interleaved in time order.

    The config is checked at once (ValueError/RulesError); the matches are
    played lazily, as the lines are consumed, and counted in `stats`.
    """
    check_config(cfg)
    return _run(cfg, stats if stats is not None else SimStats())


def _run(cfg: SimConfig, stats: SimStats) -> Iterator[bytes]:
    master = random.Random(cfg.seed)
    pool = make_pool(cfg.players_pool, cfg.bots)
    if cfg.cheaters:
        planted = dict(cfg.cheaters)
        pool = [Player(p.id, p.name, planted[p.id]) if p.id in planted else p for p in pool]
    need = max(cfg.rules_for(p).players for p in cfg.profiles)
    # each run starts on its own day, so that sample files do not overlap
    base = _EPOCH_MS + (cfg.seed % 997) * 86_400_000 // 7
    rngs = [random.Random(master.getrandbits(64)) for _ in range(cfg.tables)]
    count = 0

    def next_id() -> str | None:
        nonlocal count
        if cfg.hands is not None and stats.hands >= cfg.hands:
            return None
        count += 1
        return f"m-{cfg.seed}-{count:04d}"

    def lines(t: int) -> Iterator[tuple[int, int, bytes]]:
        rng = rngs[t]
        quota = None
        if cfg.hands is None:
            quota = cfg.matches // cfg.tables + (t < cfg.matches % cfg.tables)
        start = base + rng.randint(0, 120_000)
        sub = _sub_pool(pool, t, cfg.tables, need)
        dumps = orjson.dumps
        for sim in _table(cfg, t, rng, sub, quota, next_id, start):
            stats.matches += 1
            stats.hands += sim.hands
            stats.events += len(sim.events)
            stats.ids.append(sim.id)
            for ms, ev in sim.events:
                yield ms, t, dumps(ev)

    if cfg.tables == 1:
        for _, _, line in lines(0):
            yield line
        return
    for _, _, line in heapq.merge(*(lines(t) for t in range(cfg.tables))):
        yield line


def write_lines(lines: Iterable[bytes], out: str | Path | IO[bytes], *, gz: bool = False) -> int:
    """Write lines with a newline each; gzip (mtime 0: same bytes every time) if asked
    or if the name ends in .gz. Returns the number of lines."""
    count = 0
    if isinstance(out, str | Path):
        path = Path(out)
        gz = gz or path.name.endswith(".gz")
        with open(path, "wb") as f:
            return write_lines(lines, f, gz=gz)
    sink: IO[bytes] = out
    z: gzip.GzipFile | None = None
    if gz:
        z = gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0)
        sink = z  # type: ignore[assignment]
    buf: list[bytes] = []
    for line in lines:
        buf.append(line)
        count += 1
        if len(buf) >= 4096:
            buf.append(b"")
            sink.write(b"\n".join(buf))
            buf = []
    if buf:
        buf.append(b"")
        sink.write(b"\n".join(buf))
    if z is not None:
        z.close()
    return count


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
) -> _Match:
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
    sim = _Match(
        cfg,
        rng,
        match_id=match_id,
        table="t-9",
        profile=profile,
        seats=seats,
        start_ms=_EPOCH_MS + 40 * 86_400_000 + seed * 3_600_000 % 86_400_000,
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
    stamp = _Stamp()
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
    stamp = _Stamp()
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


# --- command line ------------------------------------------------------------------


def add_simulate_parser(subparsers: Any) -> None:
    """Add `simulate` to an argparse subparsers object (sets `func=run_simulate`)."""
    p = subparsers.add_parser(
        "simulate",
        help="write simulated table logs (bot players, every profile)",
        description="Write whole matches of bot players as a table log (table-log.md v1).",
    )
    p.add_argument(
        "--profile",
        default="international",
        help="profile, or a comma list dealt to tables in turn",
    )
    p.add_argument("--matches", type=int, default=1, help="matches to play (default 1)")
    p.add_argument(
        "--hands", type=int, default=None, help="play matches until this many deals instead"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="random seed; the output is a function of it"
    )
    p.add_argument("--out", default="-", help="output file ('-': standard output)")
    p.add_argument("--rules", default=None, help="option overrides as a JSON object")
    p.add_argument("--players-pool", type=int, default=40, help="players to seat (default 40)")
    p.add_argument(
        "--bots", default=",".join(STYLES), help=f"bot styles to mix (default {','.join(STYLES)})"
    )
    p.add_argument(
        "--tables", type=int, default=1, help="tables played at once, interleaved in time"
    )
    p.add_argument("--gz", action="store_true", help="gzip the output (also if --out ends in .gz)")
    p.add_argument(
        "--defect",
        default=None,
        metavar="CODE",
        help="write a tiny log with one planted error CODE (any finding code of the spec)",
    )
    p.add_argument(
        "--rematch-rate", type=float, default=0.3, help="chance a match is followed by its rematch"
    )
    p.add_argument(
        "--seat-change-rate", type=float, default=0.15, help="chance a player leaves a match"
    )
    p.add_argument(
        "--abandon-rate", type=float, default=0.0, help="chance per hand the match is abandoned"
    )
    p.add_argument(
        "--no-flip", action="store_true", help="always lay the opening tile high half left"
    )
    p.add_argument(
        "--cheater", action="append", default=[], metavar="ID=STYLE",
        help="plant a cheater: player ID (p-00001 ...) plays STYLE, omniscient (sees every hand) "
        "or peeker (sees its partner's hand); repeat for more",
    )
    p.add_argument(
        "--search-samples", type=int, default=16,
        help="deals a searching bot (sampler, peeker) scores per decision (default 16)",
    )
    p.set_defaults(func=run_simulate)


def config_from_args(args: argparse.Namespace) -> SimConfig:
    overrides = orjson.loads(args.rules) if args.rules else {}
    if not isinstance(overrides, dict):
        raise ValueError("--rules must be a JSON object")
    return SimConfig(
        profiles=tuple(p.strip() for p in args.profile.split(",") if p.strip()),
        overrides=overrides,
        matches=args.matches,
        hands=args.hands,
        seed=args.seed,
        players_pool=args.players_pool,
        bots=tuple(b.strip() for b in args.bots.split(",") if b.strip()),
        tables=args.tables,
        rematch_rate=args.rematch_rate,
        seat_change_rate=args.seat_change_rate,
        abandon_rate=args.abandon_rate,
        flip_openings=not args.no_flip,
        cheaters=tuple(_cheater(c) for c in args.cheater),
        search_samples=args.search_samples,
    )


def _cheater(text: str) -> tuple[str, str]:
    """``ID=STYLE`` of --cheater.

    >>> _cheater("p-00003=omniscient")
    ('p-00003', 'omniscient')
    """
    pid, sep, style = text.partition("=")
    if not sep or not pid.strip() or not style.strip():
        raise ValueError(f"--cheater {text!r}: give ID=STYLE, e.g. p-00003=omniscient")
    return pid.strip(), style.strip()


def run_simulate(args: argparse.Namespace) -> int:
    """`replay simulate`: 0 on success, 2 for bad arguments."""
    stats: SimStats | None = None
    try:
        if args.defect:
            lines: Iterable[bytes] = defect_log(args.defect, args.seed)
        else:
            stats = SimStats()
            lines = simulate(config_from_args(args), stats)
    except (ValueError, RulesError) as exc:  # JSONDecodeError is a ValueError
        hint = ""
        if isinstance(exc, RulesError) and exc.option is None and exc.value not in PROFILES:
            hint = f"; known profiles: {', '.join(sorted(PROFILES))}"
        print(f"replay simulate: {exc}{hint}", file=sys.stderr)
        return 2
    if args.out == "-":
        n = write_lines(lines, sys.stdout.buffer, gz=args.gz)
        sys.stdout.buffer.flush()
    else:
        n = write_lines(lines, args.out, gz=args.gz)
    what = f"{stats.matches} matches, {stats.hands} hands" if stats else f"defect {args.defect}"
    print(f"replay simulate: {what}, {n} lines -> {args.out}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run as ``python -m replay.simulate ...`` (same options as ``replay simulate``)."""
    parser = argparse.ArgumentParser(prog="replay")
    sub = parser.add_subparsers(dest="command", required=True)
    add_simulate_parser(sub)
    args = parser.parse_args(["simulate", *(argv if argv is not None else sys.argv[1:])])
    return run_simulate(args)


if __name__ == "__main__":
    raise SystemExit(main())
