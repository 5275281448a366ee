"""The numbers behind the fairness page's charts (and their JSON twin).

- `qq`: a QQ plot of p-values against the uniform law that fair deals give
  them, on -log10 scales, with a pointwise 95% band for each order
  statistic (the i-th smallest of n uniforms is Beta(i, n - i + 1)). Points
  far above the band are tests (or players) with smaller p-values than
  chance explains; all inside it is what a fair shuffle looks like.
- `tile_seat`: per group of deals, how often each tile was dealt to each
  seat (and left in the stock) against a fair deal's count. Each deal puts
  a tile in column c with probability size_c / T, independently from deal
  to deal, so a cell's count is Binomial(n, p_c) and
  z = (observed - n p_c) / sqrt(n p_c (1 - p_c)) is exactly standardized:
  about N(0, 1) per cell under fair deals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from replay.tiles import tile_name

from .battery import HAND, Audit, DealGroup, DealWindow, LuckReport, _position_counts


def qq(named: Sequence[tuple[str, float]]) -> dict[str, Any]:
    """QQ points of the p-values `named` (name, p), smallest p first.

    >>> q = qq([("a", 0.5), ("b", 0.01)])
    >>> [p["name"] for p in q["points"]], q["points"][0]["expected"]
    (['b', 'a'], 0.25)
    """
    ps = sorted(((max(float(p), 1e-300), name) for name, p in named if p is not None and not math.isnan(p)))
    n = len(ps)
    i = np.arange(1, n + 1)
    lo = stats.beta.ppf(0.025, i, n - i + 1) if n else np.array([])
    hi = stats.beta.ppf(0.975, i, n - i + 1) if n else np.array([])
    return {
        "n": n,
        "points": [
            {"name": name, "p": p, "expected": round((k + 0.5) / n, 6),
             "band": [float(lo[k]), float(hi[k])]}
            for k, (p, name) in enumerate(ps)
        ],
    }


def tile_seat(g: DealGroup) -> dict[str, Any]:
    """The tile x column counts of a group of deals against fair ones (see the module)."""
    spec = g.spec
    pos = _position_counts(g)
    sizes = np.array([HAND] * spec.players + ([spec.stock] if spec.stock else []), dtype=float)
    col_of = np.minimum(np.arange(spec.n_tiles) // HAND, len(sizes) - 1)
    observed = np.stack([pos[:, col_of == c].sum(axis=1) for c in range(len(sizes))], axis=1)
    p = sizes / spec.n_tiles
    expected = g.n * p
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (observed - expected) / np.sqrt(g.n * p * (1 - p))
    return {
        "group": spec.kind,
        "deals": g.n,
        "tiles": [tile_name(t) for t in spec.tiles],
        "columns": list(spec.columns),
        "expected": [round(float(e), 3) for e in expected],  # per column, the same for every tile
        "observed": observed.astype(int).tolist(),  # [tile][column]
        "z": np.nan_to_num(z).round(3).tolist(),
    }


def fairness_charts(deals: DealWindow, battery: Audit | None, luck: LuckReport | None) -> dict[str, Any]:
    """The charts' numbers for a window: the QQ plots of the battery's tests
    (the whole window) and of the players' luck tests, and the tile x seat
    table of every group."""
    tests = [(t.name, t.p_value) for t in battery.full.tests] if battery else []
    players: list[tuple[str, float]] = []
    for r in luck.players if luck else ():
        if r.pips_p is not None:
            players.append((f"{r.player} pips", r.pips_p))
        if r.doubles_p is not None:
            players.append((f"{r.player} doubles", r.doubles_p))
    return {
        "qq": {"battery": qq(tests), "luck": qq(players)},
        "tile_seat": [tile_seat(g) for g in deals.groups if g.n],
    }
