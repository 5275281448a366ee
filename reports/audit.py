"""The fairness audit of a window of stored hands: deterministic checks and the battery.

A window is the hands chosen by `Filters` (table, profile, player, match,
dates on the hand's start) among the hands that are over: a hand still
being played (no result yet) is in no window, so nothing the audit shows is
a function of tiles still hidden. `load_window` pulls it with one DuckDB query
(columnar: Arrow into polars, decks as int8 lists; no Python loop per
deal). `run_audit` then

- checks EVERY hand of the window (never a sample): seed chain
  (hands.seed_ok), reveals (REVEAL_MISSING), deal = derivation
  (hands.deal_ok), draws (DRAW_MISMATCH), lead draw (LEAD_DRAW_MISMATCH),
  no seed or anchor used by two (match, hand) anywhere in the store (the
  seeds table), and 28 distinct tiles per deal (dealt + stock + out of
  play, in SQL with list functions);
- runs the statistical battery (`reports.battery.audit`) and the per-player
  luck family (`player_luck`) over the window's deals.

The deck given to the battery is the dealt hands concatenated by seat, each
in its logged order, then the stock in its derived order (deal-v1 deals
deck[7s..7s+6] to seat s and the stock is the rest, so this is the deck
itself when the server logs hands as dealt; a server that sorts hands for
display would show in tile_position / order_memory). Deals whose order is
not fully known are left out of the battery (never out of the
deterministic checks), with the reason counted: see `EXCLUDED`.

The window verdict: NO DATA for a window without a hand (nothing was
checked, so nothing passed), else FAIL on any deterministic failure, else
the worst of the battery's escalated verdict (window and both halves) and
the luck family's. `replay audit` exits 0 for PASS, 1 for WEAK or FAIL,
2 for a usage error, a store it cannot read, or NO DATA.

Locking: `replay audit` opens the store read-only and closes it as soon as
the window is loaded (the statistics run without it). DuckDB lets several
processes read a file at once, but none while one process holds it for
writing -- the running server (`replay serve`) or an ingest that loads its
batches. The audit then says so and exits 2; use the server's
/api/fairness instead, which audits over the server's own connection.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal
from urllib.parse import quote

import duckdb
import polars as pl

from replay.rules import PROFILES
from replay.tiles import IS_DOUBLE
from reports.battery import Audit, DealWindow, LuckReport, Verdict, audit, player_luck, worst
from reports.charts import fairness_charts
from reports.search import contains, players_matching_sql

__all__ = [
    "CHECKS",
    "EXCLUDED",
    "AuditReport",
    "NO_DATA",
    "AuditWindow",
    "Filters",
    "format_text",
    "hand_url",
    "load_window",
    "run_audit",
]

#: Deterministic checks: name -> (finding code, what it checks).
CHECKS: Final[dict[str, tuple[str, str]]] = {
    "seed_chain": ("COMMIT_MISMATCH", "revealed seed hashes to its predecessor (anchor chain)"),
    "reveal": ("REVEAL_MISSING", "seed revealed after the hand"),
    "deal": ("DEAL_MISMATCH", "logged deal equals its derivation from the seed"),
    "draws": ("DRAW_MISMATCH", "every draw takes the next tile of the derived boneyard"),
    "lead_draw": ("LEAD_DRAW_MISMATCH", "lead draw equals its derivation"),
    "seed_reuse": ("SEED_REUSED", "no seed or anchor used by two (match, hand) in the store"),
    "tiles": ("TILES", "28 distinct tiles: dealt + stock + out of play"),
}

#: Why a deal is left out of the battery (it is still checked above).
EXCLUDED: Final[dict[str, str]] = {
    "malformed": "not 28 distinct tiles, or not 7 a seat",
    "seats_unknown": "a seat with no player in the seat history",
    "stock_order_unknown": "boneyard order not derived (seed not revealed, or deal differs)",
    "out_of_play_order": "undealt tiles out of play: their order is not logged",
}

_DOUBLES: Final = [t for t in range(28) if IS_DOUBLE[t]]

#: The verdict of a window without a hand: nothing was checked, so nothing passed.
NO_DATA: Final = "NO DATA"
WindowVerdict = Verdict | Literal["NO DATA"]

# One row per hand of the window with every flag the audit needs and the
# battery's deck. Filters are appended to `m` (match level) and `h` (hand
# level) and to the final WHERE (player); `{}` placeholders are filled by
# `_window_sql`. Seat history as in reports/player.py: a row holds its
# seat from `from_hand` until the next row of that seat.
_WINDOW_SQL: Final = """
WITH m AS (
    SELECT match, table_id, profile, players, rules->>'stock' AS stock_rule,
           coalesce(estimates, []) AS estimates, len(coalesce(lead_draw, [])) > 0 AS lead_drawn
    FROM matches WHERE {match_where}
),
h AS (
    SELECT h.match, h.hand, h.started, h.result, h.dealt, coalesce(h.stock, []) AS stock,
           h.seed_ok, h.deal_ok, h.server_seed IS NOT NULL AS revealed,
           m.table_id, m.profile, m.players, m.stock_rule, m.estimates, m.lead_drawn
    FROM hands h JOIN m USING (match)
    -- only hands that are over: a hand still on keeps its deal hidden from
    -- every count, chart and download
    WHERE h.result IS NOT NULL AND {hand_where}
),
r AS (
    SELECT s.match, s.seat, s.player, s.from_hand,
           coalesce(lead(s.from_hand) OVER (PARTITION BY s.match, s.seat
                                            ORDER BY s.from_hand, s.seq), 2147483647) AS to_hand
    FROM seats s WHERE s.match IN (SELECT match FROM m)
),
sp AS (
    SELECT h.match, h.hand, list(r.player ORDER BY r.seat) AS seat_players
    FROM h JOIN r ON r.match = h.match AND h.hand >= r.from_hand AND h.hand < r.to_hand
    GROUP BY h.match, h.hand
),
f AS (
    -- the lead draw belongs to hand 1 (its finding may carry no hand)
    SELECT match, coalesce(hand, 1) AS hand,
           bool_or(code = 'DRAW_MISMATCH') AS draw_bad,
           bool_or(code = 'LEAD_DRAW_MISMATCH') AS lead_bad,
           bool_or(code = 'REVEAL_MISSING') AS reveal_missing
    FROM findings
    WHERE code IN ('DRAW_MISMATCH', 'LEAD_DRAW_MISMATCH', 'REVEAL_MISSING')
      AND match IN (SELECT match FROM m)
    GROUP BY ALL
),
x AS (
    SELECT h.*, sp.seat_players,
           coalesce(f.draw_bad, false) AS draw_bad,
           coalesce(f.lead_bad, false) AS lead_bad,
           coalesce(f.reveal_missing, false) AS reveal_missing,
           flatten(h.dealt) AS flat,
           -- out of play: the doubles set aside, or what a no-boneyard game leaves undealt
           CASE WHEN h.stock_rule = 'doubles_aside' THEN {doubles}::TINYINT[]
                WHEN h.stock_rule = 'draw' OR h.players = 4 THEN []::TINYINT[]
                ELSE list_filter(range(28), lambda t: NOT list_contains(flatten(h.dealt), t))::TINYINT[]
           END AS aside
    FROM h LEFT JOIN sp USING (match, hand) LEFT JOIN f USING (match, hand)
    WHERE {player_where}
),
y AS (
    SELECT x.*, list_concat(flat, stock, aside) AS every_tile,
           coalesce(len(dealt) = players
                    AND list_bool_and(list_transform(dealt, lambda s: len(s) = 7)), false) AS shape_ok
    FROM x
),
z AS (
    SELECT y.*,
           -- 28 tiles whose bits OR to all 28 ids: each id exactly once (t & 63 keeps
           -- a stray id outside 0..27 from breaking the shift; it sets a wrong bit)
           coalesce(shape_ok AND len(every_tile) = 28 AND list_aggregate(list_transform(
               every_tile, lambda t: 1::UBIGINT << (t::INTEGER & 63)), 'bit_or') = {full},
               false) AS tiles_ok
    FROM y
)
SELECT match, hand, table_id AS "table", profile, players, stock_rule, estimates,
       timezone('UTC', started) AS started, result, seat_players,
       seed_ok, deal_ok, revealed, reveal_missing, draw_bad, lead_bad, lead_drawn, tiles_ok,
       CASE WHEN NOT tiles_ok THEN 'malformed'
            WHEN seat_players IS NULL OR len(seat_players) <> players THEN 'seats_unknown'
            WHEN stock_rule = 'draw' AND deal_ok IS NOT TRUE THEN 'stock_order_unknown'
            WHEN len(aside) > 0 AND stock_rule <> 'doubles_aside' THEN 'out_of_play_order'
       END AS excluded,
       CASE WHEN excluded IS NULL THEN list_concat(flat, stock) END AS deck
