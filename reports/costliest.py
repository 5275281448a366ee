"""A player's costliest moves across all their matches.

Every decision the player made (the seat they held in that hand, seat
changes resolved as the player report resolves them) that lost points
against the best move: by the grade on what the mover could know where the
hand is sampled, else under perfect information (`graded` says which).
Filters: profile, phase (by the tiles on the line before the move, as the
skill report counts phases) and class; sorted by points lost (the default),
by the perfect-information loss, or by date. Analysis rows exist for
finished hands only, so nothing of a hand still on is listed.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from reports.skill import seat_ranges

__all__ = ["PHASES", "SORTS", "costliest"]

#: The phases of a hand, by the tiles on the line before the move.
PHASES: Final = {"opening": "on_line = 0", "early": "on_line BETWEEN 1 AND 7",
                 "middle": "on_line BETWEEN 8 AND 15", "late": "on_line >= 16"}
_PHASE_OF: Final = ("CASE WHEN on_line = 0 THEN 'opening' WHEN on_line < 8 THEN 'early' "
                    "WHEN on_line < 16 THEN 'middle' ELSE 'late' END")
#: sort key -> (column, first order)
SORTS: Final = {"loss": ("loss", "desc"), "dd_loss": ("a.dd_loss", "desc"), "date": ("h.started", "desc")}

Sort = Literal["loss", "dd_loss", "date"]


def costliest(cur: Any, player: str, *, profile: str | None = None, phase: str | None = None,
              cls: str | None = None, sort: str | None = None, order: str | None = None,
              limit: int = 50, offset: int = 0) -> dict[str, Any]:  # fmt: skip
    """The player's decisions that lost points, worst first (or as sorted),
    one page of them, with how many there are in all."""
    where = ["NOT a.forced", "coalesce(a.pimc_loss, a.dd_loss) > 0"]
    args: list[Any] = [player]
    if profile:
        where.append("mt.profile = ?")
        args.append(profile)
    if phase:
        where.append(PHASES[phase].replace("on_line", "a.on_line"))
    if cls:
        where.append("a.class = ?")
        args.append(cls)
    col, first = SORTS.get(sort or "loss", SORTS["loss"])
    way = (order or first).upper()
    sql = f"""
        WITH r AS ({seat_ranges("WHERE s.player = ?")})
        SELECT a.match, a.hand, a.ply, a.seat, a.played, a.class, mt.profile,
               {_PHASE_OF.replace("on_line", "a.on_line")} AS phase,
               CASE WHEN a.pimc_loss IS NULL THEN 'perfect information' ELSE 'could know' END AS graded,
               round(coalesce(a.pimc_loss, a.dd_loss), 2) AS loss, a.dd_loss, round(a.pimc_loss, 2) AS pimc_loss,
               CASE WHEN a.pimc_loss IS NULL THEN list_filter(a.alternatives, lambda x: x.dd = a.dd_best)[1].move
                    ELSE list_filter(a.alternatives, lambda x: x.pimc = a.pimc_best)[1].move END AS best,
               strftime(h.started, '%Y-%m-%d') AS day,
               count(*) OVER () AS total
        FROM move_analysis a
        JOIN r ON r.match = a.match AND r.seat = a.seat AND a.hand >= r.from_hand AND a.hand < r.to_hand
        JOIN matches mt ON mt.match = a.match
        JOIN hands h ON h.match = a.match AND h.hand = a.hand
        WHERE {" AND ".join(where)}
        ORDER BY {col} {way} NULLS LAST, a.match, a.hand, a.ply
        LIMIT ? OFFSET ?"""
    rows = cur.execute(sql, [*args, limit, offset]).fetchall()
    names = [d[0] for d in cur.description]
    out = [dict(zip(names, r, strict=True)) for r in rows]
    total = out[0].pop("total") if out else 0
    for o in out[1:]:
        o.pop("total")
    return {"player": player, "total": total, "moves": out,
            "filters": {"profile": profile, "phase": phase, "class": cls},
            "sort": sort or "loss", "order": (order or first)}
