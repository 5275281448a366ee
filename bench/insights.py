"""The player insights: how soon the cheat signals catch planted cheaters, how
often they accuse honest players, and how long the insights refresh takes.

**Detection.** Each run simulates a partnership table (international) of
four players who play every hand: one planted cheater (replay.searchbots:
``omniscient`` sees every hand, ``peeker`` sees its partner's) and three
honest bots of mixed styles (random, heavy, partner, and the honest
``sampler``, which plays the best move over the deals it could face: the
strongest honest player, and the cheaters' honest twin). Honest-only runs
have four honest bots. Every run is ingested with the analysis (10 sampled
deals a decision, as ``replay ingest``), every player is audited for partner
peeking (reports.cheats.audit_player), and each player's two tests
(reports.cheats.signal, the product's) are taken after every
:data:`STEP` hands the player played, in time order, as an auditor
watching the desk would see them:

- *hands to flag*: the hands a cheater had played when first flagged (by
  its own index; median and worst over the runs; a cheater never flagged
  counts as missed);
- *false alarms*: honest players flagged at any look of the run, by either
  index, over all honest player-runs (with the 95% upper bound of the rate:
  zero alarms in n runs bound it by 1 - 0.05^(1/n)).

**Speed** (``--speed``): the store of bench/api.py (simulated hands,
ingested without analysis, analysis rows synthesized: bench/synth.py), and
the whole refresh from nothing on a copy: the ratings
(reports.ratings.refresh_ratings) and the insights
(reports.skill.refresh_insights), then a refresh with nothing new.

    python bench/insights.py                   # one run of 40 hands a cheater (< 1 min), speed at 5,000 hands
    python bench/insights.py --full            # 6 runs of 250 hands a cheater, 10 honest runs; 1M hands
    python bench/insights.py --speed --full    # the refresh at 1,000,000 hands
    python bench/insights.py --detection --full --keep runs/     # the runs' stores kept in runs/
    python bench/insights.py --summarize runs/ more-runs/          # the figures over every kept run
    python bench/insights.py --detection --runs 0 --signalling-runs 2 --hands 250   # honest signalling pairs
    python bench/insights.py --detection --runs 0 --signalling-runs 1 --first-run 3 --hands 1000 \
        --keep runs/ --audit-styles reader     # more reader hands: only the readers audited for peeking

**Signalling pairs** (``--signalling-runs``): runs of two honest signalling
pairs (replay.bots ``signal`` and replay.searchbots ``reader``, seated as
partners), against the same two indices. For every player-run and every
honest style the *drift* is printed: the mean hindsight a hand of each
index and its spread (a style's pooled over its player-runs at honest
tables), its final t, and the chance of a flag by 5,000 hands projected
from them, with the largest drift the target allows and whether the
runs of a style differ by more than their noise; beside them
the omniscience index against the uniform belief on the same decisions
(deals weighted alike: the index as it was before the read grade).

Headline figures last, one per line: ``name: value unit``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# the bench helpers last: bench/api.py must not stand for the api package (here, or in a process
# a test that loaded this module starts later)
sys.path.append(str(ROOT / "bench"))

#: Looks: the tests are taken after every STEP hands a player played.
STEP = 10
HONEST = ("random", "heavy", "partner", "sampler")
#: The honest signalling pair: a signaller (replay.bots) and its reader (replay.searchbots).
SIGNAL_PAIR = ("signal", "reader")
#: Hands at which the chance of a flag is projected from each style's drift.
PROJECT_HANDS = 5_000
#: The allowance the looks' flags use (None: the desk's, reports.cheats.ALLOWANCE;
#: ``--allowance`` sets another, to compare).
FLAG_ALLOWANCE: float | None = None
#: The target: an honest style's chance of a flag by PROJECT_HANDS at most this.
TARGET_FLAG = 0.01


def _bench_api() -> Any:
    """bench/api.py as a module (its `build`: the cached simulated store)."""
    spec = importlib.util.spec_from_file_location("bench_api", ROOT / "bench" / "api.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# -- detection ---------------------------------------------------------------------------


def one_run(cheat: str | None, seed: int, hands: int, samples: int, where: Path, uniform: bool = False,
            reuse: bool = False, audit: Sequence[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Simulate, ingest with the analysis, audit everyone; each player's looks.

    By default the grades are read grades: the run's hands are stored with
    the perfect-information grade, a play model is fitted on them, and
    ``analyze_store`` samples every hand weighted by it (the audits weigh
    theirs by it too); `uniform`: the sampled grade at ingest, choices
    telling nothing (the indices as they were before the read grade);
    `reuse`: the run's log in `where`, when there, is taken as it is (not
    simulated again: the same games graded another way, or a part of them);
    `audit`: only the players of these styles are audited for partner
    peeking (the audits are most of a run's time; the others' peeking index
    is then not measured). The audited players are written beside the
    store (run-N.audited), which marks the run finished."""
    from replay.ingest import ingest
    from reports import derived

    derived.subscribe()  # the ratings, reports and insights follow the loads, as `replay ingest`
    from replay.simulate import SimConfig, simulate, write_lines
    from replay.store import open_store
    from reports.cheats import audit_player

    styles = _styles(seed)
    cfg = SimConfig(profiles=("international",), hands=hands, seed=seed, players_pool=4, bots=styles,
                    seat_change_rate=0.0, cheaters=((("p-00001", cheat),) if cheat else ()))  # fmt: skip
    log = where / f"run-{seed}.jsonl"
    t0 = time.perf_counter()
    if not (reuse and log.exists()):
        write_lines(simulate(cfg), log)
    t1 = time.perf_counter()
    db = where / f"run-{seed}.duckdb"
    for old in (db, Path(f"{db}.wal")):  # a store made anew
        old.unlink(missing_ok=True)
    shutil.rmtree(where / f"run-{seed}", ignore_errors=True)
    done_file = where / f"run-{seed}.audited"
    done_file.unlink(missing_ok=True)
    if uniform:
        ingest([log], db=db, workers=2, analysis=(samples, 0))
    else:
        from replay.analysis.refit import fit_store
        from replay.analysis.run import analyze_store

        ingest([log], db=db, workers=2, analysis=(0, 0))
        conn = open_store(db)
        try:
            fits = fit_store(conn)
        finally:
            conn.close()
        analyze_store(db, samples=samples, workers=2)
        print(f"  run {seed}: play model {[(f['family'], round(f['loglik_model'] or 0, 3), f['beats_uniform']) for f in fits]}")
    t2 = time.perf_counter()
    conn = open_store(db)
    try:
        players = [p for (p,) in conn.execute("SELECT DISTINCT player FROM skill_rows WHERE player LIKE 'p-%' "
                                              "ORDER BY 1").fetchall()]  # fmt: skip
        style = _player_styles(seed, cheat)
        audited = [p for p in players if audit is None or style.get(p) in audit]
        for p in audited:
            audit_player(conn, p, hands=100_000, samples=samples, workers=2)
        t3 = time.perf_counter()
        done_file.write_text(json.dumps(audited) + "\n")
        got = _result(conn, seed, cheat, audited)
    finally:
        conn.close()
    got["seconds"] = {"simulate": t1 - t0, "ingest": t2 - t1, "audit": t3 - t2}
    return got


