"""Cheat signals for auditors: the omniscience and the partner-peeking indices.

A player who sees what it may not (the other hands, or its partner's)
chooses moves that do better on the real deal than the deals it could face
say they should. Both indices measure that, each against a null model that
needs no guess of how strong an honest player is (docs/insights.md):

**The statistic.** At a decision (a non-forced move with a sampled grade),
let a move's *edge* be its value minus the mean value of the legal moves.
The played move's edge on the real deal (perfect information, ``dd``) minus
its edge on the deals the mover could face (the read grade, those deals
weighted by the other seats' plays under the play model, where the decision
has one; else ``pimc``, the uniform sampled grade) is the decision's
*hindsight* ``y`` (``move_analysis.hindsight``).

**Null model.** An honest player chooses from what it could know. Given
that, the real deal is one of the deals the mover could face, each as
likely as the belief the grade draws from says (docs/analysis.md), so the expected real edge
of *any* move, the chosen one included, is its edge over those deals: ``y``
has mean 0 whatever the player's skill or style (random, careful, strong),
and so has a hand's sum of ``y``. The sampled grade is an unbiased estimate
(drawn independently of the real deal), which adds noise but no bias.
Hands are independent deals; the decisions of one hand are not (they share
its deal), so the test is on the hands' sums: a one-sided t-test of their
mean over the player's hands. A player is flagged when p < :data:`ALPHA`
(fixed per player, one-sided) with at least :data:`MIN_HANDS` hands. The test
is of a mean above :data:`ALLOWANCE` a hand rather than above 0: the edge
an honest reader may have beyond what the play model knows
(docs/insights.md, "The allowance").

**Omniscience index**: the mean ``y`` per decision, in points. A player who
sees every hand plays the best move on the real deal, which beats the mean
move there by more than its expected edge: the index is clearly positive.
The evidence shown beside it: at the decisions where the best move on what
the player could know is no perfect-information best move (``differs``), how
often the player played a perfect-information best move anyway, against the
pool's rate (descriptive: that count selects decisions by the real deal, so
it is no test).

**Partner-peeking index**: the same with a third grade, made on demand
(:func:`audit_player`, never at ingest): each move's mean value over the
deals the mover could face if it also saw its partner's tiles
(``peek``). ``y_peek`` = the played move's edge on those deals minus its edge
on the deals it could face. An honest player cannot see the partner's
tiles, so by the same argument ``y_peek`` has mean 0; a player who sees
them picks moves whose edge is higher once they are seen.

**What the null model leaves out.** The read grade weighs the deals by
what the others' plays tell, as far as the fitted play model knows it; an
honest player who reads its partner more sharply than the model keeps a
little real edge beyond it (the simulated reader: about +0.25 a hand),
which the model counts as hindsight. So the tests ask for more than
:data:`ALLOWANCE` a hand, and the threshold is strict
(bench/insights.py, docs/insights.md).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import math
import random
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Final

import duckdb
import pyarrow as pa
from scipy import stats

from replay.analysis import ANALYSIS_VERSION, Analyzer, engine_move
from replay.analysis.run import Policies, process_pool, read_policies, stored_inputs
from replay.belief.history import Recorder
from replay.engine import apply, legal_moves, new_hand
from replay.knowledge import Tracker
from replay.store import registered, transaction
from reports.skill import seat_ranges

__all__ = [
    "ALLOWANCE",
    "ALPHA",
    "MIN_HANDS",
    "Signal",
    "audit_player",
    "evidence",
    "peek_grades",
    "signal",
    "suspicious",
]

Cursor = duckdb.DuckDBPyConnection

#: One-sided significance a player must reach to be flagged (fixed per player).
ALPHA: Final = 1e-4
#: Hands with a graded decision a player needs before a flag (the t-test's footing).
MIN_HANDS: Final = 20
#: The hindsight a hand (points) the tests allow an honest player: reads of the
#: partner's plays sharper than the play model's give a real edge the null model
#: does not know of (the simulated reader: +6 a hand against the uniform belief,
#: +0.25 against the read grade; the largest honest drift measured, +1.3 with a
#: 95% upper bound of 2.2); a cheater's is +20 and more (docs/insights.md).
ALLOWANCE: Final = 2.0
#: The latest pair-game hands an audit grades by default, and sampled deals per decision.
AUDIT_HANDS: Final = 300
AUDIT_SAMPLES: Final = 10
#: Evidence rows listed per player.
EVIDENCE_ROWS: Final = 50


@dataclass(frozen=True, slots=True)
class Signal:
    """A player's index and its test: `hands` (with a graded decision),
    `decisions`, `index` (mean y a decision, points), `t`, `p` (one-sided),
    `flagged` (p < ALPHA with at least MIN_HANDS hands)."""

    hands: int
    decisions: int
    index: float | None
    t: float | None
    p: float | None
    flagged: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "hands": self.hands, "decisions": self.decisions,
            "index": None if self.index is None else round(self.index, 3),
            "t": None if self.t is None else round(self.t, 2),
            "p": None if self.p is None else float(f"{self.p:.3g}"),
            "flagged": self.flagged,
        }  # fmt: skip


def signal(decisions: int, y_sum: float, hands: int, y_sq: float, *, alpha: float = ALPHA,
           min_hands: int = MIN_HANDS, allowance: float = ALLOWANCE) -> Signal:  # fmt: skip
    """The test of a mean above `allowance` over `hands` hands whose sums of
    y add up to `y_sum` and whose squares add up to `y_sq` (over `decisions`
    decisions).

    >>> s = signal(120, 60.0, 40, 200.0, allowance=0.0)   # +1.5 a hand, sd 1.7
    >>> round(s.index, 2), round(s.t, 2), s.flagged
    (0.5, 5.65, True)
    >>> s = signal(120, 60.0, 40, 200.0)                  # under the allowance
    >>> round(s.t, 2), s.flagged
    (-1.88, False)
    >>> signal(3, 1.0, 2, 1.0).flagged
    False
    """
    index = y_sum / decisions if decisions else None
    if hands < 2:
        return Signal(hands, decisions, index, None, None, False)
    mean = y_sum / hands
    var = max(y_sq - hands * mean * mean, 0.0) / (hands - 1)
    over = mean - allowance
    if var <= 1e-12:
        t = math.inf if over > 0 else -math.inf if over < 0 else 0.0
    else:
        t = over / math.sqrt(var / hands)
    p = float(stats.t.sf(t, hands - 1)) if math.isfinite(t) else (0.0 if t > 0 else 1.0)
    return Signal(hands, decisions, index, t if math.isfinite(t) else None, p,
                  hands >= min_hands and p < alpha)  # fmt: skip


# -- the list ---------------------------------------------------------------------------------

_OMNI = """
SELECT s.player, pl.name, s.bot, s.matches, s.hands, s.decisions, s.y_n, s.y_sum, s.y_hands, s.y_sq,
       s.differs_n, s.differs_hit
