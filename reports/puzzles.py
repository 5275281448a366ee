"""Puzzles from the store: decisions where one move is clearly best under every grade.

A decision is a puzzle when (docs/review.md):

- it was sampled (the grade on what the mover could know exists) and had
  at least two moves;
- under perfect information one move is best by at least `gap` points
  over every other (the mistake line: 10 points, milo 0.25);
- on what the mover could know the same move is best by at least `gap`
  points in the mean, and the evidence is clear: every agreeing deal was
  scored, or the low end of its 95% interval is above the high end of
  every other move's.

So the answer does not hang on the hidden tiles nor on the sampling. The
themes come from the best line (replay.analysis.explain.themes), which the
pages compute; the solve rates from the tries kept (migration 017).
"""

from __future__ import annotations

from typing import Any, Final

from replay.analysis.grades import THRESHOLDS

__all__ = ["candidates", "count_hands", "gap_of"]

#: The gap over the second best move, in points, by scoring: the mistake line.
GAP_INDEX: Final = 1


def gap_of(scoring: str) -> float:
    """The gap a puzzle's move has over every other, under both grades.

    >>> gap_of("pips"), gap_of("milo")
    (10.0, 0.25)
    """
    return THRESHOLDS.get(scoring, THRESHOLDS["pips"])[GAP_INDEX]


def candidates(cur: Any, profile: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """Every puzzle of the store (or of one profile), in store order."""
    where = "" if profile is None else "AND mt.profile = $profile"
    args: dict[str, Any] = {} if profile is None else {"profile": profile}
    rows = cur.execute(f"""
        WITH c AS (
            SELECT a.match, a.hand, a.ply, a.seat, a.played, a.exact, a.alternatives, mt.profile,
                   coalesce(mt.rules->>'scoring', 'pips') AS scoring,
                   list_reverse_sort(list_transform(a.alternatives, lambda x: x.dd)) AS dds,
                   list_reverse_sort(list_transform(a.alternatives, lambda x: x.pimc)) AS pis
            FROM move_analysis a JOIN matches mt ON mt.match = a.match
            WHERE NOT a.forced AND a.samples > 0 AND len(a.alternatives) > 1 {where}
        )
        SELECT match, hand, ply, seat, played, exact, alternatives, profile, scoring, dds[1] - dds[2] AS dd_gap,
               pis[1] - pis[2] AS pimc_gap
        FROM c
        WHERE dds[1] - dds[2] >= CASE scoring WHEN 'milo' THEN 0.25 ELSE 10 END
          AND pis[1] - pis[2] >= CASE scoring WHEN 'milo' THEN 0.25 ELSE 10 END
          AND list_filter(alternatives, lambda x: x.dd = dds[1])[1].move
              = list_filter(alternatives, lambda x: x.pimc = pis[1])[1].move
        ORDER BY match, hand, ply""", args).fetchall()
    out = []
    for m, h, p, seat, played, exact, alts, prof, scoring, dd_gap, pimc_gap in rows:
        best = max(alts, key=lambda a: a["pimc"])
        others = [a for a in alts if a is not best]
        if not exact and not all(best["pimc_lo"] > a["pimc_hi"] for a in others):
            continue
        out.append({"match": m, "hand": h, "ply": p, "seat": seat, "profile": prof, "scoring": scoring,
                    "answer": best["move"], "played": played, "dd_gap": dd_gap, "pimc_gap": round(pimc_gap, 2),
                    "exact": exact, "moves": [a["move"] for a in alts]})
        if limit is not None and len(out) >= limit:
            break
    return out


def count_hands(cur: Any, profile: str | None = None) -> int:
    """The stored hands the puzzles are looked for in (those analysed and sampled)."""
    where = "" if profile is None else "AND mt.profile = ?"
    return int(cur.execute(
        f"""SELECT count(*) FROM hand_analysis a JOIN matches mt ON mt.match = a.match
            WHERE a.skip IS NULL AND a.samples > 0 {where}""", [] if profile is None else [profile]).fetchone()[0])
