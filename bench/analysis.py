"""Hand analysis speed: the solver, the sampled grade, scheduling and ingest.

    python bench/analysis.py            # under a minute: 200 + 60 a profile hands (royal_rumble 30), 12 sampled hands, 400 ingested
    python bench/analysis.py --full     # 1,000 + 300 hands, 60 sampled hands, 100,000 hands ingested
    python bench/analysis.py --oracle   # only: what a perfect order of the moves would leave (about a minute)

1. Perfect information: every alternative of every ply of whole hands, one
   solver a profile on one core (its table kept across the plies of a hand,
   cleared between hands, as the analysis runs); per hand p50, p95, p99,
   max in CPU ms (a busy machine's other processes are not counted), and
   positions searched per hand and per decision, which a slower machine
   shows the same. `international` (4 seats), then a table of the other
   kinds: royal_rumble (4 individual seats), pr_2p and domena_2p (2 seats
   with a boneyard), pr_3p (3 seats with a boneyard).
2. Each search technique alone, on the same international hands (and the
   domena_2p hands for what only counting the opponents' pips uses): the
   defaults against the same search with one technique switched off (or,
   for those off by default, on): positions and CPU ms per hand.
3. The sampled grade of whole international hands at 20 deals a decision
   (plus the perfect-information grade), per hand; its positions with the
   table kept across the deals and decisions of the hand against cleared
   before every deal;
   the share of non-forced decisions graded on every agreeing deal
   (replay.analysis.EXACT_LIMIT).
4. Scheduling: the rank correlation between the predicted cost of a hand
   (replay.analysis.run.hand_cost) and its measured one.
5. `replay ingest` on 2 cores with the analysis (perfect information) and
   without, one after the other on one file; then one table's log of 30
   hands as `replay ingest` runs by default (its sampled grade added, the
   ingest being that small) against the perfect-information analysis only;
   the analysis worker's peak memory (RSS).

With `--oracle`, only this: the first solver calls of each hand (the lead,
or every call) made twice, the second time with the table's bounds
forgotten and its best moves kept (`Solver.forget`), so that every
position met tries first the move its own exact search proved best; the
positions and CPU time of that perfect order against the search as graded.

Simulated hands are generated first (cached in /tmp/replay-bench), not
timed. Figures last, one per line, as ``name: value unit``.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import pickle
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CACHE = Path("/tmp/replay-bench")
OTHERS = ("royal_rumble", "pr_2p", "domena_2p", "pr_3p")


def hands(profile: str, n: int, seed: int = 3) -> list[Any]:
    """`n` finished, valid hands of `profile` as the analysis reads them (cached)."""
    import dataclasses

    from replay.analysis import HandInput

    CACHE.mkdir(exist_ok=True)
    # the fields in the name: a pickle of an older HandInput does not load
    shape = "-".join(f.name for f in dataclasses.fields(HandInput))
    path = CACHE / f"analysis-hands-{profile}-{n}-{seed}-{hashlib.blake2b(shape.encode(), digest_size=4).hexdigest()}.pkl"
    if path.exists():
        got: list[Any] = pickle.loads(path.read_bytes())
        return got
    from replay.analysis import inputs_from_report
    from replay.simulate import SimConfig, SimStats, simulate
    from replay.validate import validate_paths

    lines = simulate(SimConfig(hands=int(n * 1.3) + 30, tables=8, seed=seed, profiles=(profile,)), SimStats())
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "hands.jsonl"
        log.write_bytes(b"\n".join(lines) + b"\n")
        report = validate_paths([log], keep_moves=True)
    out = [i for m in report.matches for i in inputs_from_report(m) if i.skip is None][:n]
    path.write_bytes(pickle.dumps(out))
    return out


def pct(xs: Sequence[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def grade_dd(inputs: list[Any], setup: Callable[[Any], None] | None = None) -> tuple[list[float], list[int], int]:
    """CPU ms and positions per hand of the perfect-information grade; decisions graded."""
    from replay.analysis import Analyzer

    an = Analyzer(samples=0)
    dd, _ = an.solvers(inputs[0].rules)
    if setup is not None:
        setup(an)
    an.hand(inputs[0])  # warm up (tables allocated)
    dd, _ = an.solvers(inputs[0].rules)
    times, nodes, decisions = [], [], 0
    for inp in inputs:
        n0 = dd.nodes
        t0 = time.process_time()
        a = an.hand(inp)
        times.append((time.process_time() - t0) * 1000)
        nodes.append(dd.nodes - n0)
        decisions += sum(1 for p in a.plies if not p.forced)
    return times, nodes, decisions


class _Cleared:
    """A solver whose table is cleared before every call (no reuse across plies or deals)."""

    def __init__(self, solver: Any) -> None:
        self._s = solver

    def __getattr__(self, name: str) -> Any:
        return getattr(self._s, name)

    def values(self, *args: Any) -> Any:
        self._s.clear()
        return self._s.values(*args)


def _switch(name: str, value: bool) -> Callable[[Any], None]:
    def setup(an: Any) -> None:
        for rules, pair in list(an._solvers.items()):
            for s in pair:
                setattr(s, name, value)
            an._solvers[rules] = pair

    return setup


def _table_bits(bits: int) -> Callable[[Any], None]:
    def setup(an: Any) -> None:
        from replay.solver import make_solver

        for rules in list(an._solvers):
            an._solvers[rules] = tuple(make_solver(rules, table_bits=bits) for _ in range(2))

    return setup


def _no_reuse(an: Any) -> None:
    for rules, (dd, pi) in list(an._solvers.items()):
        an._solvers[rules] = (_Cleared(dd), pi)


def grade_sampled(inputs: list[Any], samples: int, clear: bool = False, carry: bool = True,
                  carried: list[int] | None = None) -> tuple[list[float], list[int], int, int]:  # fmt: skip
    """CPU ms and sampled-grade positions per hand; non-forced decisions, of
    which graded exactly; `carried` gets the deals carried and tried."""
    from replay.analysis import Analyzer

    an = Analyzer(samples=samples, seed=1, carry=carry)
    an.hand(inputs[0])
    if clear:
        for rules, (dd, pi) in list(an._solvers.items()):
            an._solvers[rules] = (dd, _Cleared(pi))
    _, pi = an.solvers(inputs[0].rules)
    pi.clear()  # else the first hand, graded again, would find its warm-up's positions
    times, nodes, decisions, exact = [], [], 0, 0
    for inp in inputs:
        n0 = pi.nodes
        t0 = time.process_time()
        a = an.hand(inp)
        times.append((time.process_time() - t0) * 1000)
        nodes.append(pi.nodes - n0)
        for p in a.plies:
            if not p.forced and p.samples:
                decisions += 1
                exact += p.exact
    if carried is not None:
        carried[:] = an.carried
    return times, nodes, decisions, exact


def exact_share(inputs: list[Any], limit: int) -> tuple[int, int]:
    """Non-forced decisions of `inputs`, and how many have at most `limit`
    agreeing deals (graded on every one of them, replay.analysis.EXACT_LIMIT)."""
    from replay.analysis import engine_move
    from replay.engine import apply, legal_moves, new_hand
    from replay.knowledge import Tracker

    small = total = 0
    for inp in inputs:
        state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening,
                         stock=inp.stock)  # fmt: skip
        tracker = Tracker(state, fixed_by=inp.fixed_by)
        for _, kind, tile, end in inp.moves:
            move, laid = engine_move(state, kind, tile, end)
            if state.result is None and len(legal_moves(state)) > 1:
                total += 1
                small += tracker.hidden(state, state.turn).count() <= limit
            tracker.see(state, move)
            state = apply(state, laid)
    return small, total


def spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0.0] * len(v)
        for k, i in enumerate(order):
            r[i] = float(k)
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else 0.0


def _worker_rss(inputs: list[Any], samples: int, out: Any) -> None:
    from replay.analysis import Analyzer

    an = Analyzer(samples=samples, seed=1)
    for inp in inputs:
        an.hand(inp)
    out.put(_peak_rss_mib())


def _peak_rss_mib() -> float:
    """This process's peak RSS in MiB: VmHWM, which starts anew at exec (getrusage's
    ru_maxrss keeps the peak of the process it was forked from, here the bench's)."""
    status = Path("/proc/self/status")
    lines = status.read_text().splitlines() if status.exists() else []
    for line in lines:
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # no /proc: not Linux