def _styles(seed: int) -> tuple[str, ...]:
    """The honest styles of a run's players, turned by the seed: every style meets every seat;
    a signalling run (kind 8) seats two honest signalling pairs (the simulator pairs each
    reader with a signaller: replay.simulate.config.pair_up)."""
    if seed % 100 == 8:
        return SIGNAL_PAIR * 2
    return tuple(HONEST[(seed + k) % len(HONEST)] for k in range(4))


def _player_styles(seed: int, cheat: str | None) -> dict[str, str]:
    """Each player of a run and its style (the cheater's: its cheat)."""
    style = {f"p-{k + 1:05d}": st for k, st in enumerate(_styles(seed))}
    if cheat:
        style["p-00001"] = cheat
    return style


def _result(conn: Any, seed: int, cheat: str | None, audited: Sequence[str] | None = None) -> dict[str, Any]:
    """A run's players, their styles, looks and final t statistics, from its store;
    `audited`: the players audited for partner peeking (default all)."""
    style = _player_styles(seed, cheat)
    per_hand = _per_hand(conn)
    looks = {p: _looks(rows) for p, rows in per_hand.items() if p in style}
    final = {p: _final_t(rows) for p, rows in per_hand.items() if p in style}
    moments = {p: _moments(rows) for p, rows in per_hand.items() if p in style}
    return {"seed": seed, "cheat": cheat, "style": style, "looks": looks, "final_t": final, "moments": moments,
            "audited": sorted(style) if audited is None else sorted(audited)}


