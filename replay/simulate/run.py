"""A run of the simulator: tables of matches, their events mixed in time order.

Everything random comes from one `random.Random(seed)`, server seeds
included, so a run is a pure function of its `SimConfig`. Several tables
may play at once, their events mixed in time order; some matches are
rematches (`rematch_of`, no lead draw: the first lead rotates from the
earlier match's first leader).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterator, Sequence

import orjson

from replay.bots import BOTS, STYLES
from replay.searchbots import CHEATS, SEARCH_STYLES
from replay.simulate.config import EPOCH_MS, Player, SimConfig, SimStats, make_pool, pair_up
from replay.simulate.match import SimMatch


def _seat_players(rng: random.Random, pool: Sequence[Player], n: int) -> list[Player]:
    return pair_up(rng.sample(list(pool), n))


def _table(
    cfg: SimConfig,
    t: int,
    rng: random.Random,
    pool: Sequence[Player],
    quota: int | None,
    next_id: Callable[[], str | None],
    start_ms: int,
) -> Iterator[SimMatch]:
    """The matches of one table, one after the other (rematches follow their match)."""
    profile = cfg.profiles[t % len(cfg.profiles)]
    rules = cfg.rules_for(profile)
    table = f"t-{t + 1}"
    ms = start_ms
    prev: SimMatch | None = None
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
        sim = SimMatch(
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
    base = EPOCH_MS + (cfg.seed % 997) * 86_400_000 // 7
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
