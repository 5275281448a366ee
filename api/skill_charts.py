"""The player insights' charts as inline SVG (their numbers: reports.skill, in the JSON twins).

- :func:`luck_svg`: the real points and the luck-adjusted points added up
  match by match (PokerTracker's "EV line"), and the luck between them;
- :func:`phase_svg`: accuracy by phase of the hand, both grades, as bars;
- :func:`months_svg`: accuracy month by month, both grades, with the
  decisions behind each month.

Every label from a log is escaped (`replay_model.esc`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from api.replay_model import esc

__all__ = ["luck_svg", "months_svg", "phase_svg"]


def _frame(width: int, height: int, cls: str, label: str, links: bool = False) -> str:
    # a chart holding links is a group of them, not an image (an image's parts are not focusable)
    return (f'<svg class="skillsvg {cls}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="{"group" if links else "img"}" aria-label="{esc(label)}">')  # fmt: skip


def _percent_grid(left: float, w: float, y: Callable[[float], float]) -> list[str]:
    """Lines and labels at 0, 50 and 100%."""
    out = []
    for g in (0, 50, 100):
        out.append(f'<line x1="{left}" y1="{y(g):.1f}" x2="{left + w}" y2="{y(g):.1f}" class="grid"/>')
        out.append(f'<text x="{left - 4}" y="{y(g) + 4:.1f}" class="ax" text-anchor="end">{g}%</text>')
    return out


def luck_svg(line: dict[str, list[Any]], width: int = 960, height: int = 240) -> str:
    """Points (solid), luck-adjusted points (dashed) and luck (thin) added up
    match by match, by hands played.

    >>> svg = luck_svg({"hands": [3, 7], "points": [10, -4], "adjusted": [6.0, 1.0], "luck": [4.0, -5.0],
    ...                 "matches": ["m<1>", "m2"], "days": [None, "2026-11-02"]})
    >>> svg.count("<polyline"), "m&lt;1&gt;" in svg, 'href="/matches/m%3C1%3E"' in svg
    (3, True, True)
    """
    hands = line.get("hands") or []
    n = len(hands)
    if not n:
        return '<p class="muted">no analysed hand yet</p>'
    pad_l, pad_r, pad_t, pad_b = 52, 14, 12, 30
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    series = {"points": line["points"], "adjusted": line["adjusted"], "luck": line["luck"]}
    lo: float = min(0.0, *(min(v) for v in series.values()))
    hi: float = max(1.0, *(max(v) for v in series.values()))
    span = hi - lo or 1.0
    last = hands[-1] or 1
    xs = [0.0, *(pad_l + k / last * w for k in hands)]
    xs[0] = pad_l

    def y(v: float) -> float:
        return pad_t + h - (v - lo) / span * h

    out = [
        _frame(width, height, "luck", "real and luck-adjusted points, added up match by match", links=True),
        f'<line x1="{pad_l}" y1="{y(0):.1f}" x2="{pad_l + w}" y2="{y(0):.1f}" class="axis"/>',
    ]
    for cls, vals in series.items():
        pts = " ".join(f"{xs[i]:.1f},{y(v):.1f}" for i, v in enumerate([0.0, *vals]))
        out.append(f'<polyline points="{pts}" class="{cls}"/>')
    out.append(f'<text x="{pad_l - 6}" y="{y(hi) + 4:.1f}" class="ax" text-anchor="end">{hi:.0f}</text>')
    out.append(f'<text x="{pad_l - 6}" y="{y(0) + 4:.1f}" class="ax" text-anchor="end">0</text>')
    if lo < 0:
        out.append(f'<text x="{pad_l - 6}" y="{y(lo) + 4:.1f}" class="ax" text-anchor="end">{lo:.0f}</text>')
    days = line.get("days") or []
    out.append(f'<text x="{pad_l}" y="{height - 14}" class="ax">hand 1'
               f'{" · " + esc(days[0]) if days and days[0] else ""}</text>')  # fmt: skip
    out.append(f'<text x="{pad_l + w}" y="{height - 14}" class="ax" text-anchor="end">hand {last}'
               f'{" · " + esc(days[-1]) if days and days[-1] else ""}</text>')  # fmt: skip
    out.append(f'<text x="{pad_l + w / 2:.1f}" y="{height - 2}" class="ax" text-anchor="middle">hands analysed</text>')
    # each point links to its match (the luck line's drill-down); no tab stop each, the list of
    # matches is one link away
    for k in range(n):
        out.append(
            f'<a href="/matches/{esc(quote(str(line["matches"][k]), safe=""))}" tabindex="-1">'
            f'<circle cx="{xs[k + 1]:.1f}" cy="{y(line["points"][k]):.1f}" r="6" class="hit"><title>'
            f'after {esc(line["matches"][k])} (hand {hands[k]}): {line["points"][k]:+d} points, '
            f'{line["adjusted"][k]:+.1f} luck-adjusted, luck {line["luck"][k]:+.1f}</title></circle></a>'
        )
    out.append("</svg>")
    return "".join(out)


def phase_svg(phases: Sequence[dict[str, Any]], width: int = 460, height: int = 200,
              link: Callable[[str], str] | None = None, known: bool = True) -> str:
    """Accuracy by phase of the hand: a bar a grade (what the player could
    know; perfect information), 0 to 100%. With `link`, each phase's bars and
    label link to `link(phase)` (its graded moves); without `known`, the bar
    of the grade on what the player could know is left out (not graded yet).

    >>> svg = phase_svg([{"phase": "lead", "tiles_on_line": "0", "decisions": 3, "accuracy": 50.0,
    ...                   "accuracy_dd": 60.0}], link=lambda ph: f"/moves?phase={ph}", known=False)
    >>> 'href="/moves?phase=lead"' in svg, 'class="known"' in svg, 'role="group"' in svg
    (True, False, True)
    """
    if not any(p["decisions"] for p in phases):
        return '<p class="muted">no analysed decision yet</p>'
    pad_l, pad_r, pad_t, pad_b = 36, 8, 10, 40
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    slot = w / len(phases)
    bar = slot * 0.34

    def y(v: float) -> float:
        return pad_t + h - v / 100 * h

    out = [_frame(width, height, "phase", "accuracy by phase of the hand", links=link is not None),
           *_percent_grid(pad_l, w, y)]
    for i, p in enumerate(phases):
        x0 = pad_l + i * slot + slot * 0.14
        if link is not None:
            out.append(f'<a href="{esc(link(p["phase"]))}" aria-label="graded moves of the {esc(p["phase"])} phase">')
        for j, (key, cls) in enumerate((("accuracy", "known"), ("accuracy_dd", "perfect"))):
            v = p.get(key)
            if v is None or (cls == "known" and not known):
                continue
            out.append(
                f'<rect x="{x0 + j * bar:.1f}" y="{y(v):.1f}" width="{bar - 2:.1f}" height="{y(0) - y(v):.1f}" '
                f'class="{cls}"><title>{esc(p["phase"])} ({esc(p["tiles_on_line"])} tiles on the line): '
                f'{v:.1f}% {"on what the player could know" if cls == "known" else "under perfect information"}, '
                f'{p["decisions"]} decisions</title></rect>'
            )
        cx = pad_l + i * slot + slot / 2
        out.append(f'<text x="{cx:.1f}" y="{pad_t + h + 14}" class="ax" text-anchor="middle">{esc(p["phase"])}</text>')
        out.append(f'<text x="{cx:.1f}" y="{pad_t + h + 27}" class="ax" text-anchor="middle">'
                   f'{p["decisions"]} decisions</text>')  # fmt: skip
        if link is not None:
            out.append("</a>")
    out.append("</svg>")
    return "".join(out)


def months_svg(months: Sequence[dict[str, Any]], width: int = 460, height: int = 200, known: bool = True) -> str:
    """Accuracy month by month, both grades (without `known`, perfect
    information only); a dot's size grows with its decisions."""
    pts = [m for m in months if m.get("accuracy") is not None or m.get("accuracy_dd") is not None]
    if not pts:
        return '<p class="muted">no analysed decision yet</p>'
    pad_l, pad_r, pad_t, pad_b = 36, 12, 10, 28
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    n = len(pts)
    most = max(m["decisions"] for m in pts) or 1

    def x(i: int) -> float:
        return pad_l + (w * i / (n - 1) if n > 1 else w / 2)

    def y(v: float) -> float:
        return pad_t + h - v / 100 * h

    out = [_frame(width, height, "months", "accuracy month by month"), *_percent_grid(pad_l, w, y)]
    for key, cls in (("accuracy_dd", "perfect"), ("accuracy", "known"))[: 2 if known else 1]:
        got = [(i, m[key]) for i, m in enumerate(pts) if m.get(key) is not None]
        if len(got) > 1:
            out.append(f'<polyline points="{" ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in got)}" class="{cls}"/>')
        for i, v in got:
            r = 2.5 + 3.5 * (pts[i]["decisions"] / most) ** 0.5
            out.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="{r:.1f}" class="{cls}"><title>'
                       f'{esc(pts[i]["month"])}: {v:.1f}% ({pts[i]["decisions"]} decisions)</title></circle>')  # fmt: skip
    out.append(f'<text x="{pad_l}" y="{height - 8}" class="ax">{esc(pts[0]["month"])}</text>')
    if n > 1:
        out.append(f'<text x="{pad_l + w}" y="{height - 8}" class="ax" text-anchor="end">{esc(pts[-1]["month"])}</text>')
    out.append("</svg>")
    return "".join(out)
