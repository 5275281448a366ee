"""Where an honest reader's drift against the read grade comes from (issue 30's diagnosis).

    python bench/read_gap.py runs/run-208.jsonl runs/gap-208 --hands 500
    python bench/read_gap.py runs/run-208.jsonl runs/gap-208 --hands 150 --configs fit:10,convention:10,convention:40
    python bench/read_gap.py runs/run-208.jsonl runs/gap-208 --hands 150 --configs convention:10 --sweeps 8 --pool 16 --draw-all

The log is a kept run of two honest signalling pairs (``bench/insights.py
--signalling-runs 1 --keep DIR``: ``run-K08.jsonl``, players ``p-00001`` to
``p-00004`` playing signal, reader, signal, reader). It is ingested once
into ``DIR/store.duckdb`` without analysis and the store's play model is
fitted (``replay model fit``). Then its first ``--hands`` hands are graded
several ways, each a ``KIND:DEALS`` of ``--configs``:

- ``fit``: the production read grade (the fitted model, every other seat
  weighed by its player's coefficients);
- ``convention``: a diagnostic only, never a production grade: the
  signallers' seats weighed by their exact convention
  (replay.searchbots.Convention, slip 0.05), the readers' plays telling
  nothing (the reader bot weighs its partner's plays that way);
- ``uniform``: no read grade.

``DEALS`` is the deals a decision (the analysis' ``samples``);
``--sweeps``, ``--pool`` and ``--draw-all`` change the read grade's
Metropolis sweeps, the most deals it draws (x DEALS) and whether it
always draws that many (replay.analysis.grades.READ_SWEEPS,
READ_MAX_FACTOR; the floor of the effective sample size): better placed
deals at the same count of solved ones.

For each grading and player: hands, the hindsight a hand against the read
grade and against the uniform belief on the same decisions (mean, sd, t);
then each grading against the first, paired hand by hand (the deal's luck
cancels: a far smaller spread). If the exact convention, or more deals,
left the readers' drift where the fitted model does, the gap is neither
the model's sharpness nor the count of deals.

Figures last, one per line, as ``name: value unit``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from replay.belief.history import Public  # noqa: E402
from replay.engine import HandState, Move  # noqa: E402
from replay.searchbots import Convention  # noqa: E402

#: The players of a signalling run and their styles (bench/insights.py: SIGNAL_PAIR x 2).
STYLES = {"p-00001": "signal", "p-00002": "reader", "p-00003": "signal", "p-00004": "reader"}

#: A player's hand in one grading: decisions graded, hindsight on the read grade, on the uniform belief.
Hand = tuple[int, float, float]


class ConventionTable:
    """A diagnostic belief policy: the seats of `signallers` weighed by the exact
    convention (replay.searchbots.Convention), every other seat's plays telling nothing.

    >>> from replay.rules import resolve
    >>> from replay.engine import new_hand, legal_moves
    >>> from replay.tiles import parse_tile as t
    >>> hands = [[t(x) for x in h.split()] for h in (
    ...     "66 52 51 50 43 21 10", "55 54 53 65 44 64 11",
    ...     "42 41 40 33 32 31 63", "30 22 20 62 61 60 00")]
    >>> s = new_hand(resolve("international"), hands, leader=0)
    >>> moves = legal_moves(s)
    >>> p = ConventionTable({0}).probs(s, moves, Public.fresh(4))
    >>> round(max(p), 2), ConventionTable({2}).probs(s, moves, Public.fresh(4)) is None
    (0.95, True)
    """

    def __init__(self, signallers: Iterable[int], slip: float = 0.05) -> None:
        self.by_seat = {s: Convention(s, slip) for s in signallers}

    def probs(self, state: HandState, moves: Sequence[Move], public: Public) -> Sequence[float] | None:
        c = self.by_seat.get(state.turn)
        return None if c is None else c.probs(state, moves, public)


def prepare(log: Path, where: Path) -> Path:
    """The log's store in `where` (ingested without analysis, its play model fitted), made once."""
    from replay.analysis.refit import fit_store
    from replay.ingest import ingest
    from replay.store import open_store

    db = where / "store.duckdb"
    if db.exists():
        return db
    where.mkdir(parents=True, exist_ok=True)
    ingest([log], db=db, workers=1, analysis=(0, 0))
    conn = open_store(db)
    try:
        fit_store(conn)
    finally:
        conn.close()
    return db