def worker_rss(inputs: list[Any], samples: int) -> float:
    """Peak RSS (MiB) of a fresh process grading `inputs` as an analysis worker does."""
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_worker_rss, args=(inputs, samples, q))
    p.start()
    got = float(q.get())
    p.join()
    return got


def bench_ingest(n: int, workers: int) -> tuple[float, float, int]:
    """Wall seconds of `replay ingest` without and with the perfect-information analysis; hands stored."""
    from replay.ingest import ingest
    from replay.simulate import SimConfig, SimStats, simulate

    CACHE.mkdir(exist_ok=True)
    log = CACHE / f"analysis-intl-{n}.jsonl"
    if not log.exists():
        tmp = log.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            for line in simulate(SimConfig(hands=n, tables=64, seed=77, players_pool=400), SimStats()):
                f.write(line + b"\n")
        os.rename(tmp, log)
    out, stored = [], 0
    for analysis in (None, (0, 0)):
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            db = Path(tmp) / "data" / "replay.duckdb"
            db.parent.mkdir()
            t0 = time.perf_counter()
            s = ingest([str(log)], db=db, workers=workers, analysis=analysis)
            out.append(time.perf_counter() - t0)
            stored = s.hands
    return out[0], out[1], stored


def bench_small_ingest(hands: int = 30) -> tuple[float, float, int]:
    """Wall seconds of `replay ingest` of one table's log (`hands` hands)
    with the perfect-information analysis only, and as it runs by default,
    which adds the sampled grade of so small an ingest
    (replay.ingest.AUTO_BUDGET); hands graded."""
    import subprocess

    from replay.simulate import SimConfig, SimStats, simulate

    CACHE.mkdir(exist_ok=True)
    log = CACHE / f"analysis-small-{hands}.jsonl"
    if not log.exists():
        log.write_bytes(b"\n".join(simulate(SimConfig(hands=hands, seed=78), SimStats())) + b"\n")
    out, graded = [], 0
    for extra in (["--analysis-samples", "0"], []):
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            cmd = [sys.executable, "-m", "replay", "ingest", str(log), "--db", str(Path(tmp) / "r.duckdb"), *extra]
            t0 = time.perf_counter()
            run = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=Path(__file__).parents[1])
            out.append(time.perf_counter() - t0)
            for line in run.stderr.splitlines():
                if line.startswith("sampled grade") and "hands graded" in line:
                    graded = int(line.split(": ")[1].split()[0].replace(",", ""))
    return out[0], out[1], graded


