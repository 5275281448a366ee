"""The statistical fairness battery over a window of deals.

A deal is its deck order (seat s holds positions 7s..7s+6, the rest is the
stock in order). Under a fair shuffle every order is equally likely, so the
battery compares the window against exact expectations from
``reports.exact``. Everything is vectorized over deals (bincount, gathers);
the only Python loops run over tiles, positions, seats or tests.

Two families, each Holm-corrected at family-wise error ``alpha`` (0.01):

- ``run_battery``: deal-level tests per group of deals (4p, 3p, 2p,
  3p_aside) -- tile x seat, tile x position, doubles per hand, 5+ doubles,
  hand pips, seat pips, serial dependence, repeated deals.
- ``player_luck``: per player, mean pips and mean doubles dealt per hand.

Verdicts: PASS; WEAK (some Holm-adjusted p < alpha); FAIL (some adjusted
p < 1e-6, or WEAK on two disjoint windows -- see ``audit``/``escalate``).
docs/fairness.md explains every test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any, Final, Literal

import numpy as np
import polars as pl
from scipy import stats

from replay.tiles import IS_DOUBLE, N_TILES, PIPS, tile_name

from . import exact

Verdict = Literal["PASS", "WEAK", "FAIL"]
ALPHA: Final = 0.01
FAIL_P: Final = 1e-6
MIN_EXPECTED: Final = 5.0  # merge GOF bins until every expected count reaches this
HAND: Final = exact.HAND_SIZE
_RANK: Final[dict[str, int]] = {"PASS": 0, "WEAK": 1, "FAIL": 2}

_PIPS = np.array(PIPS, dtype=np.int16)
_DOUBLE = np.array(IS_DOUBLE, dtype=np.int8)
# Fixed odd multipliers for a 64-bit hash of a deal's canonical form (candidates verified exactly).
_HASH_MULT = np.random.default_rng(0x0D0111).integers(1, 2**63, size=N_TILES, dtype=np.uint64) | 1


# --------------------------------------------------------------------------- input


@dataclass(frozen=True)
class GroupSpec:
    """One kind of deal: player count and the tiles dealt."""

    kind: str
    players: int
    tiles: tuple[int, ...]

    @property
    def n_tiles(self) -> int:
        return len(self.tiles)

    @property
    def stock(self) -> int:
        return self.n_tiles - HAND * self.players

    @property
    def has_doubles(self) -> bool:
        return any(IS_DOUBLE[t] for t in self.tiles)

    @property
    def columns(self) -> tuple[str, ...]:
        """Tile x seat columns: the seats, then the stock if there is one."""
        return tuple(f"seat{s}" for s in range(self.players)) + (("stock",) if self.stock else ())


SPECS: Final[dict[str, GroupSpec]] = {
    "4p": GroupSpec("4p", 4, exact.ALL_TILES),
    "3p": GroupSpec("3p", 3, exact.ALL_TILES),
    "2p": GroupSpec("2p", 2, exact.ALL_TILES),
    "3p_aside": GroupSpec("3p_aside", 3, exact.NON_DOUBLES),
}


def spec_for(players: int, deck_len: int) -> GroupSpec:
    """The group of a deal with ``players`` seats and a deck of ``deck_len`` tiles.

    >>> spec_for(3, 21).kind, spec_for(2, 28).stock
    ('3p_aside', 14)
    """
    for spec in SPECS.values():
        if spec.players == players and spec.n_tiles == deck_len:
            return spec
    raise ValueError(f"no deal group for {players} players and {deck_len} tiles")


@dataclass(frozen=True, eq=False)
class DealGroup:
    """Deals of one kind, in window order.

    deck: (n, T) int8 tile ids; table_idx: (n,) table of each deal;
    player_idx: (n, players) player of each seat; order: (n,) position of
    the deal in the whole window (deal order, used to split the window).
    """

    spec: GroupSpec
    deck: np.ndarray
    table_idx: np.ndarray
    player_idx: np.ndarray
    order: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.deck)
        if self.deck.shape != (n, self.spec.n_tiles):
            raise ValueError(f"deck shape {self.deck.shape} does not fit group {self.spec.kind}")
        if self.table_idx.shape != (n,) or self.order.shape != (n,):
            raise ValueError("table_idx and order need one entry per deal")
        if self.player_idx.shape != (n, self.spec.players):
            raise ValueError("player_idx needs one entry per deal and seat")

    @property
    def n(self) -> int:
        return len(self.deck)

    def take(self, rows: np.ndarray) -> DealGroup:
        return DealGroup(
            self.spec,
            self.deck[rows],
            self.table_idx[rows],
            self.player_idx[rows],
            self.order[rows],
        )


@dataclass(frozen=True, eq=False)
class DealWindow:
    """A window of deals, grouped by kind, with the ids behind the indexes."""

    groups: tuple[DealGroup, ...]
    player_ids: tuple[str, ...] = ()
    table_ids: tuple[str, ...] = ()

    @property
    def n_deals(self) -> int:
        return sum(g.n for g in self.groups)

    @classmethod
    def from_decks(
        cls,
        deck: np.ndarray,
        players: int = 4,
        table_idx: np.ndarray | None = None,
        player_idx: np.ndarray | None = None,
    ) -> DealWindow:
        """One group from arrays; default: one table, players 0..players-1 at seats 0.."""
        deck = np.asarray(deck, dtype=np.int8)
        n = len(deck)
        spec = spec_for(players, deck.shape[1])
        if table_idx is None:
            table_idx = np.zeros(n, dtype=np.int64)
        if player_idx is None:
            player_idx = np.broadcast_to(np.arange(players, dtype=np.int64), (n, players))
        group = DealGroup(
            spec, deck, np.asarray(table_idx), np.asarray(player_idx), np.arange(n, dtype=np.int64)
        )
        n_players = int(group.player_idx.max()) + 1 if n else 0
        n_tables = int(group.table_idx.max()) + 1 if n else 0
        return cls(
            (group,),
            tuple(str(p) for p in range(n_players)),
            tuple(str(t) for t in range(n_tables)),
        )

    @classmethod
    def from_frame(cls, frame: pl.DataFrame) -> DealWindow:
        """From the store's frame: columns table, match, hand, players, deck, seat_players.

        Rows must be in deal order (consecutive deals of a table in the order
        they were dealt); ``deck`` is the list of tile ids, ``seat_players``
        the player id at each seat. Players and tables are indexed in order
        of first appearance.
        """
        flat_players = frame.get_column("seat_players").explode().cast(pl.String)
        player_ids = flat_players.unique(maintain_order=True)
        player_codes = flat_players.replace_strict(
            player_ids, np.arange(len(player_ids)), return_dtype=pl.Int64
        ).to_numpy()
        tables = frame.get_column("table").cast(pl.String)
        table_ids = tables.unique(maintain_order=True)
        table_codes = tables.replace_strict(
            table_ids, np.arange(len(table_ids)), return_dtype=pl.Int64
        ).to_numpy()
        n_seats = frame.get_column("players").to_numpy().astype(np.int64)
        seat_start = np.concatenate([[0], np.cumsum(n_seats)[:-1]])
        if len(player_codes) != n_seats.sum():
            raise ValueError("seat_players must list one player per seat")
        deck_len = frame.get_column("deck").list.len().to_numpy()
        groups = []
        for spec in SPECS.values():
            rows = np.flatnonzero((n_seats == spec.players) & (deck_len == spec.n_tiles))
            if not len(rows):
                continue
            sub = frame.get_column("deck").gather(rows)
            deck = sub.list.to_array(spec.n_tiles).to_numpy().astype(np.int8)
            seats = seat_start[rows, None] + np.arange(spec.players)
            groups.append(
                DealGroup(spec, deck, table_codes[rows], player_codes[seats], rows.astype(np.int64))
            )
        covered = sum(g.n for g in groups)
        if covered != frame.height:
            raise ValueError(f"{frame.height - covered} deals fit no group (players, deck length)")
        return cls(tuple(groups), tuple(player_ids.to_list()), tuple(table_ids.to_list()))

    def split(self) -> tuple[DealWindow, DealWindow]:
        """Two disjoint halves by deal order: the first half of the deals, and the rest."""
        orders = np.sort(np.concatenate([g.order for g in self.groups]))
        cut = orders[len(orders) // 2] if len(orders) else 0
        halves = []
        for first in (True, False):
            parts = []
            for g in self.groups:
                keep = g.order < cut if first else g.order >= cut
                if keep.any():
                    parts.append(g.take(np.flatnonzero(keep)))
            halves.append(DealWindow(tuple(parts), self.player_ids, self.table_ids))
        return halves[0], halves[1]


def validate(window: DealWindow) -> None:
    """Raise ValueError unless every deck is an ordering of its group's tiles."""
    for g in window.groups:
        want = sum(1 << t for t in g.spec.tiles)
        bits = np.left_shift(np.int64(1), g.deck.astype(np.int64))
        if not (
            (np.bitwise_or.reduce(bits, axis=1) == want).all() and (bits.sum(axis=1) == want).all()
        ):
            raise ValueError(f"group {g.spec.kind}: some deck is not a permutation of its tiles")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class TestResult:
    """One hypothesis test. ``df`` may be fractional (second-order corrected tests)."""

    __test__ = False  # not a pytest class

    name: str
    statistic: float
    df: float | None
    p_value: float
    p_adjusted: float
    verdict: Verdict
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Skipped:
    """A test that does not apply to a group, or lacks data."""

    name: str
    reason: str