FROM skill_players s LEFT JOIN players pl USING (player)
WHERE s.profile = '*'
"""

# the partner-peeking grades of audited players, summed by player and hand
_PEEK = """
WITH r AS ({ranges}), h AS (
    SELECT r.player, k.match, k.hand, count(*) AS n, sum(k.y_peek) AS y
    FROM peek_analysis k JOIN r ON r.match = k.match AND r.seat = k.seat
         AND k.hand >= r.from_hand AND k.hand < r.to_hand
    GROUP BY r.player, k.match, k.hand
)
SELECT player, sum(n), sum(y), count(*), sum(y * y) FROM h GROUP BY player
""".format(ranges=seat_ranges("WHERE s.match IN (SELECT DISTINCT match FROM peek_analysis)"))

_AUDITS = """
SELECT player, state, asked, done, hands, samples, decisions, message FROM audits
QUALIFY row_number() OVER (PARTITION BY player ORDER BY asked DESC) = 1
"""


def pool_rates(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The pool's agreement at differing decisions: every listed player not flagged."""
    kept = [r for r in rows if not r["flagged"]]
    n, hit = sum(r["differs"] for r in kept), sum(r["differs_hit"] for r in kept)
    return {"players": len(kept), "differs": n, "differs_hit": hit, "differs_rate": round(hit / n, 4) if n else None}