class _Oracle:
    """A solver whose first `calls` calls of a hand are each made twice: as
    graded, then with the table's bounds forgotten and its best moves kept
    (`Solver.forget`), so that every position the second search meets tries
    first the move its own exact search proved best: what a perfect order of
    the moves would leave."""

    def __init__(self, solver: Any, calls: int) -> None:
        self._s, self.calls, self.left = solver, calls, calls
        self.graded = [0, 0.0]  # positions, CPU seconds
        self.oracle = [0, 0.0]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._s, name)

    def values(self, *args: Any) -> Any:
        s = self._s
        if self.left <= 0:
            return s.values(*args)
        self.left -= 1
        got = []
        for acc, prep in ((self.graded, None), (self.oracle, s.forget)):
            if prep is not None:
                prep()
            n0, t0 = s.nodes, time.process_time()
            got.append(s.values(*args))
            acc[0] += s.nodes - n0
            acc[1] += time.process_time() - t0
        if got[0] != got[1]:
            raise AssertionError(f"the oracle's values differ: {got}")
        return got[0]


def oracle_ratios(inputs: list[Any], samples: int, calls: int, bits: int | None) -> tuple[float, float]:
    """Positions and CPU time of the perfect order against the search as graded,
    over the first `calls` solver calls of each hand (the perfect-information
    grade's with `samples` 0, else the sampled grade's), table of 2^`bits`."""
    from replay.analysis import Analyzer
    from replay.solver import make_solver

    an = Analyzer(samples=samples)
    rules = inputs[0].rules
    dd, pi = make_solver(rules, table_bits=bits), make_solver(rules, table_bits=bits)
    wrapped = _Oracle(pi if samples else dd, calls)
    an._solvers[rules] = (dd, wrapped) if samples else (wrapped, pi)
    for inp in inputs:
        wrapped.left = calls
        an.hand(inp)
    return wrapped.oracle[0] / wrapped.graded[0], wrapped.oracle[1] / wrapped.graded[1]