def _moments(rows: Sequence[Row]) -> tuple[tuple[int, float, float], ...]:
    """(hands, mean, sd) of a player's hindsight a hand (hands with a grade), for each
    index: omniscience, partner peeking, and omniscience against the uniform belief."""
    out = []
    for n_at, y_at in ((0, 1), (2, 3), (0, 4)):
        ys = [r[y_at] for r in rows if r[n_at]]
        out.append((len(ys), statistics.fmean(ys) if ys else 0.0, statistics.stdev(ys) if len(ys) > 1 else 0.0))
    return tuple(out)


def _allowance() -> float:
    """The flags' allowance a hand: FLAG_ALLOWANCE where set, else the desk's."""
    from reports.cheats import ALLOWANCE

    return ALLOWANCE if FLAG_ALLOWANCE is None else FLAG_ALLOWANCE


def _projected(mean: float, sd: float, hands: int, allowance: float | None = None) -> float:
    """The chance that an index of per-hand mean `mean` and spread `sd` is
    flagged (one-sided p < reports.cheats.ALPHA, the mean above `allowance`:
    default the flags' own) at `hands` hands, its t taken as normal around
    its expected value (one look: a lower bound for an auditor who looks
    every STEP hands, :func:`_projected_looks`)."""
    from scipy import stats

    from reports.cheats import ALPHA

    if sd <= 0:
        return 0.0
    over = mean - (_allowance() if allowance is None else allowance)
    return float(stats.norm.sf(stats.norm.isf(ALPHA) - over * hands**0.5 / sd))


def _projected_looks(mean: float, sd: float, hands: int, allowance: float | None = None,
                     paths: int = 20_000) -> float:  # fmt: skip
    """The chance that an index of per-hand mean `mean` and spread `sd` is
    flagged at any of the looks an auditor takes every STEP hands from
    reports.cheats.MIN_HANDS up to `hands`: hands' sums drawn as normal
    (`paths` runs, a fixed seed), each look's t taken on the known spread
    against Student's critical value for its hands.

    >>> round(_projected_looks(0.0, 20.0, 5_000, allowance=0.0), 3) < 0.005
    True
    >>> _projected_looks(1.0, 20.0, 5_000, allowance=0.0) > _projected(1.0, 20.0, 5_000, allowance=0.0)
    True
    """
    import numpy as np
    from scipy import stats

    from reports.cheats import ALPHA, MIN_HANDS

    if sd <= 0:
        return 0.0
    over = mean - (_allowance() if allowance is None else allowance)
    rng = np.random.default_rng(20261204)
    looks = [MIN_HANDS, *range(MIN_HANDS - MIN_HANDS % STEP + STEP, hands + 1, STEP)]
    total, seen, flagged = np.zeros(paths), 0, np.zeros(paths, dtype=bool)
    for n in looks:
        total += rng.normal(over * (n - seen), sd * (n - seen) ** 0.5, paths)
        seen = n
        flagged |= total / (sd * n**0.5) > stats.t.isf(ALPHA, n - 1)
    return float(flagged.mean())


def _pooled(ms: Sequence[tuple[int, float, float]]) -> dict[str, Any]:
    """Player-runs' (hands, mean, sd) of one index pooled: the mean a hand,
    its spread and standard error, the projections by PROJECT_HANDS (one
    look; a look every STEP hands; one look with no allowance), the largest
    mean a hand that meets the target with one look (TARGET_FLAG by then), and
    whether the runs' means differ by more than their standard errors say
    (chi-square p: a small one says a style's runs drift differently, and
    its pooled standard error is too small).

    >>> got = _pooled([(1000, 1.0, 20.0), (1000, 0.0, 20.0)])
    >>> got["hands"], got["mean"], round(got["se"], 3), round(got["allowed"], 3), round(got["runs_p"], 2)
    (2000, 0.5, 0.447, 1.394, 0.26)
    """
    from scipy import stats

    from reports.cheats import ALPHA

    ms = [m for m in ms if m[0] > 1]
    hands = sum(m[0] for m in ms)
    mean = sum(m[0] * m[1] for m in ms) / hands
    sd = (sum((m[0] - 1) * m[2] ** 2 for m in ms) / max(hands - len(ms), 1)) ** 0.5
    chi = sum(m[0] * (m[1] - mean) ** 2 for m in ms) / sd**2 if sd > 0 else 0.0
    return {"hands": hands, "runs": len(ms), "means": [m[1] for m in ms], "mean": mean, "sd": sd,
            "se": sd / hands**0.5, "p_flag": _projected(mean, sd, PROJECT_HANDS),
            "p_flag_looks": _projected_looks(mean, sd, PROJECT_HANDS),
            "p_flag_no_allowance": _projected(mean, sd, PROJECT_HANDS, allowance=0.0),
            "allowed": _allowance() + float((stats.norm.isf(ALPHA) - stats.norm.isf(TARGET_FLAG)) * sd
                                         / PROJECT_HANDS**0.5),
            "runs_p": float(stats.chi2.sf(chi, len(ms) - 1)) if len(ms) > 1 else None}  # fmt: skip