def uniform_hindsight(ply: Any) -> float:
    """A decision's hindsight against the uniform belief (its ``pimc`` means), as
    replay.analysis.hindsight works it out against the read grade."""
    dd = [a.dd for a in ply.alternatives]
    m = [a.pimc for a in ply.alternatives]
    i = next(k for k, a in enumerate(ply.alternatives) if a.move == ply.played)
    return float((dd[i] - sum(dd) / len(dd)) - (m[i] - sum(m) / len(m)))


def grade(db: Path, kind: str, deals: int, hands: int, say: Any) -> dict[tuple[str, int], dict[str, Hand]]:
    """Each of the store's first `hands` hands (in time order) graded by `kind`:
    per player, its decisions and their hindsight (read, uniform)."""
    import duckdb

    from replay.analysis import Analyzer
    from replay.analysis.grades import hindsight
    from replay.analysis.run import read_policies
    from replay.analysis.stored import stored_inputs

    conn = duckdb.connect(str(db), read_only=True)
    try:
        model = read_policies(conn)["partnership"][1]
        matches = [m for (m,) in conn.execute("SELECT match FROM matches ORDER BY started, match").fetchall()]
        inputs = [inp for _, got in stored_inputs(conn, matches) for inp in got]
    finally:
        conn.close()
    order = {m: i for i, m in enumerate(matches)}
    inputs.sort(key=lambda x: (order[x.match], x.hand))
    an = Analyzer(samples=deals, seed=0)
    out: dict[tuple[str, int], dict[str, Hand]] = {}
    t0 = time.perf_counter()
    for inp in inputs[:hands]:
        players = list(inp.players)
        if kind == "fit":
            an.policies = {"partnership": ("fit", model)}
        elif kind == "convention":
            signallers = {s for s, p in enumerate(players) if STYLES.get(str(p)) == "signal"}
            an.policies = {"partnership": ("convention", ConventionTable(signallers))}
        else:
            an.policies = {}
        a = an.hand(inp)
        if a.skip is not None:
            continue
        per: dict[str, list[float]] = {}
        for ply in a.plies:
            y = hindsight(ply)
            if y is None:
                continue
            row = per.setdefault(str(players[ply.seat]), [0, 0.0, 0.0])
            row[0] += 1
            row[1] += y
            row[2] += uniform_hindsight(ply)
        out[inp.match, inp.hand] = {p: (int(r[0]), r[1], r[2]) for p, r in per.items()}
    say(f"  graded {len(out)} hands by {kind}:{deals} in {time.perf_counter() - t0:.0f} s")
    return out


def table(got: dict[tuple[str, int], dict[str, Hand]]) -> dict[str, dict[str, float]]:
    """Per player: hands, and the mean, sd and t of the hindsight a hand, read and uniform.

    >>> g = {("m", k): {"a": (2, float(k % 3), 1.0 + k % 3)} for k in range(30)}
    >>> row = table(g)["a"]
    >>> row["hands"], row["read"], round(row["uniform"] - row["read"], 6)
    (30, 1.0, 1.0)
    """
    out = {}
    for p in sorted({p for per in got.values() for p in per}):
        ys = [per[p][1] for per in got.values() if p in per]
        us = [per[p][2] for per in got.values() if p in per]
        row: dict[str, float] = {"hands": len(ys)}
        for name, v in (("read", ys), ("uniform", us)):
            m, sd = statistics.fmean(v), statistics.stdev(v) if len(v) > 1 else 0.0
            row[name], row[f"{name}_sd"] = m, sd
            row[f"{name}_t"] = m / (sd / len(v) ** 0.5) if sd > 0 else 0.0
        out[p] = row
    return out