def bench_oracle(intl: list[Any], rumble: list[Any], samples: int) -> list[str]:
    """What a perfect order of the moves would leave (docs/analysis.md)."""
    rows = (
        ("dd_lead", "the lead, perfect information (60 hands, table 2^20)", intl[:60], 0, 1, 20),
        ("dd_hand", "every call of the perfect-information grade (60 hands, table 2^14)", intl[:60], 0, 10**6, None),
        ("sampled_lead", f"the lead's {samples} sampled deals (12 hands, table 2^20)", intl[:12], samples, samples, 20),
        ("dd_lead_royal_rumble", "royal_rumble's first decision (6 hands, table 2^20)", rumble[:6], 0, 1, 20),
    )
    figures = []
    say("a perfect order of the moves against the search as graded       positions   CPU time")
    for name, label, inp, smp, calls, bits in rows:
        pos, cpu = oracle_ratios(inp, smp, calls, bits)
        say(f"  {label:62s} x{pos:.2f}      x{cpu:.2f}")
        figures.append(f"oracle_positions_{name}: {pos:.2f} x")
    return figures


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="1,000 + 300 hands, 60 sampled hands, 100,000 ingested")
    ap.add_argument("--samples", type=int, default=20, help="deals a decision of the sampled grade (default 20)")
    ap.add_argument("--ingest", type=int, default=None, help="hands ingested (0: skip)")
    ap.add_argument("--oracle", action="store_true",
                    help="only what a perfect order of the moves would leave (every solver call made twice)")
    args = ap.parse_args()
    n_main, n_other = (1000, 300) if args.full else (200, 60)
    n_sampled = 60 if args.full else 12
    n_ingest = args.ingest if args.ingest is not None else (100_000 if args.full else 400)

    t0 = time.perf_counter()
    intl = hands("international", n_main)
    # royal_rumble's hands cost 30 times a pair game's: half as many keep the default run under a minute
    others = {p: hands(p, n_other)[: n_other // 2 if p == "royal_rumble" and not args.full else None] for p in OTHERS}
    say(f"hands simulated (or read from {CACHE}) in {time.perf_counter() - t0:.1f} s")
    if args.oracle:
        for line in bench_oracle(intl, others["royal_rumble"], args.samples):
            print(line)
        return

    figures: list[str] = []
    times, nodes, dec = grade_dd(intl)
    say(f"perfect information, {len(times)} international hands: p50 {pct(times, .5):.2f} ms, p95 "
        f"{pct(times, .95):.2f}, p99 {pct(times, .99):.2f}, max {max(times):.2f}; positions p50 "
        f"{pct(nodes, .5):,.0f} a hand, {sum(nodes) / max(dec, 1):,.0f} a decision")  # fmt: skip
    figures += [
        f"dd_hand_p50: {pct(times, .5):.2f} ms",
        f"dd_hand_p95: {pct(times, .95):.2f} ms",
        f"dd_hand_p99: {pct(times, .99):.2f} ms",
        f"dd_hand_max: {max(times):.2f} ms",
        f"dd_hand_nodes_p50: {pct(nodes, .5):.0f} positions",
        f"dd_decision_nodes_mean: {sum(nodes) / max(dec, 1):.0f} positions",
    ]
    say("profile          p50 ms   p95 ms   p99 ms   max ms   positions p50")
    other_times: dict[str, list[float]] = {}  # for the schedule's rank correlation below
    for prof, inp in others.items():
        t, n, _ = grade_dd(inp)
        other_times[prof] = t
        say(f"{prof:15s} {pct(t, .5):7.2f}  {pct(t, .95):7.2f}  {pct(t, .99):7.2f}  {max(t):7.2f}  {pct(n, .5):12,.0f}")
        figures += [f"dd_hand_p50_{prof}: {pct(t, .5):.2f} ms", f"dd_hand_nodes_p50_{prof}: {pct(n, .5):.0f} positions"]

    say("technique (alone)                                   positions/hand   CPU ms/hand   against the defaults")
    sub = intl[: max(40, n_main // 5)]
    refs: dict[str, tuple[float, float]] = {}
    for label, setup, prof in (
        ("no null-window (MTD) searches", _switch("mtd", False), "international"),
        ("enhanced transposition cutoffs on", _switch("etc", True), "international"),
        ("no table kept across the plies", _no_reuse, "international"),
        ("a table of 2^17 entries (4 MiB), not 2^14", _table_bits(17), "international"),
        ("a table of 2^20 entries (32 MiB), not 2^14", _table_bits(20), "international"),
        ("no cutoffs on value bounds", _switch("bounds", False), "domena_2p"),
        ("a table of 2^14 entries (512 KiB), not 2^17", _table_bits(14), "domena_2p"),
        ("a table of 2^20 entries (32 MiB), not 2^17", _table_bits(20), "domena_2p"),
    ):
        inp = sub if prof == "international" else others[prof]
        if prof not in refs:
            ref_t, ref_n, _ = grade_dd(inp)
            refs[prof] = statistics.fmean(ref_t), statistics.fmean(ref_n)
            say(f"{'defaults, ' + prof:50s} {refs[prof][1]:14,.0f} {refs[prof][0]:13.2f}")
        rt, rn = refs[prof]
        t, n, _ = grade_dd(inp, setup)
        mt, mn = statistics.fmean(t), statistics.fmean(n)
        say(f"{label + ', ' + prof:50s} {mn:14,.0f} {mt:13.2f}   positions x{mn / rn:.2f}, time x{mt / rt:.2f}")

    sampled = intl[:n_sampled]
    carried = [0, 0]
    st, sn, sdec, sexact = grade_sampled(sampled, args.samples, carried=carried)
    _, un, _, _ = grade_sampled(sampled, args.samples, carry=False)
    say(f"deals carried to the seat's next decision: {carried[0]:,} of {carried[1]:,} "
        f"({carried[0] / max(carried[1], 1):.1%}); positions with them x{statistics.fmean(sn) / statistics.fmean(un):.3f} "
        f"against fresh deals only")  # fmt: skip
    _, cn, _, _ = grade_sampled(sampled[: max(4, n_sampled // 3)], args.samples, clear=True)
    kept_n = statistics.fmean(sn[: len(cn)])
    say(f"sampled grade, {len(st)} international hands x {args.samples} deals a decision: p50 {pct(st, .5):.0f} "
        f"ms, p90 {pct(st, .9):.0f}; positions p50 {pct(sn, .5):,.0f} a hand; with the table kept across deals "
        f"x{kept_n / statistics.fmean(cn):.3f} the positions of one cleared before every deal; "
        f"{sexact}/{sdec} decisions exact")  # fmt: skip
    figures += [
        f"sampled_hand_p50: {pct(st, .5):.0f} ms",
        f"sampled_hand_nodes_p50: {pct(sn, .5):.0f} positions",
        f"sampled_exact_share: {sexact / max(sdec, 1):.3f} decisions",
        f"sampled_carried_share: {carried[0] / max(carried[1], 1):.3f} deals",
    ]

    from replay.analysis import EXACT_LIMIT

    say(f"non-forced decisions graded on every agreeing deal (at most {EXACT_LIMIT:,}), per profile:")
    for prof, inp in (("international", intl), *others.items()):
        small, total = exact_share(inp, max(args.samples, EXACT_LIMIT))
        say(f"  {prof:15s} {small:5d} of {total:5d}  {small / max(total, 1):6.1%}")
        figures.append(f"exact_share_{prof}: {small / max(total, 1):.3f} decisions")

    from replay.analysis.run import hand_cost

    rho = spearman([hand_cost(i, 0) for i in intl + [h for v in others.values() for h in v]],
                   [*times, *[x for p in others for x in other_times[p]]])  # fmt: skip
    say(f"predicted against measured cost of a hand (all profiles): Spearman rho {rho:.2f}")
    figures.append(f"schedule_cost_rank_correlation: {rho:.2f} rho")

    few = intl[: 80 if args.full else 20]  # the peak comes with the first hands: 139 MiB after 20 as after 40
    rss = worker_rss(few, args.samples)
    say(f"an analysis worker's peak memory ({len(few)} hands, {args.samples} deals a decision): {rss:.0f} MiB")
    figures.append(f"worker_rss_max: {rss:.0f} MiB")

    if n_ingest:
        plain, analysed, stored = bench_ingest(n_ingest, workers=2)
        say(f"ingest of {stored:,} hands on 2 cores: {plain:.1f} s without the analysis, {analysed:.1f} s with "
            f"the perfect-information analysis (x{analysed / plain:.1f})")  # fmt: skip
        figures += [
            f"ingest_plain_wall: {plain:.1f} s",
            f"ingest_analysis_wall: {analysed:.1f} s",
            f"ingest_analysis_ratio: {analysed / plain:.1f} x",
        ]
        dd_only, sampled, graded = bench_small_ingest()
        say(f"replay ingest of one table's log ({graded} hands graded): {dd_only:.1f} s with the perfect-information "
            f"analysis only, {sampled:.1f} s as by default, with its sampled grade")  # fmt: skip
        figures += [f"ingest_one_table_wall: {dd_only:.1f} s", f"ingest_one_table_sampled_wall: {sampled:.1f} s"]
    for line in figures:
        print(line)


if __name__ == "__main__":
    main()