#: A run's kind by its seed's last two digits (detection's plan).
KINDS = {0: "omniscient", 1: "peeker", 7: None, 8: None}


def kept_runs(dirs: Sequence[Path], say: Any) -> list[dict[str, Any]]:
    """The results of the runs whose stores were kept (``--keep``) in `dirs`:
    a store whose audits all finished counts (its run-N.audited names them;
    without one, all four players audited); others are named and left out
    (a run stopped half way)."""
    import duckdb

    out = []
    for d in dirs:
        for db in sorted(d.glob("run-*.duckdb"), key=lambda x: int(x.stem.split("-")[1])):
            seed = int(db.stem.split("-")[1])
            try:
                conn = duckdb.connect(str(db), read_only=True)
            except duckdb.IOException:  # held by a run under way
                say(f"{db}: in use (a run under way?), left out")
                continue
            try:
                mark = db.with_suffix(".audited")
                audited = json.loads(mark.read_text()) if mark.exists() else None
                done = conn.execute("SELECT count(DISTINCT player) FROM audits WHERE state = 'done'").fetchone()
                if seed % 100 not in KINDS or not done or done[0] < (4 if audited is None else len(audited)):
                    say(f"{db}: not a finished run, left out")
                    continue
                out.append(_result(conn, seed, KINDS[seed % 100], audited))
            finally:
                conn.close()
    return out


#: A player's hand: graded decisions, their sum of hindsight (the read grade's where
#: there is one); the partner-peeking grade's decisions and sum; the sum of hindsight
#: of the same decisions against the uniform belief (:data:`Y_UNIFORM`).
Row = tuple[int, float, int, float, float]

#: A move_analysis row's hindsight against the uniform belief (the sampled grade,
#: deals weighted alike: ``pimc``), as replay.analysis.hindsight works out the
#: read grade's: the played move's edge on the real deal minus its edge there.
Y_UNIFORM = """(ma.dd - list_avg(list_transform(ma.alternatives, lambda a: a.dd::DOUBLE)))
    - (ma.pimc - list_avg(list_transform(ma.alternatives, lambda a: a.pimc)))"""

_PER_HAND = """
WITH r AS ({ranges}), hs AS (
    SELECT r.player, a.match, a.hand, m.started, m.mno, r.seat
    FROM hand_analysis a JOIN matches m USING (match)
    JOIN r ON r.match = a.match AND a.hand >= r.from_hand AND a.hand < r.to_hand
    WHERE a.skip IS NULL
), y AS (
    SELECT ma.match, ma.hand, ma.seat, count(ma.hindsight) AS n, coalesce(sum(ma.hindsight), 0) AS y,
           count(k.y_peek) AS kn, coalesce(sum(k.y_peek), 0) AS ky,
           coalesce(sum(CASE WHEN ma.hindsight IS NOT NULL THEN {y_uniform} END), 0) AS yu
    FROM move_analysis ma LEFT JOIN peek_analysis k USING (match, hand, ply)
    GROUP BY ma.match, ma.hand, ma.seat
)
SELECT hs.player, coalesce(y.n, 0), coalesce(y.y, 0), coalesce(y.kn, 0), coalesce(y.ky, 0), coalesce(y.yu, 0)
FROM hs LEFT JOIN y USING (match, hand, seat)
ORDER BY hs.player, hs.started, hs.mno, hs.hand
"""


def _per_hand(conn: Any) -> dict[str, list[Row]]:
    """Each player's analysed hands in time order: graded decisions and their
    sum of hindsight; the same of the partner-peeking grade; the sum of
    hindsight of the same decisions against the uniform belief."""
    from reports.skill import seat_ranges

    out: dict[str, list[Row]] = defaultdict(list)
    for p, n, y, kn, ky, yu in conn.execute(_PER_HAND.format(ranges=seat_ranges(), y_uniform=Y_UNIFORM)).fetchall():
        out[p].append((int(n), float(y), int(kn), float(ky), float(yu)))
    return out


