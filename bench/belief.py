"""What a player could read: the play model, the belief's calibration, its cost.

    python bench/belief.py                  # about a minute
    python bench/belief.py --train-hands 1000 --test-hands 30 --deals 150
    python bench/belief.py --pools boneyard --test-hands 8 --deals 60
    python bench/belief.py --pools readers --shortfall --test-hands 60   # 10 to 20 minutes
    python bench/belief.py --pools readers --shortfall --reference-draws 8000 --test-hands 40   # before the late hand

Pools of bots play hands in memory (replay.belief.selfplay), per family of
profiles:

- ``signalling`` (partnership, ``international``): an honest signalling
  pair (two ``signal`` bots, replay.bots.signal_choice) against a pair of
  ``partner`` bots;
- ``random`` (partnership): four ``random`` bots, whose choices carry
  nothing but which moves were legal;
- ``boneyard`` (``pr_2p``, two seats drawing): ``signal`` against ``heavy``;
- ``pairs`` (partnership): two honest signalling pairs, every seat playing
  the convention (``--pools pairs``);
- ``readers`` (partnership): two honest signalling pairs as the simulator
  seats them, a ``signal`` bot opposite a ``reader`` (``--pools readers``).

``--shortfall`` measures how near the deals a read grade is scored on come
to the weighted belief: at each decision of the held-out hands, the mean
probability the deals give each hidden tile's true place, by where the
tile is (the partner's hand, the opponents'), for the read grade's deals
(replay.analysis.grades.read_moved, as the analysis draws them) and for a
long chain (up to 800 deals drawn, 40 picked, 60 sweeps), paired decision
by decision (``--reference-draws N``: against N uniform draws weighed by
the model instead, where the read's deals are moved rather than drawn
exactly). A probability is linear in the deals, as a grade's mean value
is: a read grade whose deals stop short of the belief gives an honest
reader a part of its reads back as hindsight (docs/belief.md, "How far the
deals are moved").

Each seat of a pool is one player (``seat0`` to ``seat3``) who keeps its
style from hand to hand. For each pool a play model is fitted on its
training hands, the family's coefficients and each player's own around
them (replay.belief.model.fit_players; ``--pooled``: the family's alone),
and scored on held-out hands (mean log-likelihood a choice against every legal move
alike and the fixed rule of thumb). Then, at every decision of the
held-out hands, the mover's uniform belief (play choices tell nothing)
and its weighted belief (the model weighs the other seats' plays) are
drawn from the same generator, and the per-tile log-loss of each (nats,
lower is better: replay.belief.calibration) and their reliability tables
are printed.

Last, the cost of grading a whole hand on the weighted belief: at every
non-forced decision of held-out signalling hands, the weighted belief at
20 deals a decision plus the solver on each deal through the analysis'
solvers (replay.analysis.Analyzer.solvers), against the same with the
uniform belief; per hand p50.

Figures last, one per line, as ``name: value unit``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay.analysis import Analyzer, HandInput, grades  # noqa: E402
from replay.analysis.grades import (  # noqa: E402
    EXACT_LIMIT,
    READ_ENUM_LIMIT,
    READ_FLOOR,
    READ_MAX_FACTOR,
    READ_SWEEPS,
    read_moved,
)
from replay.belief import PlayModel, Policy, Recorder, Reliability, tile_log_loss, weighted_belief  # noqa: E402
from replay.belief.model import HEURISTIC, UNIFORM, log_likelihood, seated  # noqa: E402
from replay.belief.selfplay import PlayedHand, play_hand  # noqa: E402
from replay.belief.train import train  # noqa: E402
from replay.belief.weights import Belief, exact_draws, move_deals, place_of  # noqa: E402
from replay.engine import DRAW, PASS, RIGHT, YIELD, Play, legal_moves  # noqa: E402
from replay.rules import resolve  # noqa: E402
from replay.solver import HandContext  # noqa: E402

POOLS = (
    ("signalling", "international", ("signal", "partner", "signal", "partner")),
    ("random", "international", ("random",) * 4),
    ("boneyard", "pr_2p", ("signal", "heavy")),
    ("pairs", "international", ("signal",) * 4),
    ("readers", "international", ("signal", "signal", "reader", "reader")),
)


def _fit(hands: Sequence[PlayedHand], held: Sequence[PlayedHand], family: str, players: Sequence[str] | None):
    """The pool's model (with each seat's player's own coefficients unless `players` is None) and its fit."""
    fitting, test = _choices(hands), _choices(held)
    table = None if players is None else [players] * len(fitting)
    got = train(family, fitting, test, fitting_players=table, held_players=None if players is None else
                [players] * len(test))  # fmt: skip
    return got.model, got