FROM z
ORDER BY started NULLS LAST, match, hand
"""

# Seeds (hand > 0) and anchors (hand 0) that two (match, hand) share, touching the window.
_REUSED_SQL: Final = """
WITH dup AS (
    SELECT seed FROM seeds GROUP BY seed HAVING count(*) > 1  -- pairs below skip a row's own (match, hand)
),
rows AS (SELECT s.seed, s.match, s.hand FROM seeds s SEMI JOIN dup USING (seed))
SELECT a.match, a.hand, a.seed,
       list(DISTINCT b.match || CASE WHEN b.hand = 0 THEN ' (anchor)'
                                     ELSE ' hand ' || b.hand END ORDER BY 1) AS also
FROM rows a JOIN rows b ON a.seed = b.seed AND (a.match, a.hand) <> (b.match, b.hand)
WHERE list_contains($matches, a.match)
GROUP BY a.match, a.hand, a.seed
ORDER BY a.match, a.hand
"""


# --------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class Filters:
    """Which hands: all given filters must hold (dates on the hand's start, UTC, inclusive)."""

    table: str | None = None
    profile: str | None = None
    player: str | None = None  # an id, or a name (the players table's latest name)
    match: str | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    tables: tuple[str, ...] | None = None  # any of these tables (the live monitor's due ones)

    def to_dict(self) -> dict[str, Any]:
        return {k: (v.isoformat() if isinstance(v, dt.date) else v) for k, v in asdict(self).items()
                if k != "tables" or v is not None}  # fmt: skip

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.to_dict().items() if v not in (None, "")]
        return ", ".join(parts) or "none (every stored hand)"