def _final_t(rows: Sequence[Row]) -> tuple[float | None, float | None, float | None]:
    """The t statistics of mean 0 over all a player's hands (the null's
    calibration, so without the flags' allowance): omniscience, partner
    peeking, omniscience against the uniform belief."""
    from reports.cheats import signal

    n = [r for r in rows if r[0]]
    k = [r for r in rows if r[2]]
    omni = signal(sum(r[0] for r in n), sum(r[1] for r in n), len(n), sum(r[1] ** 2 for r in n), allowance=0.0)
    peek = signal(sum(r[2] for r in k), sum(r[3] for r in k), len(k), sum(r[3] ** 2 for r in k), allowance=0.0)
    uni = signal(sum(r[0] for r in n), sum(r[4] for r in n), len(n), sum(r[4] ** 2 for r in n), allowance=0.0)
    return omni.t, peek.t, uni.t


def _looks(rows: Sequence[Row]) -> list[tuple[int, bool, bool]]:
    """(hands played, omniscience flagged, peeking flagged) after every STEP hands and at the end."""
    from reports.cheats import signal

    allowance = _allowance()
    acc = [0, 0.0, 0, 0.0, 0, 0, 0.0, 0.0]  # decisions, y, hands, y^2 | peek: decisions, hands, y, y^2
    out = []
    for k, (n, y, kn, ky, *_) in enumerate(rows, 1):
        if n:
            acc[0] += n
            acc[1] += y
            acc[2] += 1
            acc[3] += y * y
        if kn:
            acc[4] += kn
            acc[5] += 1
            acc[6] += ky
            acc[7] += ky * ky
        if k % STEP == 0 or k == len(rows):
            omni = signal(acc[0], acc[1], acc[2], acc[3], allowance=allowance)
            peek = signal(acc[4], acc[6], acc[5], acc[7], allowance=allowance)
            out.append((k, omni.flagged, peek.flagged))
    return out


def player_run_line(r: dict[str, Any], p: str, style: str) -> str:
    """One player-run: when each index first flagged it, and for each index (omniscience
    and partner peeking on the read grade, omniscience on the uniform belief) the final
    t, the hindsight a hand (sd) and the chance of a flag by :data:`PROJECT_HANDS` hands
    projected from them."""
    lk = r["looks"].get(p, [])
    t = tuple(r["final_t"].get(p, ())) + (None,) * 3
    ms = tuple(r["moments"].get(p, ())) + ((0, 0.0, 0.0),) * 3
    parts = []
    for name, tt, (_, m, sd) in zip(("omniscience", "peeking", "omniscience uniform"), t[:3], ms[:3], strict=True):
        parts.append(f"{name} t {_fmt(tt)}, {m:+.2f} (sd {sd:.1f}) a hand, "
                     f"{100 * _projected(m, sd, PROJECT_HANDS):.1f} % by {PROJECT_HANDS:,}")  # fmt: skip
    return (f"  run {r['seed']} {p} {style}: {ms[0][0]} hands; first flagged: omniscience "
            f"{_first(lk, 1) or 'never'}, peeking {_first(lk, 2) or 'never'}; " + "; ".join(parts))  # fmt: skip


def _fmt(t: float | None) -> str:
    return "-" if t is None else f"{t:.2f}"


def _first(looks: Sequence[tuple[int, bool, bool]], which: int) -> int | None:
    return next((h for h, *f in looks if f[which - 1]), None)


def _upper95(alarms: int, n: int) -> float:
    """The one-sided 95% upper bound of a rate seen `alarms` times in `n` (Clopper-Pearson).

    >>> round(_upper95(0, 300), 4)
    0.0099
    """
    if n == 0:
        return 1.0
    if alarms == 0:
        return 1 - 0.05 ** (1 / n)
    from scipy import stats

    return float(stats.beta.ppf(0.95, alarms + 1, n - alarms))