def _choices(hands: Sequence[PlayedHand]) -> list:
    return [(st, legal_moves(st), ply.move, ply.public) for h in hands
            for st, ply in zip(h.states, h.recorder.plies, strict=True)
            if st.result is None and len(legal_moves(st)) > 1]  # fmt: skip


def _decisions(h: PlayedHand):
    """(ply, state, recorder up to it) of every non-forced decision of a hand."""
    rec = Recorder(h.start)
    for k, (st, ply) in enumerate(zip(h.states, h.recorder.plies, strict=True)):
        if st.result is None and len(legal_moves(st)) > 1:
            yield k, st, rec
        rec.see(st, ply.move)


def read_belief(st, rec, policy: Policy, deals: int, rng: random.Random, memo: dict, sweeps: int, temper: float,
                max_factor: int, floor: float = READ_FLOOR) -> Belief:  # fmt: skip
    """The weighted belief as the read grade scores it (replay.analysis.grades): `deals`
    drawn (more, up to `max_factor` x, while the effective sample is under `floor` x `deals`);
    when more were drawn, `deals` of them picked by weight and moved by `sweeps`
    Metropolis sweeps (replay.belief.weights.move_deals)."""
    b = weighted_belief(st, rec, policy, deals=deals, rng=rng, memo=memo, temper=temper,
                        max_deals=max_factor * deals, floor=floor * deals)  # fmt: skip
    if b.exact or len(b.worlds) <= deals or not sweeps:
        return b
    if temper == 1.0:  # few enough agreeing deals: drawn from the exact weights, as read_moved does
        drawn = exact_draws(st, rec, policy, deals, rng, limit=READ_ENUM_LIMIT, memo=memo)
        if drawn is not None:
            k = len(drawn[0])
            return Belief(b.observer, b.unknown, tuple(drawn[0]), (1.0 / k,) * k, False, b.drawn, drawn[1], (1.0,) * k)
    moved = move_deals(st, rec, policy, b.resample(deals, rng), sweeps=sweeps, rng=rng, memo=memo, temper=temper)
    if moved is None:
        return b
    k = len(moved)
    return Belief(b.observer, b.unknown, tuple(moved), (1.0 / k,) * k, False, b.drawn, b.ess, (1.0,) * k)


def calibrate(model: Policy, hands: Sequence[PlayedHand], deals: int, seed: int, sweeps: int, temper: float,
              max_factor: int, floor: float = READ_FLOOR):  # fmt: skip
    """Per-tile log-loss (summed) of the uniform and weighted beliefs, tiles, reliability tables, ESS."""
    lu = lr = 0.0
    n = 0
    rel_u, rel_r = Reliability(), Reliability()
    ess = []
    for i, h in enumerate(hands):
        memos: dict[int, dict] = {}
        for k, st, rec in _decisions(h):
            truth = place_of(st.hands, st.stock)
            bu = weighted_belief(st, rec, None, deals=deals, rng=random.Random(seed * 7919 + i * 131 + k))
            br = read_belief(st, rec, model, deals, random.Random(seed * 7919 + i * 131 + k),
                             memos.setdefault(st.turn, {}), sweeps, temper, max_factor, floor)  # fmt: skip
            mu, mr = bu.marginals(), br.marginals()
            a, c = tile_log_loss(mu, truth, unknown=bu.unknown, observer=st.turn)
            b, _ = tile_log_loss(mr, truth, unknown=br.unknown, observer=st.turn)
            rel_u.add(mu, truth, unknown=bu.unknown, observer=st.turn)
            rel_r.add(mr, truth, unknown=br.unknown, observer=st.turn)
            lu += a
            lr += b
            n += c
            ess.append(br.ess)
    return lu, lr, n, rel_u, rel_r, ess


