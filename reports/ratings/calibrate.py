"""How well the ratings forecast: log-loss and Brier's score of the held-out
matches against every side alike and the seats' base rates.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import duckdb

# --- calibration ----------------------------------------------------------------------------


def _outcome(places: Sequence[int]) -> list[float]:
    """Each side's share of the win: 1 for the winner, split among sides tied first.

    >>> _outcome([2, 1]), _outcome([1, 1, 3])
    ([0.0, 1.0], [0.5, 0.5, 0.0])
    """
    firsts = [p == 1 for p in places]
    k = sum(firsts)
    return [1.0 / k if f else 0.0 for f in firsts]


def log_loss(p: Sequence[float], y: Sequence[float]) -> float:
    """Cross-entropy of the predicted win chances against the outcome shares.

    >>> round(log_loss([0.5, 0.5], [1.0, 0.0]), 4)
    0.6931
    """
    return -sum(yi * math.log(min(max(pi, 1e-15), 1.0)) for pi, yi in zip(p, y, strict=True) if yi)


def brier(p: Sequence[float], y: Sequence[float]) -> float:
    """Brier's score over all sides, sum of (p - y)^2 (for two sides twice the
    one-sided score).

    >>> brier([0.5, 0.5], [1.0, 0.0])
    0.5
    """
    return sum((pi - yi) ** 2 for pi, yi in zip(p, y, strict=True))


def calibration(rows: Iterable[tuple[Any, ...]], holdout: float = 0.2) -> dict[str, Any]:
    """How well the ratings predicted the last `holdout` of the matches.

    `rows` are (pos, profile, places, p_all, p_profile) of the rated
    matches. The held-out matches are the last `holdout` of each profile's
    matches in rating order (each profile's share: a profile's tables may
    stop early); each was predicted with the ratings of every match before
    it (rated on as they come: an online forecast), in pool `*`
    (`ratings`) and in its profile's pool (`ratings_profile`). Baselines:
    every side alike (`uniform`, 1/n), and each side's base rate
    (`base_rate`: the share of the profile's earlier matches that side, by
    seat number, won; leading seats may win more). Log-loss and Brier's
    score are averaged per match, over all of them, by number of sides and
    by profile; `reliability` bins the two-sided forecasts of side 0 and
    counts how often it won; `train` is the log-loss of the forecasts of
    the matches before the held-out ones (what a model's parameters may be
    chosen on).
    """
    by_profile: dict[str, list[tuple[Any, ...]]] = {}
    for r in rows:
        if r[2]:  # (a match kept unrated has no places)
            by_profile.setdefault(r[1], []).append(r)
    groups: dict[str, dict[str, list[float]]] = {}
    bins = [[0, 0.0, 0.0] for _ in range(10)]  # matches, sum of p, wins
    train: list[float] = []
    total = held = 0
    for profile, got in sorted(by_profile.items()):
        got.sort(key=lambda r: r[0])
        cut = len(got) - int(round(len(got) * holdout))
        total += len(got)
        held += len(got) - cut
        won: dict[int, list[float]] = {}
        seen: dict[int, int] = {}
        for _, _, places, p_all, _ in got[:cut]:
            k = len(places)
            y = _outcome(places)
            train.append(log_loss(p_all, y))
            acc = won.setdefault(k, [0.0] * k)
            for s, ys in enumerate(y):
                acc[s] += ys
            seen[k] = seen.get(k, 0) + 1
        for _, _, places, p_all, p_profile in got[cut:]:
            k = len(places)
            y = _outcome(places)
            # add-one smoothing: no side is ever certain to lose
            base = [(w + 1.0 / k) / (seen[k] + 1.0) for w in won[k]] if k in won else [1.0 / k] * k
            forecasts = {"ratings": p_all, "ratings_profile": p_profile, "uniform": [1.0 / k] * k,
                         "base_rate": base}
            for g in ("all", f"{k} sides", f"profile {profile}"):
                sums = groups.setdefault(g, {})
                for name, p in forecasts.items():
                    sums.setdefault(f"{name}_log_loss", []).append(log_loss(p, y))
                    sums.setdefault(f"{name}_brier", []).append(brier(p, y))
            if k == 2:
                b = bins[min(int(p_all[0] * 10), 9)]
                b[0] += 1
                b[1] += p_all[0]
                b[2] += y[0]
    out: dict[str, Any] = {
        "matches": total, "held_out": held, "holdout": holdout,
        "train": {"matches": len(train), "ratings_log_loss": round(sum(train) / len(train), 4) if train else None},
        "groups": {},
    }
    for g, sums in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        n = len(next(iter(sums.values())))
        out["groups"][g] = {"matches": n, **{name: round(sum(v) / n, 4) for name, v in sums.items()}}
    out["reliability"] = [
        {"bin": f"{i / 10:.1f}-{(i + 1) / 10:.1f}", "matches": m, "predicted": round(sp / m, 3),
         "observed": round(w / m, 3)}
        for i, (m, sp, w) in enumerate(bins) if m
    ]
    return out


def store_calibration(cur: duckdb.DuckDBPyConnection, holdout: float = 0.2,
                      profile: str | None = None) -> dict[str, Any]:
    """`calibration` of the store's ratings (rating_matches)."""
    where, params = ("WHERE profile = ?", [profile]) if profile else ("", [])
    rows = cur.execute(
        f"SELECT pos, profile, places, p_all, p_profile FROM rating_matches {where} ORDER BY pos", params
    ).fetchall()
    return calibration(rows, holdout)