def _day(d: dt.date) -> dt.datetime:
    # a timezone-aware bound binds as TIMESTAMPTZ: the UTC day, whatever the session zone
    return dt.datetime(d.year, d.month, d.day, tzinfo=dt.UTC)


def _window_sql(filters: Filters) -> tuple[str, dict[str, Any]]:
    mw, hw, pw = ["TRUE"], ["TRUE"], "TRUE"
    params: dict[str, Any] = {}
    if filters.table:
        mw.append("table_id = $table")
        params["table"] = filters.table
    if filters.tables is not None:
        mw.append("list_contains($tables, table_id)")
        params["tables"] = list(filters.tables)
    if filters.profile:
        mw.append("profile = $profile")
        params["profile"] = filters.profile
    if filters.match:
        mw.append("match = $match")
        params["match"] = filters.match
    if filters.player:
        # an exact id, else any part of a name or id, case and accents aside
        ids = f"(SELECT list(player) FROM ({players_matching_sql('$player', '$player', '$like', '$like')}))"
        mw.append(f"match IN (SELECT match FROM seats WHERE list_contains({ids}, player))")
        pw = f"list_has_any(sp.seat_players, {ids})"
        params["player"], params["like"] = filters.player, contains(filters.player)
    if filters.date_from:
        hw.append("h.started >= $date_from")
        params["date_from"] = _day(filters.date_from)
    if filters.date_to and filters.date_to < dt.date.max:
        hw.append("h.started < $date_to")  # inclusive: the whole last day
        params["date_to"] = _day(filters.date_to + dt.timedelta(days=1))
    sql = _WINDOW_SQL.format(
        match_where=" AND ".join(mw),
        hand_where=" AND ".join(hw),
        player_where=pw,
        doubles=str(_DOUBLES),
        full=(1 << 28) - 1,
    )
    return sql, params


# --------------------------------------------------------------------------- the window


@dataclass(frozen=True, eq=False)
class AuditWindow:
    """The hands of a window (one row each, deal order) and the battery's deals."""

    filters: Filters
    hands: pl.DataFrame
    deals: DealWindow
    reused: pl.DataFrame  # match, hand (0: anchor), seed, also (list of "match hand k")
    names: dict[str, str]  # player id -> latest name, for the players of the window
    unknown: tuple[str, ...] = ()  # why an empty window is empty: a filter no stored hand has