def shortfall(policy: Policy, hands: Sequence[PlayedHand], samples: int, seed: int, floor: float = READ_FLOOR,
              max_factor: int = READ_MAX_FACTOR, reference: int = 0) -> dict[str, list[float]]:
    """By where a hidden tile is (``partner``, ``opp``): at each decision,
    the mean probability the read grade's deals (`samples` a decision, as
    the analysis draws them) give the hidden tiles' true places, minus that
    of a long chain's deals; with `reference`, minus that of so many
    uniform draws weighed by the model (no chain to trust), at the
    decisions with more than READ_ENUM_LIMIT agreeing deals only (where
    the read's deals are moved, not drawn from exact weights)."""
    out: dict[str, list[float]] = {"partner": [], "opp": []}
    for i, h in enumerate(hands):
        memos: dict[tuple[str, int], dict] = {}
        for k, st, rec in _decisions(h):
            if reference and rec.hidden(st, st.turn, ()).count() <= READ_ENUM_LIMIT:
                continue
            seat, truth = st.turn, place_of(st.hands, st.stock)
            got = {}
            for name in ("grade", "long"):
                rng = random.Random(seed * 7919 + i * 131 + k * 2 + (name == "long"))
                memo = memos.setdefault((name, seat), {})
                if name == "grade":
                    b = weighted_belief(st, rec, policy, deals=samples, rng=rng, memo=memo, floor=floor * samples,
                                        max_deals=max_factor * samples, exact_limit=max(samples, EXACT_LIMIT))
                    moved = None if b.exact or len(b.worlds) <= samples else \
                        read_moved(st, rec, policy, b, samples, rng, memo=memo).worlds
                elif reference:
                    b = weighted_belief(st, rec, policy, deals=reference, rng=rng, memo=memo, floor=0,
                                        max_deals=reference, exact_limit=0)
                    moved = None
                else:
                    b = weighted_belief(st, rec, policy, deals=100, rng=rng, memo=memo, max_deals=800,
                                        exact_limit=EXACT_LIMIT)
                    moved = None if b.exact else move_deals(st, rec, policy, b.resample(40, rng), sweeps=60, rng=rng,
                                                            memo=memo)
                if moved is not None:
                    b = Belief(b.observer, b.unknown, tuple(moved), (1.0 / len(moved),) * len(moved), False, b.drawn,
                               b.ess, (1.0,) * len(moved))
                got[name] = b.marginals()
            where = {"partner": [(seat + 2) % 4], "opp": [(seat + 1) % 4, (seat + 3) % 4]}
            for key, seats in where.items():
                tiles = [t for t in range(28) if b.unknown >> t & 1 and truth[t] in seats]
                if tiles:
                    diff = [got["grade"][t, truth[t]] - got["long"][t, truth[t]] for t in tiles]
                    out[key].append(sum(diff) / len(diff))
    return out


def as_input(h: PlayedHand, no: int) -> HandInput:
    """A self-played hand as the analysis reads a stored one."""
    st = h.start
    moves = []
    for ply in h.recorder.plies:
        mv = ply.move
        if isinstance(mv, Play):
            moves.append((ply.seat, "play", mv.tile, "right" if mv.end == RIGHT else "left"))
        else:
            moves.append((ply.seat, {PASS: "pass", DRAW: "draw", YIELD: "yield"}[mv], -1, None))
    dealt = tuple(tuple(t for t in range(28) if hand >> t & 1) for hand in st.hands)
    return HandInput("bench", no, st.rules, dealt, tuple(st.stock), st.turn, -1, "", HandContext(), tuple(moves))