def detection(runs: int, honest_runs: int, hands: int, samples: int, say: Any, first: int = 1,
              keep: Path | None = None, signalling_runs: int = 0, uniform: bool = False,
              reuse: bool = False, cheats: Sequence[str] = ("omniscient", "peeker"),
              audit: Sequence[str] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Run the plan; each run's result. `keep`: the runs' logs and stores are
    kept there (for --summarize), not in a temporary folder; `audit`: the
    styles audited for partner peeking (default all; a cheater always is)."""
    where = keep or Path(tempfile.mkdtemp(prefix="replay-bench-insights-"))
    where.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        # run k's seeds: 100k (omniscient), 100k + 1 (peeker), 100k + 7 (honest)
        plan = [(c, 100 * k + j) for j, c in enumerate(("omniscient", "peeker")) for k in range(first, first + runs)
                if c in cheats]  # fmt: skip
        plan += [(None, 100 * k + 7) for k in range(first, first + honest_runs)]
        # and 100k + 8: two honest signalling pairs
        plan += [(None, 100 * k + 8) for k in range(first, first + signalling_runs)]
        for cheat, seed in plan:
            r = one_run(cheat, seed, hands, samples, where, uniform, reuse,
                        None if audit is None else [*audit, *([cheat] if cheat else [])])
            s = r["seconds"]
            at = "-" if cheat is None else _first(r["looks"]["p-00001"], 1 if cheat == "omniscient" else 2)
            say(f"run {seed:>4} {cheat or 'honest':<10} simulate {s['simulate']:5.0f} s, ingest {s['ingest']:5.0f} s, "
                f"audit {s['audit']:5.0f} s; cheater flagged at {at} hands")  # fmt: skip
            results.append(r)
    finally:
        if keep is None:
            shutil.rmtree(where, ignore_errors=True)
    return results


def summary(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Hands to flag each cheater, false alarms on honest players, the honest t's."""
    out: dict[str, Any] = {}
    for cheat, which in (("omniscient", 1), ("peeker", 2)):
        got = [_first(r["looks"]["p-00001"], which) for r in results if r["cheat"] == cheat]
        caught = [g for g in got if g is not None]
        out[cheat] = {"runs": len(got), "caught": len(caught), "hands": got,
                      "median": statistics.median(caught) if caught else None, "worst": max(caught, default=None),
                      "other_index": [_first(r["looks"]["p-00001"], 3 - which) for r in results if r["cheat"] == cheat]}  # fmt: skip
    honest = [(r["style"][p], looks) for r in results for p, looks in r["looks"].items()
              if not (r["cheat"] and p == "p-00001")]  # fmt: skip
    alarms = {"omniscience": sum(1 for _, lk in honest if _first(lk, 1) is not None),
              "peeking": sum(1 for _, lk in honest if _first(lk, 2) is not None)}  # fmt: skip
    alarms["either"] = sum(1 for _, lk in honest if _first(lk, 1) is not None or _first(lk, 2) is not None)
    # a player left out of the audits (--audit-styles) has no peeking index
    alarms["peeking_measured"] = sum(1 for r in results for p in r["looks"]
                                     if p in r.get("audited", r["looks"]) and not (r["cheat"] and p == "p-00001"))
    by_style: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for style, lk in honest:
        by_style[style][0] += 1
        by_style[style][1] += int(_first(lk, 1) is not None or _first(lk, 2) is not None)
    ts = [t for r in results for p, got in r["final_t"].items() if not (r["cheat"] and p == "p-00001")
          for t in got[:2] if t is not None]
    out["honest_t"] = {"n": len(ts), "max": max(ts, default=None), "mean": statistics.fmean(ts) if ts else None,
                       "sd": statistics.pstdev(ts) if len(ts) > 1 else None,
                       "over_1.645": sum(t > 1.645 for t in ts), "over_2.326": sum(t > 2.326 for t in ts)}
    # a style's drift: honest tables only (beside a cheater, the play model
    # misreads the cheater's plays, and its table mates' reads drift with it)
    drift: dict[str, dict[str, list[tuple[int, float, float]]]] = defaultdict(
        lambda: {"omni": [], "peek": [], "omni_uniform": []})
    for r in results:
        if r["cheat"] is None:
            for p, ms in r.get("moments", {}).items():
                for name, m in zip(("omni", "peek", "omni_uniform"), ms, strict=False):
                    drift[r["style"][p]][name].append(m)
    out["drift"] = {style: {name: _pooled(ms) for name, ms in idx.items() if any(m[0] > 1 for m in ms)}
                    for style, idx in drift.items()}  # fmt: skip
    out["honest"] = {"player_runs": len(honest), "alarms": alarms, "by_style": dict(by_style),
                     "looks_each": statistics.median(len(lk) for _, lk in honest) if honest else 0}  # fmt: skip
    return out


# -- speed -------------------------------------------------------------------------------------


def speed(hands: int, say: Any) -> dict[str, float]:
    """The refresh from nothing on a copy of the store: the ratings alone, the
    insights alone, then both as a load runs them (reports.derived.keep_ratings:
    side by side), then once more with nothing new."""
    import duckdb

    from reports.derived import keep_ratings
    from reports.ratings import refresh_ratings
    from reports.skill import refresh_insights

    api = _bench_api()
    # bench/api.py's store, its analysis rows synthesized and its insights refreshed once
    db = api.build(hands, 200, Path("/tmp/replay-bench-api") / f"h{hands}-p200")
    work = Path(tempfile.mkdtemp(prefix="replay-bench-refresh-"))
    try:
        copy = work / "replay.duckdb"
        shutil.copy(db, copy)
        conn = duckdb.connect(str(copy))
        try:
            _clear(conn)
            rows = conn.execute("SELECT count(*) FROM move_analysis").fetchone()
            moves = int(rows[0]) if rows else 0
            c0, t0 = time.process_time(), time.perf_counter()
            refresh_ratings(conn)
            c1, t1 = time.process_time(), time.perf_counter()
            refresh_insights(conn)
            c2, t2 = time.process_time(), time.perf_counter()
            _clear(conn)
            c3, t3 = time.process_time(), time.perf_counter()
            keep_ratings(conn)
            c4, t4 = time.process_time(), time.perf_counter()
            keep_ratings(conn)
            t5 = time.perf_counter()
        finally:
            conn.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"hands": hands, "move_rows": moves, "ratings": t1 - t0, "ratings_cpu": c1 - c0, "insights": t2 - t1,
            "insights_cpu": c2 - c1, "whole": t4 - t3, "whole_cpu": c4 - c3, "nothing_new": t5 - t4}  # fmt: skip


