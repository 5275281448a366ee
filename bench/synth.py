"""Synthetic analysis rows for the speed benches at a million hands.

Analysing a million hands for real takes days on two cores (about a quarter
of a second a hand with 10 sampled deals), so the speed benches of the
insights (bench/insights.py --speed, bench/api.py) fill ``move_analysis``
and ``hand_analysis`` from the store's own moves and hands with made-up
values: a row per ply with one alternative per legal move the seat had (so
the rows and their lists have the real sizes), random values, grades
consistent with them, and a ``hand_analysis`` row per finished hand (par and
result zero-sum between the sides). The figures are nonsense; their
shape, and so the cost of reading them, is real.
"""

from __future__ import annotations

import time
from typing import Any

from replay.analysis import ANALYSIS_VERSION
from replay.store.analysis_blob import repack
from replay.tiles import tile_name

STAMP = "synthetic"

_NAMES = "[" + ", ".join(f"'{tile_name(t)}'" for t in range(28)) + "]"

_LABEL = (
    "CASE WHEN c = -1 THEN 'pass' WHEN c = -2 THEN 'draw' WHEN c = -3 THEN 'yield' "
    f"ELSE {_NAMES}[c // 2 + 1] || CASE WHEN c % 2 = 0 THEN ' left' ELSE ' right' END END"
)

_MOVES = f"""
INSERT INTO move_analysis BY NAME
WITH m AS (
    SELECT mv.match, mv.mno, mv.hand, mv.ply, mv.seat, mv.forced,
           CASE WHEN len(mv.legal_moves) = 0 THEN [-1] ELSE mv.legal_moves END AS codes,
           mv.ply AS on_line
    FROM moves mv JOIN hands h USING (match, hand)
    WHERE h.result IN ('domino', 'block') AND h.play_ok
), a AS (
    SELECT match, mno, hand, ply, seat, forced, on_line,
           list_transform(codes, lambda c: {{'move': {_LABEL},
                                             'dd': (random() * 60 - 30)::INTEGER,
                                             'pimc': CASE WHEN forced THEN NULL ELSE random() * 40 - 20 END}}) AS alts
    FROM m
), b AS (
    SELECT *, (random() * len(alts))::INTEGER % len(alts) + 1 AS pick FROM a
)
SELECT match, mno, hand, ply::SMALLINT AS ply, seat, {ANALYSIS_VERSION} AS version,
       alts[pick].move AS played, forced,
       list_transform(alts, lambda x: {{'move': x.move, 'dd': x.dd, 'pimc': x.pimc,
                                        'pimc_lo': x.pimc - 3, 'pimc_hi': x.pimc + 3}}) AS alternatives,
       alts[pick].dd AS dd, list_max(list_transform(alts, lambda x: x.dd)) AS dd_best,
       list_max(list_transform(alts, lambda x: x.dd)) - alts[pick].dd AS dd_loss,
       alts[pick].pimc AS pimc, list_max(list_transform(alts, lambda x: x.pimc)) AS pimc_best,
       list_max(list_transform(alts, lambda x: x.pimc)) - alts[pick].pimc AS pimc_loss,
       CASE WHEN forced THEN NULL
            WHEN list_max(list_transform(alts, lambda x: x.pimc)) - alts[pick].pimc >= 20 THEN 'blunder'
            WHEN list_max(list_transform(alts, lambda x: x.pimc)) - alts[pick].pimc >= 10 THEN 'mistake'
            WHEN list_max(list_transform(alts, lambda x: x.pimc)) - alts[pick].pimc >= 5 THEN 'inaccuracy' END
         AS class,
       (CASE WHEN forced THEN 0 ELSE 10 END)::SMALLINT AS samples, false AS exact,
       least(on_line, 27)::TINYINT AS on_line,
       list_max(list_transform(alts, lambda x: x.pimc)) - list_min(list_transform(alts, lambda x: x.pimc)) AS stake,
       list_max(list_transform(alts, lambda x: x.dd)) - list_min(list_transform(alts, lambda x: x.dd)) AS stake_dd,
       CASE WHEN forced THEN NULL ELSE alts[pick].pimc = list_max(list_transform(alts, lambda x: x.pimc)) END
         AS pimc_best_played,
       CASE WHEN forced THEN NULL ELSE random() < 0.25 END AS differs,
       CASE WHEN forced OR len(alts) < 2 THEN NULL
            ELSE (alts[pick].dd - list_avg(list_transform(alts, lambda x: x.dd)))
                 - (alts[pick].pimc - list_avg(list_transform(alts, lambda x: x.pimc))) END AS hindsight
FROM b
ORDER BY mno, match, hand, ply  -- as the writers append: a match's rows together (migration 021)
"""