def grade_hand_ms(analyzer: Analyzer, inp: HandInput) -> float:
    """Wall ms of the analysis of one whole hand (every grade it makes)."""
    t0 = time.perf_counter()
    got = analyzer.hand(inp)
    assert got.skip is None, got.skip
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train-hands", type=int, default=400)
    ap.add_argument("--test-hands", type=int, default=10, help="held-out hands a pool for calibration")
    ap.add_argument("--deals", type=int, default=100, help="deals drawn a decision for calibration")
    ap.add_argument("--sweeps", type=int, default=READ_SWEEPS,
                    help=f"Metropolis sweeps of the deals picked by weight (default {READ_SWEEPS}, the read grade's)")
    ap.add_argument("--max-factor", type=int, default=READ_MAX_FACTOR,
                    help=f"deals drawn at most, times --deals (default {READ_MAX_FACTOR}, the read grade's)")
    ap.add_argument("--read-floor", type=float, default=READ_FLOOR,
                    help=f"draw until the weights are worth this many times the deals (default {READ_FLOOR:g})")
    ap.add_argument("--temper", type=float, default=1.0, help="the likelihood's power in the weights")
    ap.add_argument("--pools", default="signalling,random",
                    help="pools to measure (boneyard too: slow, the boneyard's history has many ways to lie)")
    ap.add_argument("--grade-hands", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pooled", action="store_true", help="the family's coefficients alone, no player's own")
    ap.add_argument("--shortfall", action="store_true",
                    help="also: how near the read grade's deals come to the belief, against a long chain (slow)")
    ap.add_argument("--shortfall-samples", type=int, default=10, help="the read grade's deals a decision (--shortfall)")
    ap.add_argument("--reference-draws", type=int, default=0, metavar="N",
                    help="--shortfall against N uniform draws weighed, not a long chain, where the read is moved")
    args = ap.parse_args()
    grades.READ_SWEEPS = args.sweeps  # type: ignore[misc]  # read_moved's, for --shortfall
    results: dict[str, tuple[float, float]] = {}
    models: dict[str, PlayModel] = {}
    tests: dict[str, list[PlayedHand]] = {}
    shortfalls: dict[str, float] = {}
    for name, profile, styles in POOLS:
        if name not in args.pools.split(","):
            continue
        rules = resolve(profile)
        rng = random.Random(args.seed)
        scale = 1 if name in ("signalling", "readers") else 2  # the other pools with fewer hands: under a minute
        train = [play_hand(rules, styles, rng) for _ in range(args.train_hands)]
        test = [play_hand(rules, styles, rng) for _ in range(max(2, args.test_hands // scale))]
        players = None if args.pooled else [f"seat{k}" for k in range(len(styles))]
        model, fitted = _fit(train, test, name, players)
        held = _choices(test)
        ll = {k: log_likelihood(p, held) / len(held) for k, p in (("uniform", UNIFORM), ("heuristic", HEURISTIC))}
        print(f"{name} ({profile}, {'/'.join(styles)}): {len(train)} hands fitted, {len(test)} held out, "
              f"{len(held)} held-out choices; log-likelihood a choice: model {fitted.loglik_model:.3f} "
              f"(family's alone {fitted.loglik_family:.3f}; {len(model.players)} players of their own), "
              f"uniform {ll['uniform']:.3f}, rule of thumb {ll['heuristic']:.3f} nats")  # fmt: skip
        t0 = time.perf_counter()
        policy = model if players is None else seated(model, players)
        lu, lr, n, rel_u, rel_r, ess = calibrate(policy, test, args.deals, args.seed, args.sweeps, args.temper,
                                                      args.max_factor, args.read_floor)
        print(f"  per-tile log-loss over {n} hidden tiles: uniform {lu / n:.4f}, read {lr / n:.4f} nats "
              f"(read/uniform {lr / lu:.3f}); ESS median {statistics.median(ess):.1f} "
              f"({time.perf_counter() - t0:.1f} s)")  # fmt: skip
        print("  reliability (bin: predictions, uniform predicted/observed | read predicted/observed)")
        ru = {r[0]: r for r in rel_u.rows()}
        for row in rel_r.rows():
            u = ru.get(row[0])
            us = f"{u[1]:6d} {u[2]:.3f}/{u[3]:.3f}" if u else "     -"
            print(f"    {row[0]}: {us} | {row[1]:6d} {row[2]:.3f}/{row[3]:.3f}")
        results[name] = (lu / n, lr / n)
        if args.shortfall:
            t0 = time.perf_counter()
            short = shortfall(policy, test, args.shortfall_samples, args.seed, args.read_floor, args.max_factor,
                             args.reference_draws)
            for key, v in short.items():
                mean, se = statistics.mean(v), statistics.stdev(v) / len(v) ** 0.5
                print(f"  the read grade's deals against {'weighed draws' if args.reference_draws else 'a long chain'}, P(true place) of the {key}'s tiles: "
                      f"{mean:+.4f} (se {se:.4f}, {len(v)} decisions, {time.perf_counter() - t0:.0f} s)")
                shortfalls[key] = mean
        models[name] = model
        tests[name] = test
    read_ms, uni_ms = [], []
    if "signalling" in tests and args.grade_hands > 0:
        uniform = Analyzer(samples=20)
        read = Analyzer(samples=20, policies={"partnership": ("partnership:bench", models["signalling"])})
        sig = [as_input(h, i) for i, h in enumerate(tests["signalling"][: args.grade_hands])]
        grade_hand_ms(uniform, sig[0])  # warm up
        for inp in sig:  # alternated, so that the machine's load weighs on both alike
            uni_ms.append(grade_hand_ms(uniform, inp))
            read_ms.append(grade_hand_ms(read, inp))
        print(f"grading a whole hand at 20 deals a decision, {len(sig)} hands: weighted p50 "
              f"{statistics.median(read_ms):.0f} ms, uniform p50 {statistics.median(uni_ms):.0f} ms "
              f"(the analysis of the hand, with and without the read grade)")  # fmt: skip
    if "signalling" in results:
        print(f"belief_logloss_uniform: {results['signalling'][0]:.4f} nats")
        print(f"belief_logloss_read: {results['signalling'][1]:.4f} nats")
    if "pairs" in results:
        print(f"belief_logloss_pairs_ratio: {results['pairs'][1] / results['pairs'][0]:.4f}")
    if "random" in results:
        print(f"belief_logloss_random_pool_ratio: {results['random'][1] / results['random'][0]:.4f}")
    for key, v in shortfalls.items():
        print(f"read_deals_shortfall_{key}: {v:+.4f} probability")
    if read_ms:
        print(f"read_grade_hand_p50: {statistics.median(read_ms):.0f} ms")
        print(f"uniform_grade_hand_p50: {statistics.median(uni_ms):.0f} ms")
        print(f"read_over_uniform_cost: {sum(read_ms) / sum(uni_ms):.2f} x")


if __name__ == "__main__":
    main()