def _clear(conn: Any) -> None:
    """The ratings' and the insights' tables emptied: the next refresh starts from nothing."""
    for t in ("rating_history", "rating_matches", "ratings", "skill_rows", "insight_matches", "skill_players",
              "luck_base", "insight_totals", "peek_analysis"):  # fmt: skip
        conn.execute(f"DELETE FROM {t}")
    conn.execute("CHECKPOINT")


# -- main --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the real measurement (long)")
    ap.add_argument("--runs", type=int, default=None, help="runs per cheater (default 1; --full 6)")
    ap.add_argument("--honest-runs", type=int, default=None, help="honest-only runs (default 0; --full 10)")
    ap.add_argument("--hands", type=int, default=None, help="hands a run (default 40; --full 250)")
    ap.add_argument("--signalling-runs", type=int, default=0,
                    help="runs of two honest signalling pairs (signal + reader; default 0)")
    ap.add_argument("--first-run", type=int, default=1, help="the first run's number (its seeds: 100 x it + ...)")
    ap.add_argument("--samples", type=int, default=10, help="sampled deals a decision (analysis and audits)")
    ap.add_argument("--uniform", action="store_true",
                    help="grade on deals weighted alike (choices tell nothing), not by a fitted play model")
    ap.add_argument("--speed", action="store_true", help="only the refresh's speed")
    ap.add_argument("--detection", action="store_true", help="only the detection")
    ap.add_argument("--speed-hands", type=int, default=None, help="hands of the speed store (default 5,000; --full 1M)")
    ap.add_argument("--keep", metavar="DIR", default=None,
                    help="keep each run's log and store in DIR (for --summarize; runs add up across invocations)")
    ap.add_argument("--cheats", default="omniscient,peeker", help="the planted cheaters' runs to make")
    ap.add_argument("--audit-styles", default=None, metavar="STYLE,...",
                    help="audit only these honest styles for partner peeking (e.g. reader,sampler; default all)")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: a run whose log is in DIR is not simulated again (its store is made anew)")
    ap.add_argument("--allowance", type=float, default=None,
                    help="the flags' allowance a hand for the looks (default the desk's, reports.cheats.ALLOWANCE)")
    ap.add_argument("--summarize", metavar="DIR", nargs="+", default=None,
                    help="no new run: the detection figures of the finished runs kept in DIR (--keep)")
    args = ap.parse_args(argv)
    global FLAG_ALLOWANCE
    FLAG_ALLOWANCE = args.allowance
    say = print
    heads: list[str] = []
    if args.summarize:
        args.detection = True
    if not args.speed:
        if args.summarize:
            results = kept_runs([Path(d) for d in args.summarize], say)
        else:
            runs = args.runs if args.runs is not None else (6 if args.full else 1)
            honest_runs = args.honest_runs if args.honest_runs is not None else (10 if args.full else 0)
            hands = args.hands or (250 if args.full else 40)
            results = detection(runs, honest_runs, hands, args.samples, say, args.first_run,
                                Path(args.keep) if args.keep else None, args.signalling_runs, args.uniform,
                                args.reuse, args.cheats.split(","),
                                args.audit_styles.split(",") if args.audit_styles else None)  # fmt: skip
        for r in results:  # every player-run: when first flagged, its final t and drift, each index
            for p, st in sorted(r["style"].items()):
                say(player_run_line(r, p, st))
        d = summary(results)
        h = d["honest"]
        for cheat in ("omniscient", "peeker"):
            x = d[cheat]
            say(f"{cheat}: caught in {x['caught']} of {x['runs']} runs; hands to flag {x['hands']} "
                f"(median {x['median']}, worst {x['worst']}); its other index flagged it at {x['other_index']}")  # fmt: skip
        say(f"honest player-runs: {h['player_runs']} ({h['looks_each']:.0f} looks each, every {STEP} hands); "
            f"alarms: omniscience {h['alarms']['omniscience']}, peeking {h['alarms']['peeking']} "
            f"(of {h['alarms']['peeking_measured']} audited), "
            f"either {h['alarms']['either']}; by style (runs, alarms): {h['by_style']}")  # fmt: skip
        ht = d["honest_t"]
        if ht["n"]:
            say(f"honest t over each player-run (both indices, {ht['n']} values): mean {ht['mean']:+.2f}, sd {ht['sd']:.2f}, "
                f"max {ht['max']:.2f}; above 1.645: {ht['over_1.645']} (5% expected), above 2.326: "
                f"{ht['over_2.326']} (1% expected)")  # fmt: skip
        for style, row in sorted(d["drift"].items()):
            for name, x in row.items():
                runs = ", ".join(f"{m:+.2f}" for m in x["means"])
                spread = "" if x["runs_p"] is None else f", runs differ p {x['runs_p']:.2f}"
                say(f"drift {style} {name}: {x['hands']} hands, {x['runs']} runs ({runs}{spread}), hindsight a hand "
                    f"mean {x['mean']:+.3f} (se {x['se']:.3f}) sd {x['sd']:.3f}; projected chance of a flag by "
                    f"{PROJECT_HANDS:,} hands {100 * x['p_flag']:.1f} % one look, {100 * x['p_flag_looks']:.1f} % "
                    f"a look every {STEP} hands ({100 * TARGET_FLAG:.0f} % with one look needs a mean under "
                    f"{x['allowed']:+.2f}; with no allowance {100 * x['p_flag_no_allowance']:.1f} %)")  # fmt: skip
        n = h["player_runs"]
        for cheat in ("omniscient", "peeker"):
            if d[cheat]["runs"]:
                med = d[cheat]["median"]
                heads.append(f"{cheat}_hands_to_flag_median: {med if med is not None else 'never'} hands")
                heads.append(f"{cheat}_caught: {d[cheat]['caught']}/{d[cheat]['runs']} runs")
        heads.append(f"false_alarm_rate: {100 * h['alarms']['either'] / max(n, 1):.2f} % "
                     f"({h['alarms']['either']}/{n} honest player-runs)")  # fmt: skip
        heads.append(f"false_alarm_rate_upper95: {100 * _upper95(h['alarms']['either'], n):.2f} %")
    if not args.detection:
        size = args.speed_hands or (1_000_000 if args.full else 5_000)
        s = speed(size, say)
        say(f"refresh from nothing at {s['hands']:,} hands ({s['move_rows']:,} move_analysis rows, synthetic): "
            f"ratings alone {s['ratings']:.1f} s ({s['ratings_cpu']:.1f} CPU-s), insights alone "
            f"{s['insights']:.1f} s ({s['insights_cpu']:.1f} CPU-s); both side by side as a load runs them "
            f"{s['whole']:.1f} s ({s['whole_cpu']:.1f} CPU-s); a refresh with nothing new "
            f"{1000 * s['nothing_new']:.0f} ms")  # fmt: skip
        heads.append(f"insights_refresh_seconds: {s['insights']:.1f} s")
        heads.append(f"whole_refresh_seconds: {s['whole']:.1f} s")
    for line in heads:
        say(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