def suspicious(cur: Cursor, *, bots: bool = False, min_hands: int = 0) -> dict[str, Any]:
    """Every player with analysed hands, with both indices and their tests,
    the most suspicious first (the smaller p of the two). `bots`: list marked
    bots too; `min_hands`: players with at least that many analysed hands."""
    peek = {r[0]: signal(int(r[1]), float(r[2]), int(r[3]), float(r[4])) for r in cur.execute(_PEEK).fetchall()}
    audits = {r[0]: dict(zip(("player", "state", "asked", "done", "hands", "samples", "decisions", "message"),
                             r, strict=True)) for r in cur.execute(_AUDITS).fetchall()}  # fmt: skip
    everyone = []
    for (player, name, bot, matches, hands, decisions, y_n, y_sum, y_hands, y_sq, dn, dh) in cur.execute(_OMNI).fetchall():
        omni = signal(int(y_n), float(y_sum), int(y_hands), float(y_sq))
        pk = peek.get(player)
        audit = audits.get(player)
        everyone.append({
            "player": player, "name": name, "bot": bool(bot), "matches": matches, "hands": hands,
            "decisions": decisions,
            "omniscience": omni.to_json(),
            "differs": int(dn), "differs_hit": int(dh),
            "differs_rate": round(dh / dn, 4) if dn else None,
            "peeking": None if pk is None else pk.to_json(),
            "audit": None if audit is None else _audit_json(audit),
            "flagged": omni.flagged or (pk is not None and pk.flagged),
        })  # fmt: skip
    rows = [r for r in everyone if (bots or not r["bot"]) and r["hands"] >= min_hands]
    pool = pool_rates(everyone)
    tested = len(rows)

    def key(r: dict[str, Any]) -> tuple[float, str]:
        ps = [x["p"] for x in (r["omniscience"], r["peeking"]) if x is not None and x["p"] is not None]
        return (min(ps) if ps else 2.0, r["player"])

    rows.sort(key=key)
    for r in rows:  # the chance of so small a p among this many players (Bonferroni)
        for k in ("omniscience", "peeking"):
            x = r[k]
            if x is not None:
                x["p_adjusted"] = None if x["p"] is None else min(1.0, float(f"{x['p'] * tested:.3g}"))
    # the omniscience index reads the sampled grade, which ingest leaves to the
    # server (replay serve --deepen) or replay analyze --db
    graded = {"decisions": sum(r["decisions"] for r in everyone),
              "sampled": sum(r["omniscience"]["decisions"] for r in everyone)}  # fmt: skip
    return {
        "alpha": ALPHA, "min_hands": MIN_HANDS, "allowance": ALLOWANCE, "players": tested,
        "flagged": sum(1 for r in rows if r["flagged"]), "pool": pool, "graded": graded, "rows": rows,
    }