def load_window(conn: duckdb.DuckDBPyConnection, filters: Filters, *, seeds: bool = True) -> AuditWindow:
    """The window's hands with DuckDB (one query for the deals; small ones for
    reused seeds and names), and the battery's `DealWindow` of its deals.
    ``seeds=False`` skips the reused seeds (a scan of every stored seed), for
    a reader of the deals alone (the live monitor)."""
    sql, params = _window_sql(filters)
    hands = conn.sql(sql, params=params).pl()
    matches = hands.get_column("match").unique().to_list()
    reused = (conn.sql(_REUSED_SQL, params={"matches": matches}).pl() if seeds
              else pl.DataFrame(schema={"match": pl.String, "hand": pl.Int32, "seed": pl.String,
                                        "also": pl.List(pl.String)}))  # fmt: skip
    deals = hands.filter(pl.col("excluded").is_null())
    window = (
        DealWindow.from_frame(deals.select("table", "match", "hand", "players", "deck", "seat_players"))
        if deals.height
        else DealWindow(())
    )
    names = dict(
        conn.execute(
            "SELECT player, coalesce(name, player) FROM players WHERE list_contains($ids, player)",
            {"ids": list(window.player_ids)},
        ).fetchall()
    )
    unknown = _unknown_values(conn, filters) if not hands.height else ()
    return AuditWindow(filters, hands, window, reused, names, unknown)


def _unknown_values(conn: duckdb.DuckDBPyConnection, filters: Filters) -> tuple[str, ...]:
    """What an empty window's filters name that the store does not hold, with
    the values it does hold (a typo in a profile or table name shows)."""
    out = []
    stored = dict(
        zip(
            ("profile", "table"),
            conn.execute(
                "SELECT list(DISTINCT profile ORDER BY profile) FILTER (WHERE profile IS NOT NULL), "
                "list(DISTINCT table_id ORDER BY table_id) FILTER (WHERE table_id IS NOT NULL) "
                "FROM matches"
            ).fetchall()[0],
            strict=True,
        )
    )
    if filters.profile and filters.profile not in (stored["profile"] or []):
        if filters.profile in PROFILES:
            out.append(f"no stored match of profile {filters.profile!r}; stored profiles: "
                       f"{', '.join(stored['profile'] or []) or 'none'}")
        else:
            known = sorted(set(PROFILES) | set(stored["profile"] or []))
            out.append(f"unknown profile {filters.profile!r}; known profiles: {', '.join(known)}")
    if filters.table and filters.table not in (stored["table"] or []):
        tables = stored["table"] or []
        shown = ", ".join(tables[:20]) + (f" and {len(tables) - 20} more" if len(tables) > 20 else "")
        out.append(f"no stored match at table {filters.table!r}; stored tables: {shown or 'none'}")
    return tuple(out)


# --------------------------------------------------------------------------- results


def hand_url(match: str, hand: int | None) -> str:
    """The replay page of a hand (the app's /matches/{id}/hands/{n}); the match page for hand None."""
    base = "/matches/" + quote(match, safe="")
    return base if hand is None else f"{base}/hands/{hand}"


@dataclass(frozen=True)
class CheckCount:
    """One deterministic check over the window: hands (or seeds) checked, and how they came out."""

    name: str
    code: str
    what: str
    checked: int
    passed: int
    failed: int
    not_checked: int  # e.g. seeds not (yet) revealed: nothing to check against


@dataclass(frozen=True)
class FailingHand:
    match: str
    hand: int | None  # None: the match's anchor
    table: str | None
    profile: str | None
    problems: tuple[str, ...]  # finding codes (TILES: not 28 distinct tiles)
    detail: str
    url: str


@dataclass(frozen=True)
class Deterministic:
    hands: int
    checks: tuple[CheckCount, ...]
    failing: tuple[FailingHand, ...]  # at most `limit`, in deal order
    failing_total: int

    @property
    def ok(self) -> bool:
        return self.failing_total == 0