_HANDS = f"""
INSERT INTO hand_analysis BY NAME
WITH h AS (
    SELECT h.match, h.mno, h.hand, h.leader, m.players AS n, (random() * 80 - 40)::INTEGER AS v,
           (random() * 80 - 40)::INTEGER AS r
    FROM hands h JOIN matches m USING (match)
    WHERE h.result IN ('domino', 'block') AND h.play_ok
)
SELECT match, mno, hand, {ANALYSIS_VERSION} AS version, 10::SMALLINT AS samples, 0::BIGINT AS seed, NULL AS skip,
       coalesce(leader, 0)::TINYINT AS first_seat,
       list_transform(range(n), lambda s: CASE WHEN s % 2 = 0 THEN v ELSE -v END) AS par,
       list_transform(range(n), lambda s: CASE WHEN s % 2 = 0 THEN r ELSE -r END) AS result,
       list_transform(range(n), lambda s: random() * 20) AS lost,
       list_transform(range(n), lambda s: 40 + random() * 40) AS stake,
       list_transform(range(n), lambda s: random() * 20) AS lost_dd,
       list_transform(range(n), lambda s: 40 + random() * 40) AS stake_dd,
       list_transform(range(n), lambda s: 60 + random() * 40) AS accuracy,
       list_transform(range(n), lambda s: 60 + random() * 40) AS accuracy_dd
FROM h
ORDER BY mno, match, hand
"""


def synthesize_analysis(conn: Any, *, say: Any = None) -> float:
    """Fill the analysis tables of a store that has none with synthetic rows
    (see the module doc) and stamp every match; the seconds it took."""
    t0 = time.perf_counter()
    conn.execute("BEGIN TRANSACTION")
    conn.execute("DELETE FROM move_analysis")
    conn.execute("DELETE FROM hand_analysis")
    conn.execute(_MOVES)
    conn.execute(_HANDS)
    conn.execute(f"UPDATE matches SET analysis = '{STAMP}' WHERE match IN (SELECT DISTINCT match FROM hand_analysis)")
    conn.execute("COMMIT")
    pack_missing(conn)
    conn.execute("CHECKPOINT")
    if say is not None:
        n = conn.execute("SELECT count(*) FROM move_analysis").fetchone()[0]
        h = conn.execute("SELECT count(*) FROM hand_analysis").fetchone()[0]
        say(f"synthetic analysis: {n:,} move rows, {h:,} hand rows in {time.perf_counter() - t0:.0f} s")
    return time.perf_counter() - t0


def pack_missing(conn: Any) -> int:
    """Pack the replay's copy of the analysis (migration 022) of every
    analysed match without one, as the writers of real analysis rows do; the
    matches packed."""
    conn.execute("CREATE OR REPLACE TEMP TABLE _unpacked AS "
                 "SELECT match FROM matches WHERE analysis IS NOT NULL AND analysis_body IS NULL")
    try:
        return repack(conn, "_unpacked")
    finally:
        conn.execute("DROP TABLE _unpacked")


def has_analysis(conn: Any) -> bool:
    return bool(conn.execute("SELECT 1 FROM hand_analysis LIMIT 1").fetchall())
