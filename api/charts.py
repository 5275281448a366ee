"""Charts as inline SVG: the fairness page's QQ plot of p-values and tile x
seat heat map (their numbers: `reports.charts`, in the JSON twin), and a
player's trend over time.

Numbers and tile names only enter these drawings; every label is escaped all
the same (`replay_model.esc`).
"""

from __future__ import annotations

import math
from typing import Any

from api.replay_model import esc

__all__ = ["cumulative_svg", "heat_svg", "qq_svg", "trend_svg", "z_colour"]


def _lg(p: float) -> float:
    return -math.log10(max(p, 1e-300))


def qq_svg(series: dict[str, dict[str, Any] | None], width: int = 420, height: int = 320) -> str:
    """p-values against the uniform law, -log10 on both axes: one series of
    dots per family (the battery's tests, the players' luck), each with its
    95% band (a family without one is left out). Dots above the band: smaller
    p-values than chance explains."""
    named = [(k, v) for k, v in series.items() if v and v.get("n")]
    if not named:
        return '<p class="muted">no p-value to plot</p>'
    pad_l, pad_r, pad_t, pad_b = 44, 14, 14, 40
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    pts = [pt for _, v in named for pt in v["points"]]
    top = max([_lg(pt["expected"]) for pt in pts] + [_lg(pt["p"]) for pt in pts] + [_lg(pt["band"][0]) for pt in pts])
    top = max(2.0, math.ceil(min(top, 12.0)))
    xtop = max(1.0, math.ceil(max(_lg(pt["expected"]) for pt in pts)))

    def x(v: float) -> float:
        return pad_l + min(v, xtop) / xtop * w

    def y(v: float) -> float:
        return pad_t + h - min(v, top) / top * h

    out = [
        f'<svg class="qqsvg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        'aria-label="QQ plot of p-values against the uniform law">',
        f'<line x1="{pad_l}" y1="{pad_t + h}" x2="{pad_l + w}" y2="{pad_t + h}" class="axis"/>',
        f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + h}" class="axis"/>',
        f'<line x1="{x(0):.1f}" y1="{y(0):.1f}" x2="{x(xtop):.1f}" y2="{y(xtop):.1f}" class="diag"/>',
    ]
    for k in range(0, int(top) + 1, max(1, int(top) // 6)):
        out.append(f'<text x="{pad_l - 6}" y="{y(k) + 4:.1f}" class="ax" text-anchor="end">{k}</text>')
    for k in range(0, int(xtop) + 1):
        out.append(f'<text x="{x(k):.1f}" y="{pad_t + h + 14}" class="ax" text-anchor="middle">{k}</text>')
    out.append(f'<text x="{pad_l + w / 2:.1f}" y="{height - 6}" class="ax" text-anchor="middle">'
               "expected −log10 p (uniform)</text>")
    out.append(f'<text x="12" y="{pad_t + h / 2:.1f}" class="ax" text-anchor="middle" '
               f'transform="rotate(-90 12 {pad_t + h / 2:.1f})">observed −log10 p</text>')
    for cls, (_, v) in zip(("s0", "s1"), named, strict=False):
        band = v["points"]
        upper = " ".join(f"{x(_lg(pt['expected'])):.1f},{y(_lg(pt['band'][0])):.1f}" for pt in band)
        lower = " ".join(f"{x(_lg(pt['expected'])):.1f},{y(_lg(pt['band'][1])):.1f}" for pt in reversed(band))
        out.append(f'<polygon points="{upper} {lower}" class="band {cls}"/>')
    for cls, (_, v) in zip(("s0", "s1"), named, strict=False):
        for pt in v["points"]:
            out.append(
                f'<circle cx="{x(_lg(pt["expected"])):.1f}" cy="{y(_lg(pt["p"])):.1f}" r="3.2" class="dot {cls}">'
                f'<title>{esc(pt["name"])}: p = {pt["p"]:.3g} (uniform: {pt["expected"]:.3g})</title></circle>'
            )
    out.append("</svg>")
    return "".join(out)


def z_colour(z: float) -> str:
    """A cell's fill: white at 0, deeper blue below and red above, full at |z| = 4.

    >>> z_colour(0.0), z_colour(4.0), z_colour(-9.0)
    ('#ffffff', '#b42318', '#1d4ed8')
    """
    t = max(-1.0, min(1.0, z / 4.0))
    far = (0xB4, 0x23, 0x18) if t > 0 else (0x1D, 0x4E, 0xD8)
    a = abs(t)
    r, g, b = (round(255 + (c - 255) * a) for c in far)
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_svg(table: dict[str, Any], cell: int = 22) -> str:
    """Tiles across, seats (and the stock) down; each cell coloured by its z."""
    tiles, cols = table["tiles"], table["columns"]
    pad_l, pad_t = 64, 44
    width, height = pad_l + cell * len(tiles) + 8, pad_t + cell * len(cols) + 8
    out = [
        f'<svg class="heatsvg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="tiles dealt to each seat against fair deals, group {esc(table["group"])}">'
    ]
    for i, t in enumerate(tiles):
        cx = pad_l + i * cell + cell / 2
        out.append(f'<text x="{cx:.1f}" y="{pad_t - 8}" class="ax" text-anchor="start" '
                   f'transform="rotate(-60 {cx:.1f} {pad_t - 8})">[{esc(t[0])}|{esc(t[1])}]</text>')
    for c, col in enumerate(cols):
        out.append(f'<text x="{pad_l - 6}" y="{pad_t + c * cell + cell / 2 + 4:.1f}" class="ax" '
                   f'text-anchor="end">{esc(col)}</text>')
        for i, t in enumerate(tiles):
            z = table["z"][i][c]
            out.append(
                f'<rect x="{pad_l + i * cell}" y="{pad_t + c * cell}" width="{cell - 1}" height="{cell - 1}" '
                f'fill="{z_colour(z)}"><title>[{esc(t[0])}|{esc(t[1])}] at {esc(col)}: '
                f'{table["observed"][i][c]} dealt, {table["expected"][c]:g} expected, z = {z:+.2f}</title></rect>'
            )
    out.append("</svg>")
    return "".join(out)


def cumulative_svg(cum: dict[str, list[Any]], width: int = 960, height: int = 240) -> str:
    """Points for and against added up hand by hand (`reports.player`'s
    "cumulative"), and their difference."""
    n = len(cum.get("hands") or [])
    if not n:
        return '<p class="muted">no hand played</p>'
    pad_l, pad_r, pad_t, pad_b = 48, 14, 12, 30
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    pf, pa, hands = cum["points_for"], cum["points_against"], cum["hands"]
    net = [a - b for a, b in zip(pf, pa, strict=True)]
    lo: float = min([0, *net])
    hi: float = max([1, *pf, *pa])
    span = hi - lo or 1
    last = hands[-1] or 1

    def x(k: int) -> float:
        return pad_l + (hands[k] / last * w if last > 1 else w / 2)

    def y(v: float) -> float:
        return pad_t + h - (v - lo) / span * h

    def line(vals: list[int], cls: str) -> str:
        pts = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in enumerate(vals))
        return f'<polyline points="{pts}" class="{cls}"/>'

    days = cum.get("days") or []
    out = [
        f'<svg class="cumsvg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        'aria-label="points for and against, added up hand by hand">',
        f'<line x1="{pad_l}" y1="{y(0):.1f}" x2="{pad_l + w}" y2="{y(0):.1f}" class="axis"/>',
        line(pf, "pf"), line(pa, "pa"), line(net, "net"),
        f'<text x="{pad_l - 6}" y="{y(hi) + 4:.1f}" class="ax" text-anchor="end">{hi}</text>',
        f'<text x="{pad_l - 6}" y="{y(0) + 4:.1f}" class="ax" text-anchor="end">0</text>',
    ]
    if lo < 0:
        out.append(f'<text x="{pad_l - 6}" y="{y(lo) + 4:.1f}" class="ax" text-anchor="end">{lo}</text>')
    out.append(f'<text x="{pad_l}" y="{height - 14}" class="ax">hand 1{" · " + esc(days[0]) if days and days[0] else ""}</text>')
    out.append(f'<text x="{pad_l + w}" y="{height - 14}" class="ax" text-anchor="end">hand {last}'
               f'{" · " + esc(days[-1]) if days and days[-1] else ""}</text>')
    out.append(f'<text x="{pad_l + w / 2:.1f}" y="{height - 2}" class="ax" text-anchor="middle">hands played</text>')
    for k in range(n):
        out.append(f'<circle cx="{x(k):.1f}" cy="{y(pf[k]):.1f}" r="6" class="hit"><title>after hand {hands[k]}'
                   f'{" (" + esc(days[k]) + ")" if k < len(days) and days[k] else ""}: {pf[k]} for, {pa[k]} against, '
                   f'{net[k]:+d} net</title></circle>')
    out.append("</svg>")
    return "".join(out)


def trend_svg(points: list[tuple[str, float, float]], width: int = 640, height: int = 160) -> str:
    """A small chart of (label, points per hand, win rate) over time buckets."""
    if not points:
        return '<p class="muted">no hands yet</p>'
    pad_l, pad_r, pad_t, pad_b = 40, 40, 12, 26
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    ys = [p[1] for p in points]
    lo, hi = min(min(ys), 0.0), max(max(ys), 1.0)
    span = hi - lo or 1.0
    n = len(points)

    def px(i: int) -> float:
        return pad_l + (w * i / (n - 1) if n > 1 else w / 2)

    def py(v: float) -> float:
        return pad_t + h - (v - lo) / span * h

    def pw(v: float) -> float:
        return pad_t + h - v * h

    ppp = " ".join(f"{px(i):.1f},{py(p[1]):.1f}" for i, p in enumerate(points))
    win = " ".join(f"{px(i):.1f},{pw(p[2]):.1f}" for i, p in enumerate(points))
    zero = py(0.0)
    parts = [
        f'<svg class="trend" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        'aria-label="points per hand and win rate over time">',
        f'<line x1="{pad_l}" y1="{zero:.1f}" x2="{width - pad_r}" y2="{zero:.1f}" class="axis"/>',
        f'<polyline points="{ppp}" class="ppp"/>',
        f'<polyline points="{win}" class="win"/>',
        f'<text x="4" y="{pad_t + 8}" class="ax">{hi:.0f}</text>',
        f'<text x="4" y="{pad_t + h}" class="ax">{lo:.0f}</text>',
        f'<text x="{width - pad_r + 4}" y="{pad_t + 8}" class="ax">100%</text>',
        f'<text x="{width - pad_r + 4}" y="{pad_t + h}" class="ax">0%</text>',
        f'<text x="{pad_l}" y="{height - 6}" class="ax">{esc(points[0][0])}</text>',
        f'<text x="{width - pad_r}" y="{height - 6}" class="ax" text-anchor="end">{esc(points[-1][0])}</text>',
    ]
    for i, p in enumerate(points):
        parts.append(
            f'<circle cx="{px(i):.1f}" cy="{py(p[1]):.1f}" r="2.5" class="ppp-dot">'
            f"<title>{esc(p[0])}: {p[1]:.1f} points per hand, {p[2]:.0%} won</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)