@dataclass(frozen=True)
class AuditReport:
    """The whole audit of a window; `to_dict()` is the JSON of /api/fairness and --json."""

    filters: Filters
    window: dict[str, Any]
    deterministic: Deterministic
    battery: Audit | None  # None: no deal in the battery
    luck: LuckReport | None
    names: dict[str, str]
    verdict: WindowVerdict
    notes: tuple[str, ...] = field(default=())
    charts: dict[str, Any] = field(default_factory=dict)  # reports.charts.fairness_charts

    @property
    def empty(self) -> bool:
        hands: int = self.window["hands"]
        return hands == 0

    @property
    def exit_code(self) -> int:
        """0 PASS; 1 WEAK/FAIL or deterministic failures; 2 NO DATA (nothing to audit)."""
        if self.empty:
            return 2
        return 0 if self.verdict == "PASS" else 1

    def to_dict(self) -> dict[str, Any]:
        det = self.deterministic
        luck = self.luck.to_dict() if self.luck else None
        if luck is not None:
            for row in luck["players"]:
                row["name"] = self.names.get(row["player"], row["player"])
                row["url"] = "/players/" + quote(row["player"], safe="")
        return {
            "filters": self.filters.to_dict(),
            "verdict": self.verdict,
            "window": self.window,
            "deterministic": {
                "ok": det.ok,
                "hands": det.hands,
                "checks": [asdict(c) for c in det.checks],
                "failing_total": det.failing_total,
                "failing": [asdict(f) for f in det.failing],
            },
            "battery": self.battery.to_dict() if self.battery else None,
            "luck": luck,
            "charts": self.charts,
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------- the checks


def _count(df: pl.DataFrame, expr: pl.Expr) -> int:
    return int(df.select(expr.sum()).item() or 0)


def deterministic(window: AuditWindow, limit: int = 500) -> Deterministic:
    """Every deterministic check over every hand of the window (polars, columnar)."""
    h = window.hands
    n = h.height
    reused = window.reused
    reused_hands = reused.filter(pl.col("hand") > 0).select("match", "hand", pl.lit(True).alias("reused"))
    reused_anchor = reused.filter(pl.col("hand") == 0)
    h = h.join(reused_hands, on=["match", "hand"], how="left").with_columns(
        pl.col("reused").fill_null(False)
    )
    seed, deal = pl.col("seed_ok"), pl.col("deal_ok")
    draw_game = pl.col("stock_rule") == "draw"
    first = (pl.col("hand") == 1) & pl.col("lead_drawn")
    n_matches = h.get_column("match").n_unique()
    n_anchor_bad = reused_anchor.get_column("match").n_unique()
    checks = (
        CheckCount("seed_chain", *CHECKS["seed_chain"], checked=_count(h, seed.is_not_null()),
                   passed=_count(h, seed.eq(True)), failed=_count(h, seed.eq(False)),
                   not_checked=_count(h, seed.is_null())),
        CheckCount("reveal", *CHECKS["reveal"], checked=_count(h, pl.col("revealed") | pl.col("reveal_missing")),
                   passed=_count(h, pl.col("revealed")), failed=_count(h, pl.col("reveal_missing")),
                   not_checked=_count(h, ~pl.col("revealed") & ~pl.col("reveal_missing"))),
        CheckCount("deal", *CHECKS["deal"], checked=_count(h, deal.is_not_null()),
                   passed=_count(h, deal.eq(True)), failed=_count(h, deal.eq(False)),
                   not_checked=_count(h, deal.is_null())),
        # draws are checked where the boneyard order was derived (deal_ok known)
        CheckCount("draws", *CHECKS["draws"], checked=_count(h, draw_game & (deal.is_not_null() | pl.col("draw_bad"))),
                   passed=_count(h, draw_game & deal.is_not_null() & ~pl.col("draw_bad")),
                   failed=_count(h, pl.col("draw_bad")),
                   not_checked=_count(h, draw_game & deal.is_null() & ~pl.col("draw_bad"))),
        CheckCount("lead_draw", *CHECKS["lead_draw"], checked=_count(h, first | pl.col("lead_bad")),
                   passed=_count(h, first & ~pl.col("lead_bad")), failed=_count(h, pl.col("lead_bad")),
                   not_checked=0),
        # seeds of revealed hands plus one anchor per match
        CheckCount("seed_reuse", *CHECKS["seed_reuse"],
                   checked=_count(h, pl.col("revealed")) + n_matches,
                   passed=_count(h, pl.col("revealed") & ~pl.col("reused")) + n_matches - n_anchor_bad,
                   failed=_count(h, pl.col("reused")) + n_anchor_bad, not_checked=_count(h, ~pl.col("revealed"))),
        CheckCount("tiles", *CHECKS["tiles"], checked=n, passed=_count(h, pl.col("tiles_ok")),
                   failed=_count(h, ~pl.col("tiles_ok")), not_checked=0),
    )  # fmt: skip
    problems = pl.concat_list(
        pl.when(seed.eq(False)).then(pl.lit("COMMIT_MISMATCH")),
        pl.when(pl.col("reveal_missing")).then(pl.lit("REVEAL_MISSING")),
        pl.when(deal.eq(False)).then(pl.lit("DEAL_MISMATCH")),
        pl.when(pl.col("draw_bad")).then(pl.lit("DRAW_MISMATCH")),
        pl.when(pl.col("lead_bad")).then(pl.lit("LEAD_DRAW_MISMATCH")),
        pl.when(pl.col("reused")).then(pl.lit("SEED_REUSED")),
        pl.when(~pl.col("tiles_ok")).then(pl.lit("TILES")),
    ).list.drop_nulls()
    bad = h.with_columns(problems.alias("problems")).filter(pl.col("problems").list.len() > 0)
    also = {(r["match"], r["hand"]): r["also"] for r in reused.iter_rows(named=True)}

    def detail(match: str, hand: int, codes: Sequence[str]) -> str:
        if "SEED_REUSED" in codes:
            return "seed also used by " + ", ".join(also.get((match, hand), []))
        if "TILES" in codes:
            return "not 28 distinct tiles (dealt + stock + out of play)"
        return ""

    anchors = reused_anchor.join(
        h.select("match", "table", "profile").unique("match"), on="match", how="left"
    ).sort("match")
    failing = [
        FailingHand(m, None, t, p, ("SEED_REUSED",), "anchor also used by " + ", ".join(a),
                    hand_url(m, None))
        for m, a, t, p in anchors.select("match", "also", "table", "profile").iter_rows()
    ]  # fmt: skip
    total = len(failing) + bad.height
    # the listed rows only: a whole broken server must not build a million objects
    for r in bad.head(max(0, limit - len(failing))).iter_rows(named=True):
        codes = tuple(r["problems"])
        failing.append(
            FailingHand(r["match"], r["hand"], r["table"], r["profile"], codes,
                        detail(r["match"], r["hand"], codes), hand_url(r["match"], r["hand"]))
        )  # fmt: skip
    return Deterministic(n, checks, tuple(failing[:limit]), total)


def _iso(t: Any) -> str | None:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ") if isinstance(t, dt.datetime) else None


def _summary(window: AuditWindow) -> dict[str, Any]:
    h = window.hands
    excluded = h.filter(pl.col("excluded").is_not_null()).group_by("excluded").len().sort("excluded")
    profiles = (
        h.group_by("profile")
        .agg(
            pl.len().alias("hands"),
            pl.col("match").n_unique().alias("matches"),
            pl.col("estimates").first(),
        )
        .sort("hands", "profile", descending=[True, False])
    )
    started = h.get_column("started").drop_nulls()
    return {
        "hands": h.height,
        "matches": h.get_column("match").n_unique(),
        "tables": sorted(h.get_column("table").drop_nulls().unique().to_list()),
        "players": h.get_column("seat_players").explode().drop_nulls().n_unique(),
        "profiles": [
            {"profile": p["profile"], "hands": p["hands"], "matches": p["matches"],
             "estimates": list(p["estimates"] or [])}
            for p in profiles.iter_rows(named=True)
        ],  # fmt: skip
        "first": _iso(started.min()),
        "last": _iso(started.max()),
        "deals_in_battery": window.deals.n_deals,
        "groups": {g.spec.kind: g.n for g in window.deals.groups},
        "excluded": {
            r["excluded"]: {"deals": r["len"], "why": EXCLUDED[r["excluded"]]}
            for r in excluded.iter_rows(named=True)
        },
    }


def audit_window(window: AuditWindow, *, limit: int = 500) -> AuditReport:
    """The audit of a loaded window (no database needed from here on)."""
    det = deterministic(window, limit)
    result = audit(window.deals) if window.deals.n_deals else None
    luck = player_luck(window.deals) if window.deals.n_deals else None
    verdicts: list[Verdict] = ["PASS" if det.ok else "FAIL"]
    verdicts += [result.verdict] if result else []
    verdicts += [luck.verdict] if luck else []
    notes = list(window.unknown)
    verdict: WindowVerdict = worst(verdicts)
    if not window.hands.height:
        notes.append("no hand matches these filters")
        verdict = NO_DATA
    elif result is None:
        notes.append("no deal of the window can go to the battery (see excluded)")
    charts = fairness_charts(window.deals, result, luck)
    return AuditReport(
        window.filters, _summary(window), det, result, luck, window.names, verdict, tuple(notes),
        charts,
    )


def run_audit(
    conn: duckdb.DuckDBPyConnection, filters: Filters | None = None, *, limit: int = 500
) -> AuditReport:
    """Load the window chosen by ``filters`` and audit it; at most ``limit`` failing hands listed."""
    return audit_window(load_window(conn, filters or Filters()), limit=limit)


# --------------------------------------------------------------------------- text output


def _p(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}" if x >= 1e-4 else f"{x:.1e}"


def format_text(report: AuditReport) -> str:
    """The human report of `replay audit`."""
    w, det = report.window, report.deterministic
    out = [f"Fairness audit -- filters: {report.filters.label()}"]
    out.append(
        f"window: {w['hands']:,} hands in {w['matches']:,} matches, {len(w['tables'])} tables, "
        f"{w['players']:,} players; {w['first'] or '?'} .. {w['last'] or '?'} (hand start, UTC)"
    )
    for p in w["profiles"]:
        est = f"  [rules marked estimate: {', '.join(p['estimates'])}]" if p["estimates"] else ""
        out.append(f"  profile {p['profile'] or '?'}: {p['hands']:,} hands, {p['matches']:,} matches{est}")
    out.append("")
    state = "nothing to check" if not det.hands else "OK" if det.ok else "FAILED"
    out.append(f"Deterministic checks (every hand of the window): {state}")
    out.append(f"  {'check':12} {'code':20} {'checked':>9} {'passed':>9} {'failed':>7} {'not checked':>12}")
    for c in det.checks:
        out.append(
            f"  {c.name:12} {c.code:20} {c.checked:>9,} {c.passed:>9,} {c.failed:>7,} {c.not_checked:>12,}"
        )
    if det.failing_total:
        more = f" (first {len(det.failing)} listed)" if det.failing_total > len(det.failing) else ""
        out.append(f"  failing hands: {det.failing_total:,}{more}")
        for f in det.failing:
            where = f"hand {f.hand}" if f.hand is not None else "anchor"
            extra = f"  {f.detail}" if f.detail else ""
            out.append(f"    {f.match} {where}: {', '.join(f.problems)}  {f.url}{extra}")
    out.append("")
    groups = ", ".join(f"{g} {n:,}" for g, n in w["groups"].items())
    out.append(f"Statistical battery: {w['deals_in_battery']:,} deals" + (f"; by group: {groups}" if groups else ""))
    for reason, e in w["excluded"].items():
        out.append(f"  left out: {e['deals']:,} deals, {reason} ({e['why']})")
    b = report.battery
    if b is None:
        out.append("  no deals to test")
    else:
        out.append(f"  {'test':26} {'statistic':>11} {'df':>7} {'p':>9} {'adj p':>9}  verdict")
        for t in b.full.tests:
            df = "-" if t.df is None else f"{t.df:.4g}"
            out.append(
                f"  {t.name:26} {t.statistic:>11.4g} {df:>7} {_p(t.p_value):>9} {_p(t.p_adjusted):>9}  {t.verdict}"
            )
        for s in b.full.skipped:
            out.append(f"  skipped {s.name}: {s.reason}")
        out.append(
            f"  window {b.full.verdict}; halves {b.halves[0].verdict} / {b.halves[1].verdict}; "
            f"battery verdict {b.verdict}"
        )
    luck = report.luck
    if luck is not None:
        tested = sum(1 for r in luck.players if r.pips_p is not None)
        out.append("")
        out.append(
            f"Per-player deal luck: {len(luck.players):,} players, {tested:,} with >= {luck.min_hands} hands "
            f"tested (Holm at {luck.alpha}); verdict {luck.verdict}"
        )
        for r in luck.players:
            if r.flagged:
                name = report.names.get(r.player, r.player)
                out.append(
                    f"  FLAGGED {r.player} ({name}): {r.hands} hands, pips z {r.pips_z:+.2f} "
                    f"(adj p {_p(r.pips_p_adjusted)}), doubles z "
                    f"{'-' if r.doubles_z is None else f'{r.doubles_z:+.2f}'} (adj p {_p(r.doubles_p_adjusted)})"
                )
        if not luck.flagged:
            out.append("  no player flagged")
    for note in report.notes:
        out.append(f"note: {note}")
    out.append("")
    out.append(f"Window verdict: {report.verdict}")
    return "\n".join(out) + "\n"