def paired(a: dict[tuple[str, int], dict[str, Hand]], b: dict[tuple[str, int], dict[str, Hand]]
           ) -> dict[str, tuple[int, float, float]]:  # fmt: skip
    """Per player: hands in both, the mean of (read hindsight by `a` - by `b`) a hand and its standard error.

    >>> a = {("m", k): {"x": (1, 2.0 + k % 2, 0.0)} for k in range(4)}
    >>> b = {("m", k): {"x": (1, 1.0, 0.0)} for k in range(4)}
    >>> n, d, se = paired(a, b)["x"]
    >>> n, d, round(se, 3)
    (4, 1.5, 0.289)
    """
    out = {}
    keys = [k for k in a if k in b]
    for p in sorted({p for k in keys for p in a[k]}):
        d = [a[k][p][1] - b[k][p][1] for k in keys if p in a[k] and p in b[k]]
        if len(d) > 1:
            out[p] = (len(d), statistics.fmean(d), statistics.stdev(d) / len(d) ** 0.5)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="a kept signalling run's log (bench/insights.py --keep)")
    ap.add_argument("dir", help="where its store is made (once) and kept")
    ap.add_argument("--hands", type=int, default=500, help="its first hands graded (default 500)")
    ap.add_argument("--configs", default="fit:10,convention:10", help="KIND:DEALS,... (fit, convention, uniform)")
    ap.add_argument("--sweeps", type=int, default=None, help="the read grade's Metropolis sweeps")
    ap.add_argument("--pool", type=int, default=None, help="the most deals drawn, x DEALS")
    ap.add_argument("--draw-all", action="store_true", help="always draw the most deals (no floor)")
    args = ap.parse_args(argv)
    say = print
    from replay.analysis import grades

    if args.sweeps is not None:
        grades.READ_SWEEPS = args.sweeps  # type: ignore[misc]
    if args.pool is not None:
        grades.READ_MAX_FACTOR = args.pool  # type: ignore[misc]
    if args.draw_all:
        grades.weighted_belief = functools.partial(grades.weighted_belief, floor=float("inf"))  # type: ignore[assignment]
    db = prepare(Path(args.log), Path(args.dir))
    configs = [(k, int(n)) for k, n in (c.split(":") for c in args.configs.split(","))]
    got = {c: grade(db, c[0], c[1], args.hands, say) for c in configs}
    for (kind, deals), g in got.items():
        say(f"{kind}:{deals} ({len(g)} hands)")
        for p, r in table(g).items():
            say(f"  {p} {STYLES.get(p, '?'):6}: {r['hands']:.0f} hands; hindsight a hand read {r['read']:+.2f} "
                f"(sd {r['read_sd']:.1f}, t {r['read_t']:+.2f}); uniform {r['uniform']:+.2f} "
                f"(sd {r['uniform_sd']:.1f}, t {r['uniform_t']:+.2f})")  # fmt: skip
    first = configs[0]
    heads = []
    for c in configs[1:]:
        say(f"{c[0]}:{c[1]} minus {first[0]}:{first[1]}, paired by hand")
        pr = paired(got[c], got[first])
        for p, (n, d, se) in pr.items():
            say(f"  {p} {STYLES.get(p, '?'):6}: {n} hands, {d:+.2f} a hand (se {se:.2f})")
        readers = [pr[p] for p in pr if STYLES.get(p) == "reader"]
        if readers:
            n = sum(x[0] for x in readers)
            d = sum(x[0] * x[1] for x in readers) / n
            se = sum((x[0] * x[2]) ** 2 for x in readers) ** 0.5 / n
            heads.append(f"read_gap_readers_{c[0]}{c[1]}_minus_{first[0]}{first[1]}: {d:+.2f} points a hand (se {se:.2f})")
    for line in heads:
        say(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