def _audit_json(a: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k in ("asked", "done"):
        if isinstance(out.get(k), dt.datetime):
            out[k] = out[k].isoformat()
    return out


def player_signals(cur: Cursor, player: str) -> dict[str, Any] | None:
    """One player's row of :func:`suspicious` (bots included) with the pool's
    rates (`pool`), or None."""
    data = suspicious(cur, bots=True)
    got = [r for r in data["rows"] if r["player"] == player]
    return {**got[0], "pool": data["pool"]} if got else None


_EVIDENCE = """
WITH r AS ({ranges}), mine AS (SELECT * FROM r WHERE player = $player)
SELECT m.match, m.hand, m.ply, m.seat, m.played, m.dd, m.dd_best, round(m.pimc, 2) AS pimc,
       round(m.pimc_best, 2) AS pimc_best,
       list_filter(m.alternatives, lambda a: a.pimc = m.pimc_best)[1].move AS best_known,
       round(m.hindsight, 2) AS hindsight, k.y_peek
FROM move_analysis m
JOIN mine ON mine.match = m.match AND mine.seat = m.seat AND m.hand >= mine.from_hand AND m.hand < mine.to_hand
LEFT JOIN peek_analysis k ON k.match = m.match AND k.hand = m.hand AND k.ply = m.ply
WHERE NOT m.forced AND m.differs AND m.dd = m.dd_best AND m.match IN (SELECT match FROM mine)
ORDER BY m.hindsight DESC NULLS LAST, m.match, m.hand, m.ply
LIMIT $limit
""".format(ranges=seat_ranges("WHERE s.match IN (SELECT match FROM skill_rows WHERE player = $player)"))


def evidence(cur: Cursor, player: str, limit: int = EVIDENCE_ROWS) -> list[dict[str, Any]]:
    """The player's decisions where the best move on what it could know was
    no perfect-information best move and it played one anyway, the largest
    hindsight first: where an auditor looks first (each links to its replay)."""
    got = cur.execute(_EVIDENCE, {"player": player, "limit": limit})
    cols = [d[0] for d in got.description or ()]
    return [dict(zip(cols, r, strict=True)) for r in got.fetchall()]


# -- the partner-peeking grade ------------------------------------------------------------


def _rng(seed: int, match: str, hand: int, ply: int, what: str = "peek") -> random.Random:
    # a stream of its own: not the analysis' draws for the same decision
    digest = hashlib.sha256(f"{what}|{seed}|{match}|{hand}|{ply}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


_ANALYZERS: dict[tuple[int, int, tuple[tuple[str, str], ...]], Any] = {}


def peek_grades(inputs: Sequence[Any], seats: dict[tuple[str, int], int], samples: int, seed: int,
                known: dict[tuple[str, int, int], tuple[int, list[float] | None]],
                policies: Policies | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The partner-peeking grade of the decisions of seat ``seats[(match, hand)]``
    in each hand of `inputs` (replay.analysis.HandInput, pair games), as
    peek_analysis rows. `known`: (match, hand, ply) -> (the played move's index,
    each alternative's pimc) from move_analysis: only those plies are graded.
    A ply without the sampled grade (the store's analysis not sampled yet,
    api.deepen) gets it here too, from deals of its own. With `policies`
    (the read grade's play models), both sides of the comparison weigh the
    deals by the unseen seats' choices: the honest baseline is what a strong
    reader could know (the read values `known` then holds), so that reading
    a partner's plays is not taken for seeing its tiles."""
    pol = dict(policies or {})
    key = (samples, seed, tuple(sorted((f, n) for f, (n, _) in pol.items())))
    a = _ANALYZERS.get(key)
    if a is None:
        a = _ANALYZERS[key] = Analyzer(samples=samples, seed=seed, policies=pol)
    out: list[dict[str, Any]] = []
    for inp in inputs:
        seat = seats.get((inp.match, inp.hand))
        r = inp.rules
        if seat is None or inp.skip is not None or r.teams != "pairs" or r.players != 4:
            continue
        state = new_hand(r, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening, stock=inp.stock)
        tracker = Recorder(state, fixed_by=inp.fixed_by) if a.policy(r) else Tracker(state, fixed_by=inp.fixed_by)
        memo: dict[tuple[int, int], float] = {}  # a play's log-probability in a hand: the same whoever looks
        for k, (mover, kind, tile, end) in enumerate(inp.moves, 1):
            move, laid = engine_move(state, kind, tile, end)
            got = known.get((inp.match, inp.hand, k))
            if mover == seat and got is not None and state.result is None and len(legal_moves(state)) > 1:
                played, pimc = got
                means = [m for m, _ in a.sampled(state, tracker, inp.context, _rng(seed, inp.match, inp.hand, k),
                                                 ((seat + 2) % 4,), inp.players, memo)]  # fmt: skip
                if pimc is None:
                    pimc = [m for m, _ in a.sampled(state, tracker, inp.context,
                                                    _rng(seed, inp.match, inp.hand, k, "own"), (), inp.players,
                                                    memo)]  # fmt: skip
                if len(means) == len(pimc):
                    y = (means[played] - sum(means) / len(means)) - (pimc[played] - sum(pimc) / len(pimc))
                    out.append({"match": inp.match, "hand": inp.hand, "ply": k, "seat": seat,
                                "version": ANALYSIS_VERSION, "samples": samples, "seed": seed,
                                "peek": means, "y_peek": y})  # fmt: skip
            tracker.see(state, move)
            state = apply(state, laid)
    return out


_TARGETS = """
WITH r AS ({ranges})
SELECT a.match, a.hand, r.seat
FROM hand_analysis a JOIN r ON r.match = a.match AND a.hand >= r.from_hand AND a.hand < r.to_hand
JOIN matches m ON m.match = a.match
WHERE r.player = $player AND a.skip IS NULL AND m.rules->>'teams' = 'pairs' AND m.players = 4
ORDER BY m.started DESC NULLS LAST, m.mno DESC, a.hand DESC
LIMIT $hands
""".format(ranges=seat_ranges("WHERE s.match IN (SELECT match FROM skill_rows WHERE player = $player "
                              "AND partner IS NOT NULL)"))


def audit_player(conn: Cursor, player: str, *, hands: int = AUDIT_HANDS, samples: int = AUDIT_SAMPLES,
                 seed: int = 0, workers: int = 0, progress: Callable[[int, int], None] | None = None,
                 write_lock: AbstractContextManager[Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Grade the partner-peeking index of `player` over its latest `hands`
    pair-game hands with a sampled grade (`samples` deals a decision), store
    the rows (peek_analysis, replacing those of the same decisions) and the
    audit (audits); the player's signals after it. `workers` > 0 grades in
    that many processes. `progress(done, total)` is told after each match.
    `write_lock` is held while it writes (a server's load lock: the loads and
    the background sampling rewrite the same tables), not while it grades."""
    lock = write_lock if write_lock is not None else contextlib.nullcontext()

    asked = dt.datetime.now(dt.UTC)
    with lock:
        conn.execute("INSERT INTO audits VALUES (?, ?, NULL, 'running', ?, ?, NULL, NULL)",
                     [player, asked, hands, samples])  # fmt: skip
    try:
        targets = conn.execute(_TARGETS, {"player": player, "hands": hands}).fetchall()
        policies = read_policies(conn)
        seats = {(m, h): s for m, h, s in targets}
        matches = sorted({m for m, _, _ in targets})
        known: dict[tuple[str, int, int], tuple[int, list[float] | None]] = {}
        if targets:
            conn.register("_aud", _targets_table(targets))
            try:
                rows = conn.execute(
                    "SELECT m.match, m.hand, m.ply, m.played, list_transform(m.alternatives, lambda a: a.move), "
                    "CASE WHEN m.reads IS NOT NULL THEN list_transform(m.reads, lambda r: r.read) "
                    "ELSE list_transform(m.alternatives, lambda a: a.pimc) END FROM move_analysis m "
                    "JOIN _aud t ON t.match = m.match AND t.hand = m.hand AND t.seat = m.seat "
                    "WHERE NOT m.forced"
                ).fetchall()
            finally:
                conn.unregister("_aud")
            for m, h, k, played, moves, pimc in rows:
                if played in moves:  # (pimc None: a hand not sampled yet, graded here)
                    known[m, h, k] = (moves.index(played), pimc if all(x is not None for x in pimc) else None)
        got: list[dict[str, Any]] = []
        tasks = [(m, inputs) for m, inputs in stored_inputs(conn, matches)]
        pool = process_pool(workers)
        try:
            done = 0
            if pool is None:
                for _, inputs in tasks:
                    got.extend(peek_grades(inputs, seats, samples, seed, known, policies))
                    done += 1
                    if progress is not None:
                        progress(done, len(tasks))
            else:
                futures = [pool.submit(peek_grades, inputs, {k: v for k, v in seats.items() if k[0] == m}, samples,
                                       seed, {k: v for k, v in known.items() if k[0] == m}, policies)
                           for m, inputs in tasks]  # fmt: skip
                for f in futures:
                    got.extend(f.result())
                    done += 1
                    if progress is not None:
                        progress(done, len(tasks))
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        with lock:
            _store_peek(conn, got)
            conn.execute(
                "UPDATE audits SET state = 'done', done = ?, decisions = ?, message = ? WHERE player = ? AND asked = ?",
                [dt.datetime.now(dt.UTC), len(got), f"{len(seats)} hands of pair games graded", player, asked],
            )
    except BaseException as exc:
        with lock:
            conn.execute("UPDATE audits SET state = 'failed', done = ?, message = ? WHERE player = ? AND asked = ?",
                         [dt.datetime.now(dt.UTC), f"{type(exc).__name__}: {exc}"[:500], player, asked])  # fmt: skip
        raise
    return player_signals(conn, player) or {"player": player}


def _targets_table(targets: Iterable[tuple[str, int, int]]) -> Any:
    m, h, s = zip(*targets, strict=True) if targets else ((), (), ())
    return pa.table({"match": pa.array(m, pa.string()), "hand": pa.array(h, pa.int32()),
                     "seat": pa.array(s, pa.int8())})  # fmt: skip


def _store_peek(conn: Cursor, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    table = pa.Table.from_pylist(rows, schema=pa.schema([
        ("match", pa.string()), ("hand", pa.int32()), ("ply", pa.int16()), ("seat", pa.int8()),
        ("version", pa.int32()), ("samples", pa.int16()), ("seed", pa.int64()),
        ("peek", pa.list_(pa.float64())), ("y_peek", pa.float64())]))  # fmt: skip
    with registered(conn, "_peek", table), transaction(conn):
        conn.execute("DELETE FROM peek_analysis WHERE (match, hand, ply) IN (SELECT match, hand, ply FROM _peek)")
        conn.execute("INSERT INTO peek_analysis BY NAME SELECT * FROM _peek")


def format_text(data: dict[str, Any]) -> str:
    """The list as text: a line a player, the flagged marked.

    >>> print(format_text({"players": 0, "flagged": 0, "alpha": 1e-4, "min_hands": 20, "rows": []}), end="")
    0 players with analysed hands, 0 flagged (p < 0.0001 one-sided, at least 20 hands)
    >>> print(format_text({"players": 0, "flagged": 0, "alpha": 1e-4, "min_hands": 20, "allowance": 2.0,
    ...                    "rows": []}), end="")
    0 players with analysed hands, 0 flagged (p < 0.0001 one-sided, above 2 a hand, at least 20 hands)
    >>> print(format_text({"players": 0, "flagged": 0, "alpha": 1e-4, "min_hands": 20, "rows": [],
    ...                    "graded": {"decisions": 40, "sampled": 10}}), end="")
    0 players with analysed hands, 0 flagged (p < 0.0001 one-sided, at least 20 hands)
    the omniscience index reads 10 of 40 decisions: the others are not sampled yet (replay analyze --db --samples N, or a server's --deepen)
    """
    def p(x: Any) -> str:
        return "-" if x is None else f"{x:.2g}"

    over = f", above {data['allowance']:g} a hand" if data.get("allowance") else ""
    lines = [f"{data['players']} players with analysed hands, {data['flagged']} flagged "
             f"(p < {data['alpha']:g} one-sided{over}, at least {data['min_hands']} hands)"]  # fmt: skip
    graded = data.get("graded") or {}
    if graded.get("decisions") and graded["sampled"] < graded["decisions"]:
        lines.append(f"the omniscience index reads {graded['sampled']} of {graded['decisions']} decisions: the "
                     "others are not sampled yet (replay analyze --db --samples N, or a server's --deepen)")  # fmt: skip
    if data["rows"]:
        lines.append(f"{'player':<24} {'hands':>6}  {'omniscience':>11} {'p':>8}  {'peeking':>8} {'p':>8}  flag")
    for r in data["rows"]:
        o, k = r["omniscience"], r["peeking"] or {}
        flag = "FLAGGED" if r["flagged"] else ""
        idx = "-" if o["index"] is None else f"{o['index']:+.2f}"
        kdx = "-" if k.get("index") is None else f"{k['index']:+.2f}"
        lines.append(f"{r['player'][:24]:<24} {r['hands']:>6}  {idx:>11} {p(o['p']):>8}  {kdx:>8} "
                     f"{p(k.get('p')):>8}  {flag}")  # fmt: skip
    return "\n".join(lines) + "\n"