@dataclass(frozen=True)
class BatteryReport:
    n_deals: int
    groups: dict[str, int]
    tests: tuple[TestResult, ...]
    verdict: Verdict
    alpha: float = ALPHA
    skipped: tuple[Skipped, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PlayerLuck:
    """Deal luck of one player: per-hand means with 95% CIs from the exact variances."""

    player: str
    hands: int
    mean_pips: float
    pips_ci: tuple[float, float]
    pips_z: float
    pips_p: float | None
    pips_p_adjusted: float | None
    doubles_hands: int  # hands that could hold doubles (not doubles_aside)
    mean_doubles: float | None
    doubles_ci: tuple[float, float] | None
    doubles_z: float | None
    doubles_p: float | None
    doubles_p_adjusted: float | None
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LuckReport:
    players: tuple[PlayerLuck, ...]
    flagged: tuple[str, ...]
    verdict: Verdict
    alpha: float
    min_hands: int
    histogram: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Audit:
    """A window's battery, its two halves, and the escalated verdict."""

    full: BatteryReport
    halves: tuple[BatteryReport, BatteryReport]
    verdict: Verdict

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- helpers


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (family-wise error control, any dependence).

    >>> holm([0.01, 0.04, 0.03, 0.005])
    [0.03, 0.06, 0.06, 0.02]
    """
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    idx = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[idx])
    adjusted = np.empty(m)
    adjusted[idx] = np.maximum.accumulate(scaled)
    return [round(float(x), 15) for x in adjusted]


def verdict_of(p_adjusted: float, alpha: float = ALPHA) -> Verdict:
    """PASS / WEAK (adjusted p < alpha) / FAIL (adjusted p < 1e-6)."""
    if p_adjusted < FAIL_P:
        return "FAIL"
    return "WEAK" if p_adjusted < alpha else "PASS"


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    return max(verdicts, key=_RANK.__getitem__, default="PASS")


def escalate(reports: Sequence[BatteryReport]) -> Verdict:
    """Verdict over disjoint windows: FAIL if any FAILs or two are WEAK, else the worst."""
    flagged = [r for r in reports if r.verdict != "PASS"]
    if any(r.verdict == "FAIL" for r in flagged) or len(flagged) >= 2:
        return "FAIL"
    return "WEAK" if flagged else "PASS"


def _merge_bins(expected: np.ndarray, base: np.ndarray, min_expected: float) -> np.ndarray:
    """Map value -> bin: start from ``base`` bins, merge neighbours until expected >= min.

    >>> _merge_bins(np.array([1.0, 9, 9, 2, 1]), np.arange(5), 5.0).tolist()
    [0, 0, 1, 1, 1]
    """
    per_base = np.bincount(base, weights=expected)
    groups: list[int] = []
    acc, label = 0.0, 0
    for e in per_base:
        groups.append(label)
        acc += e
        if acc >= min_expected:
            acc, label = 0.0, label + 1
    out = np.array(groups)
    if acc < min_expected and label > 0:  # short tail: fold into the previous bin
        out[out == label] = label - 1
    bins: np.ndarray = out[base]
    return bins


def _clustered_gof(
    values: np.ndarray, single: np.ndarray, pair: np.ndarray, base: np.ndarray
) -> tuple[float, float, float, dict[str, Any]]:
    """Goodness of fit of per-hand values when hands cluster in deals.

    values: (n, S) value of each hand; single[v]: hands with value v;
    pair[v, w]: ordered disjoint hand pairs with values (v, w). Pearson's X2
    over all n*S hands is a weighted sum of chi-squares, the weights being
    the eigenvalues of the exact per-deal covariance of the bin counts
    divided by the expected counts; hands of one deal are correlated, so the
    weights are not all 1. Second-order (Rao-Scott / Satterthwaite)
    correction: X2 / a ~ chi2(nu), a = sum l^2 / sum l, nu = (sum l)^2 / sum l^2.
    """
    n, s = values.shape
    p = single / single.sum()
    bin_of = _merge_bins(p * n * s, base, MIN_EXPECTED)
    nb = int(bin_of.max()) + 1
    pb = np.bincount(bin_of, weights=p, minlength=nb)
    q_full = pair / pair.sum()
    onehot = np.zeros((len(bin_of), nb))
    onehot[np.arange(len(bin_of)), bin_of] = 1.0
    qb = onehot.T @ q_full @ onehot
    outer = np.outer(pb, pb)
    cov = s * (np.diag(pb) - outer) + s * (s - 1) * (qb - outer)  # one deal's bin counts
    norm = 1.0 / np.sqrt(s * pb)
    lam = np.linalg.eigvalsh(cov * norm[:, None] * norm[None, :])
    lam = lam[lam > 1e-12]
    a = float((lam**2).sum() / lam.sum())
    nu = float(lam.sum() ** 2 / (lam**2).sum())
    observed = np.bincount(bin_of[values.ravel()], minlength=nb)
    expected = n * s * pb
    x2 = float(((observed - expected) ** 2 / expected).sum())
    stat = x2 / a
    first = [int(np.flatnonzero(bin_of == b)[0]) for b in range(nb)]
    detail = {
        "x2": x2,
        "design_effect": a,
        "bin_starts": first,
        "observed": observed.tolist(),
        "expected": expected.round(3).tolist(),
    }
    return stat, nu, float(stats.chi2.sf(stat, nu)), detail


@cache
def _constants(spec: GroupSpec) -> dict[str, Any]:
    """Exact expectations for one group, from the enumerated tables."""
    pip_single = np.array(exact.hand_pip_counts(spec.tiles), dtype=float)
    pip_pair = exact.pip_pair_counts(spec.tiles).astype(float)
    pip_single = np.pad(pip_single, (0, len(pip_pair) - len(pip_single)))
    mean, var = exact.pip_moments(spec.tiles)
    cov = exact.seat_covariance(spec.tiles)
    seat_cov = np.full((spec.players, spec.players), float(cov))
    np.fill_diagonal(seat_cov, float(var))
    local = np.full(N_TILES, -1, dtype=np.int16)
    local[list(spec.tiles)] = np.arange(spec.n_tiles)
    out: dict[str, Any] = {
        "pip_single": pip_single,
        "pip_pair": pip_pair,
        "pip_mean": float(mean),
        "pip_var": float(var),
        "seat_cov": seat_cov,
        "local": local,
        # a deal up to the order inside each hand: T! / (7!)^S equally likely classes
        "log_deal_classes": math.lgamma(spec.n_tiles + 1) - spec.players * math.lgamma(HAND + 1),
    }
    if spec.has_doubles:
        d_single = np.array(exact.hands_by_doubles(), dtype=float)
        d_mean, d_var = exact.doubles_moments()
        out |= {
            "d_single": d_single,
            "d_pair": exact.doubles_pair_counts().astype(float),
            "d_mean": float(d_mean),
            "d_var": float(d_var),
            "five": float(exact.five_doubles_probability(spec.players)),
        }
    return out


# --------------------------------------------------------------------------- tests

# Each returns (statistic, df, p, detail) or a string: the reason to skip.
_Raw = tuple[float, float | None, float, dict[str, Any]] | str


def _position_counts(g: DealGroup) -> np.ndarray:
    """counts[t, p]: deals with local tile t at deck position p (one bincount per position)."""
    local = _constants(g.spec)["local"][g.deck]
    t = g.spec.n_tiles
    return np.stack([np.bincount(local[:, p], minlength=t) for p in range(t)], axis=1)


def _scaled_x2(observed: np.ndarray, expected: np.ndarray, n_tiles: int) -> tuple[float, float]:
    """Pearson X2 scaled by (T-1)/T, and its df (T-1)(C-1).

    One deal puts each tile in exactly one cell and fills every column to
    its size: a contingency table with both margins fixed, whose
    covariance is T/(T-1) times the independent-multinomial one.
    """
    x2 = float(((observed - expected) ** 2 / expected).sum())
    return x2 * (n_tiles - 1) / n_tiles, float((n_tiles - 1) * (observed.shape[1] - 1))


def _top_cells(
    observed: np.ndarray, expected: np.ndarray, tiles: tuple[int, ...], cols: Sequence[str]
) -> list[dict[str, Any]]:
    resid = (observed - expected) / np.sqrt(expected)
    out = []
    for flat in np.argsort(-np.abs(resid), axis=None)[:5]:
        t, c = np.unravel_index(flat, resid.shape)
        out.append(
            {
                "tile": tile_name(tiles[t]),
                "column": cols[c],
                "observed": int(observed[t, c]),
                "expected": round(float(expected[t, c]), 3),
                "residual": round(float(resid[t, c]), 3),
            }
        )
    return out


def _tile_seat(g: DealGroup, pos: np.ndarray) -> _Raw:
    spec = g.spec
    sizes = np.array([HAND] * spec.players + ([spec.stock] if spec.stock else []))
    if g.n * HAND / spec.n_tiles < MIN_EXPECTED:
        return f"needs {math.ceil(MIN_EXPECTED * spec.n_tiles / HAND)} deals"
    col_of = np.minimum(np.arange(spec.n_tiles) // HAND, len(sizes) - 1)
    observed = np.stack([pos[:, col_of == c].sum(axis=1) for c in range(len(sizes))], axis=1)
    expected = np.outer(np.full(spec.n_tiles, g.n), sizes / spec.n_tiles)
    stat, df = _scaled_x2(observed, expected, spec.n_tiles)
    detail = {"top_cells": _top_cells(observed, expected, spec.tiles, spec.columns)}
    return stat, df, float(stats.chi2.sf(stat, df)), detail


def _tile_position(g: DealGroup, pos: np.ndarray) -> _Raw:
    t = g.spec.n_tiles
    if g.n / t < MIN_EXPECTED:
        return f"needs {math.ceil(MIN_EXPECTED * t)} deals"
    expected = np.full(pos.shape, g.n / t)
    stat, df = _scaled_x2(pos, expected, t)
    cols = [f"pos{p}" for p in range(t)]
    detail = {"top_cells": _top_cells(pos, expected, g.spec.tiles, cols)}
    return stat, df, float(stats.chi2.sf(stat, df)), detail


def _order_memory(g: DealGroup) -> _Raw:
    """Rank correlation between a tile's canonical rank and its deck position.

    deal-v1 shuffles the canonical order, so a shuffle that mixes too
    little (or biases where tiles go) leaves the deck remembering it.
    Per deal, S = sum_p p * rank(deck[p]) is a permutation statistic with
    mean T((T-1)/2)^2 and variance (sum (p - pbar)^2)^2 / (T-1); the window's
    sum is z-tested (two-sided). Spearman's rho = S-centred / (n * var sum).
    """
    t = g.spec.n_tiles
    if g.n < 30:
        return "needs 30 deals"
    ranks = _constants(g.spec)["local"][g.deck].astype(np.float64)
    s = ranks @ np.arange(t, dtype=np.float64)
    ss = t * (t * t - 1) / 12  # sum of (p - pbar)^2
    dev = float(s.sum()) - g.n * t * ((t - 1) / 2) ** 2
    z = dev / math.sqrt(g.n * ss * ss / (t - 1))
    return z, None, float(2 * stats.norm.sf(abs(z))), {"spearman_rho": dev / (g.n * ss)}


def _doubles_per_hand(g: DealGroup, dbl: np.ndarray) -> _Raw:
    c = _constants(g.spec)
    base = np.minimum(np.arange(len(c["d_single"])), 5)  # bins 0, 1, 2, 3, 4, 5+
    if g.n * g.spec.players * c["d_single"][4:].sum() / exact.N_HANDS < MIN_EXPECTED:
        return "too few hands for the bin of 4+ doubles"
    return _clustered_gof(dbl, c["d_single"], c["d_pair"], base)


def _five_doubles(g: DealGroup, dbl: np.ndarray) -> _Raw:
    p = _constants(g.spec)["five"]
    k = int((dbl.max(axis=1) >= 5).sum())
    res = stats.binomtest(k, g.n, p)
    return float(k), None, float(res.pvalue), {"observed": k, "expected": g.n * p, "p_deal": p}


def _hand_pips(g: DealGroup, pips: np.ndarray) -> _Raw:
    c = _constants(g.spec)
    if g.n * g.spec.players < 200:
        return "needs 200 hands"
    base = np.arange(len(c["pip_single"]))
    return _clustered_gof(pips, c["pip_single"], c["pip_pair"], base)


def _seat_pips(g: DealGroup, pips: np.ndarray) -> _Raw:
    """Mean pips per seat vs the exact mean, with the exact seat covariance.

    Hands of one deal are negatively correlated (-1/3); with no stock the
    seat totals are fixed, so the test has S-1 df (it is then a test of
    seat-to-seat differences), else S.
    """
    c = _constants(g.spec)
    if g.n < 30:
        return "needs 30 deals"
    dev = pips.mean(axis=0) - c["pip_mean"]
    w, v = np.linalg.eigh(c["seat_cov"])
    keep = w > 1e-9 * w.max()
    proj = v[:, keep].T @ dev
    stat = float(g.n * (proj**2 / w[keep]).sum())
    df = float(keep.sum())
    detail = {
        "seat_means": pips.mean(axis=0).round(4).tolist(),
        "seat_z": (dev / math.sqrt(c["pip_var"] / g.n)).round(3).tolist(),
    }
    return stat, df, float(stats.chi2.sf(stat, df)), detail


def _serial_pips(g: DealGroup, pips: np.ndarray) -> _Raw:
    """Lag-1 dependence of seat pips between consecutive deals of a table.

    The sum over K consecutive pairs of sum_s (x_ds - m_s)(x_d+1,s - m_s)
    has mean ~0 and variance K * sum(C**2), C the exact seat covariance;
    cross terms vanish because deals are independent under a fair shuffle.
    Centring on the window's seat means m_s (not the exact 42) keeps a
    biased seat mean from posing as serial dependence; it biases the sum by
    -K tr(C) / n, which is added back. Normal approximation, two-sided.
    """
    c = _constants(g.spec)
    idx = np.lexsort((g.order, g.table_idx))
    same = g.table_idx[idx][1:] == g.table_idx[idx][:-1]
    k = int(same.sum())
    if k < 30:
        return "needs 30 consecutive pairs"
    u = pips[idx].astype(np.float64)
    u -= u.mean(axis=0)
    prod = (u[:-1] * u[1:]).sum(axis=1)[same]
    total = float(prod.sum()) + k * float(np.trace(c["seat_cov"])) / g.n
    z = total / math.sqrt(k * float((c["seat_cov"] ** 2).sum()))
    r = total / (k * g.spec.players * c["pip_var"])
    return z, None, float(2 * stats.norm.sf(abs(z))), {"pairs": k, "lag1_r": r}


def _repeated_deals(g: DealGroup) -> _Raw:
    """Deals that repeat an earlier deal of the window (same hands, same stock order).

    A fair shuffle makes T!/(7!)^S deal classes equally likely, so the
    number of coinciding pairs is about Poisson(C(n,2) / classes) (birthday
    bound); the p-value is P(Poisson >= repeats).
    """
    spec, c = g.spec, _constants(g.spec)
    local = c["local"][g.deck].astype(np.int64)
    hands = np.left_shift(np.int64(1), local[:, : HAND * spec.players])
    masks = hands.reshape(g.n, spec.players, HAND).sum(axis=2)  # order inside a hand is ignored
    key = np.concatenate([masks, local[:, HAND * spec.players :]], axis=1).astype(np.uint64)
    h = (key * _HASH_MULT[: key.shape[1]]).sum(axis=1, dtype=np.uint64) if g.n else key[:, 0]
    _, inv, cnt = np.unique(h, return_inverse=True, return_counts=True)
    cand = np.flatnonzero(cnt[inv] > 1)  # hash collisions: verify on the exact keys
    repeats, examples = 0, []
    if len(cand):
        _, first, inv2 = np.unique(key[cand], axis=0, return_index=True, return_inverse=True)
        inv2 = inv2.ravel()
        later = np.setdiff1d(np.arange(len(cand)), first)  # not the first of their class
        repeats = len(later)
        examples = [
            {"deal": int(g.order[cand[i]]), "same_as": int(g.order[cand[first[inv2[i]]]])}
            for i in later[:10]
        ]
    log_lam = math.log(g.n * (g.n - 1) / 2) - c["log_deal_classes"] if g.n > 1 else -math.inf
    lam = math.exp(log_lam)
    p = float(stats.poisson.sf(repeats - 1, lam)) if repeats else 1.0
    if repeats and p == 0.0:  # underflow: the leading Poisson term is still a good bound
        p = math.exp(max(repeats * log_lam - math.lgamma(repeats + 1), -745.0))
    return (
        float(repeats),
        None,
        p,
        {"repeats": repeats, "expected_pairs": lam, "examples": examples},
    )


def _group_tests(g: DealGroup) -> list[tuple[str, _Raw]]:
    spec = g.spec
    pos = _position_counts(g)
    seated = g.deck[:, : HAND * spec.players].reshape(g.n, spec.players, HAND)
    pips = _PIPS[seated].sum(axis=2)
    out: list[tuple[str, _Raw]] = [
        ("tile_seat", _tile_seat(g, pos)),
        ("tile_position", _tile_position(g, pos)),
        ("order_memory", _order_memory(g)),
    ]
    if spec.has_doubles:
        dbl = _DOUBLE[seated].sum(axis=2)
        out += [
            ("doubles_per_hand", _doubles_per_hand(g, dbl)),
            ("five_doubles", _five_doubles(g, dbl)),
        ]
    else:
        out += [("doubles_per_hand", "no doubles dealt"), ("five_doubles", "no doubles dealt")]
    out += [
        ("hand_pips", _hand_pips(g, pips)),
        ("seat_pips", _seat_pips(g, pips)),
        ("serial_pips", _serial_pips(g, pips)),
        ("repeated_deals", _repeated_deals(g)),
    ]
    return out


def run_battery(window: DealWindow, alpha: float = ALPHA) -> BatteryReport:
    """Run every applicable test on every group; Holm across the whole family."""
    raw: list[tuple[str, tuple[float, float | None, float, dict[str, Any]]]] = []
    skipped: list[Skipped] = []
    for g in window.groups:
        if g.n == 0:
            continue
        for name, result in _group_tests(g):
            full = f"{name}[{g.spec.kind}]"
            if isinstance(result, str):
                skipped.append(Skipped(full, result))
            else:
                raw.append((full, result))
    adjusted = holm([r[2] for _, r in raw])
    tests = tuple(
        TestResult(name, float(s), df, p, pa, verdict_of(pa, alpha), d)
        for (name, (s, df, p, d)), pa in zip(raw, adjusted, strict=True)
    )
    return BatteryReport(
        n_deals=window.n_deals,
        groups={g.spec.kind: g.n for g in window.groups},
        tests=tests,
        verdict=worst([t.verdict for t in tests]),
        alpha=alpha,
        skipped=tuple(skipped),
    )


def audit(window: DealWindow, alpha: float = ALPHA) -> Audit:
    """Battery on the window and on its two halves (by deal order).

    FAIL if the window FAILs or both halves are at least WEAK (a deviation
    seen twice, independently); otherwise the window's own verdict.
    """
    full = run_battery(window, alpha)
    first, second = (run_battery(h, alpha) for h in window.split())
    verdict = full.verdict
    if verdict == "FAIL" or (first.verdict != "PASS" and second.verdict != "PASS"):
        verdict = "FAIL"
    return Audit(full, (first, second), verdict)


# --------------------------------------------------------------------------- player luck

_Z95: Final = float(stats.norm.isf(0.025))
_HIST_EDGES: Final = tuple(x / 2 for x in range(-8, 9))  # -4 .. 4 by 0.5; outer bins open


def _histogram(z: np.ndarray) -> dict[str, Any]:
    edges = np.array(_HIST_EDGES)
    counts = np.bincount(np.searchsorted(edges, z, side="right"), minlength=len(edges) + 1)
    cdf = np.concatenate([[0.0], stats.norm.cdf(edges), [1.0]])
    return {
        "edges": list(_HIST_EDGES),  # bin i covers [edges[i-1], edges[i]); first/last open
        "counts": counts.tolist(),
        "expected": (len(z) * np.diff(cdf)).round(3).tolist(),
    }


def player_luck(window: DealWindow, alpha: float = ALPHA, min_hands: int = 30) -> LuckReport:
    """Per-player deal luck: mean pips and doubles per hand, z-scores, Holm across players.

    A player's hands come from independent deals, so the sum of his
    deviations from the exact per-hand mean has the exact variance
    sum(49) (or the group's variance); z-tests, two-sided. The family is
    every (player, measure) with at least ``min_hands`` hands; doubles
    exclude doubles_aside hands (no doubles are dealt there).
    """
    n_players = len(window.player_ids)
    acc = {k: np.zeros(n_players) for k in ("h", "x", "mu", "var", "dh", "dx", "dmu", "dvar")}
    for g in window.groups:
        if g.n == 0:
            continue
        c = _constants(g.spec)
        seated = g.deck[:, : HAND * g.spec.players].reshape(g.n, g.spec.players, HAND)
        who = g.player_idx.ravel()
        pips = _PIPS[seated].sum(axis=2).ravel()
        hands = np.bincount(who, minlength=n_players)
        acc["h"] += hands
        acc["x"] += np.bincount(who, weights=pips, minlength=n_players)
        acc["mu"] += hands * c["pip_mean"]
        acc["var"] += hands * c["pip_var"]
        if g.spec.has_doubles:
            dbl = _DOUBLE[seated].sum(axis=2).ravel()
            acc["dh"] += hands
            acc["dx"] += np.bincount(who, weights=dbl, minlength=n_players)
            acc["dmu"] += hands * c["d_mean"]
            acc["dvar"] += hands * c["d_var"]
    with np.errstate(divide="ignore", invalid="ignore"):
        pz = (acc["x"] - acc["mu"]) / np.sqrt(acc["var"])
        dz = (acc["dx"] - acc["dmu"]) / np.sqrt(acc["dvar"])
    tested_p = acc["h"] >= min_hands
    tested_d = acc["dh"] >= min_hands
    pp = 2 * stats.norm.sf(np.abs(pz))
    dp = 2 * stats.norm.sf(np.abs(dz))
    family = np.concatenate([pp[tested_p], dp[tested_d]])
    adj = np.array(holm(family.tolist()))
    pp_adj = np.full(n_players, np.nan)
    dp_adj = np.full(n_players, np.nan)
    pp_adj[tested_p] = adj[: tested_p.sum()]
    dp_adj[tested_d] = adj[tested_p.sum() :]

    def opt(x: float) -> float | None:
        return None if math.isnan(x) else float(x)

    rows = []
    for i in np.flatnonzero(acc["h"] > 0):
        h, dh = acc["h"][i], acc["dh"][i]
        half = _Z95 * math.sqrt(acc["var"][i]) / h
        mp = acc["x"][i] / h
        md = acc["dx"][i] / dh if dh else None
        dhalf = _Z95 * math.sqrt(acc["dvar"][i]) / dh if dh else 0.0
        flagged = bool((tested_p[i] and pp_adj[i] < alpha) or (tested_d[i] and dp_adj[i] < alpha))
        rows.append(
            PlayerLuck(
                player=window.player_ids[i],
                hands=int(h),
                mean_pips=float(mp),
                pips_ci=(float(mp - half), float(mp + half)),
                pips_z=float(pz[i]),
                pips_p=float(pp[i]) if tested_p[i] else None,
                pips_p_adjusted=opt(pp_adj[i]),
                doubles_hands=int(dh),
                mean_doubles=None if md is None else float(md),
                doubles_ci=None if md is None else (float(md - dhalf), float(md + dhalf)),
                doubles_z=float(dz[i]) if dh else None,
                doubles_p=float(dp[i]) if tested_d[i] else None,
                doubles_p_adjusted=opt(dp_adj[i]),
                flagged=flagged,
            )
        )
    verdict = verdict_of(float(adj.min()), alpha) if len(adj) else "PASS"
    return LuckReport(
        players=tuple(rows),
        flagged=tuple(r.player for r in rows if r.flagged),
        verdict=verdict,
        alpha=alpha,
        min_hands=min_hands,
        histogram={
            "pips": _histogram(pz[tested_p]),
            "doubles": _histogram(dz[tested_d]),
        },
    )
