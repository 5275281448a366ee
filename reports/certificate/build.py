"""A certificate's figures, computed from the store: one function, used to issue and to verify.

``compute`` takes a connection to the store, the data folder and the
scope (``Scope``: a period of hand start dates, optionally one table and
one profile) and returns the certificate's content as plain JSON values
plus its Merkle leaves. Everything in it is a function of the store's
rows and kept files and of the software: issuing twice gives the same
figures, and ``verify`` recomputes them and names any that differ. Only
``certificate.issued`` and ``software`` describe the issuing run itself.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import polars as pl

from reports.audit import AuditWindow, Filters, deterministic, load_window
from reports.battery import (
    BatteryReport,
    LuckReport,
    Verdict,
    escalate,
    player_luck,
    worst,
)
from reports.certificate import lines, merkle
from reports.certificate.identity import software_identity
from reports.certificate.power import (
    DEALS_ALPHA,
    LUCK_ALPHA,
    friend_limit,
    power_at,
    power_table,
)
from reports.targeted import battery_with_targeted

__all__ = ["FORMAT", "KINDS", "Leaves", "Scope", "compute", "leaf_rows"]

#: The certificate format's version (the JSON's layout).
FORMAT: Final = 1
#: Deals by kind, in the words of the certificate.
KINDS: Final = {
    "4p": "4 seats, no stock",
    "3p": "3 seats with a stock",
    "2p": "2 seats with a stock",
    "3p_aside": "3 seats, doubles set aside",
}
FAILING_LISTED: Final = 1000
_TAIL_NUMBER: Final = re.compile(r"^(.*?)(\d+)$")


@dataclass(frozen=True)
class Scope:
    """What a certificate covers: hands started from ``date_from`` to ``date_to`` (UTC, inclusive)."""

    date_from: dt.date
    date_to: dt.date
    table: str | None = None
    profile: str | None = None

    @property
    def filters(self) -> Filters:
        return Filters(table=self.table, profile=self.profile, date_from=self.date_from, date_to=self.date_to)

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.date_from.isoformat(), "to": self.date_to.isoformat(),
                "table": self.table, "profile": self.profile}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scope:
        return cls(dt.date.fromisoformat(d["from"]), dt.date.fromisoformat(d["to"]), d.get("table"), d.get("profile"))

    @classmethod
    def month(cls, text: str, table: str | None = None, profile: str | None = None) -> Scope:
        """A calendar month, ``YYYY-MM``.

        >>> Scope.month("2026-02").to_dict()["to"]
        '2026-02-28'
        """
        first = dt.date.fromisoformat(text + "-01")
        nxt = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        return cls(first, nxt - dt.timedelta(days=1), table, profile)


@dataclass(frozen=True, eq=False)
class Leaves:
    """The tree's leaves in order: table, match, hand, digest, lines; and their hashes."""

    rows: pl.DataFrame
    hashes: list[bytes]

    @property
    def root(self) -> str:
        return merkle.merkle_root(self.hashes).hex()


def leaf_rows(hands: pl.DataFrame, found: pl.DataFrame) -> Leaves:
    """One leaf per hand of the window and one (hand 0) per match, in the documented order.

    ``hands``: table, match, hand; ``found``: match, hand, digest, lines (of the log files).
    A hand with no line found hashes the empty text (and is listed as missing).
    """
    keys = hands.select(pl.col("table").cast(pl.String), "match", pl.col("hand").cast(pl.Int32))
    zero = keys.unique("match").with_columns(pl.lit(0, pl.Int32).alias("hand"))
    rows = (
        pl.concat([zero, keys])
        .unique(["match", "hand"])
        .join(found.with_columns(pl.col("hand").cast(pl.Int32)), on=["match", "hand"], how="left")
        .with_columns(
            pl.col("digest").fill_null(hashlib.sha256(b"").hexdigest()),
            pl.col("lines").fill_null(0),
            pl.col("table").fill_null(""),
        )
        .sort(["table", "match", "hand"])
    )
    # merkle.leaf_data's text, made a column at a time
    data = rows.select(pl.concat_str("table", "match", pl.col("hand").cast(pl.String), "digest", separator="\n"))
    sha = hashlib.sha256
    hashes = [sha(b"\x00" + d.encode()).digest() for d in data.to_series().to_list()]
    return Leaves(rows, hashes)


def _missing_ids(conn: duckdb.DuckDBPyConnection, ids: list[str]) -> list[str]:
    """Numbers missing from the period's numbered match ids.

    The log format numbers no match, but many servers end their ids in a
    counter (``m-32000-0012``). For each prefix, a number between the
    period's lowest and highest that no stored match has (at any table:
    ids are the platform's) is a match the desk never received.
    """
    series: dict[str, list[tuple[int, int]]] = {}
    for m in ids:
        got = _TAIL_NUMBER.match(m)
        if got:
            series.setdefault(got.group(1), []).append((int(got.group(2)), len(got.group(2))))
    wanted: list[str] = []
    for prefix, nums in sorted(series.items()):
        have = {n for n, _ in nums}
        width = min(w for _, w in nums)
        lo, hi = min(have), max(have)
        if hi - lo > 1_000_000:  # not a counter
            continue
        wanted += [f"{prefix}{n:0{width}d}" for n in range(lo, hi + 1) if n not in have]
    if not wanted:
        return []
    stored = {m for (m,) in conn.execute("SELECT match FROM matches WHERE list_contains($w, match)",
                                         {"w": wanted}).fetchall()}  # fmt: skip
    return [m for m in wanted if m not in stored]


def _gaps(conn: duckdb.DuckDBPyConnection, window: AuditWindow) -> dict[str, Any]:
    """Each table's first and last match, numbered match ids missing, and holes in hand numbers."""
    h = window.hands
    matches = (
        h.group_by("match")
        .agg(pl.col("table").first(), pl.col("started").min(), pl.col("hand").max().alias("max_hand"),
             pl.col("hand").n_unique().alias("n_hands"))
        .sort(["table", "started", "match"], nulls_last=True)
    )  # fmt: skip
    tables = [
        {"table": table, "matches": part.height, "first_match": part.get_column("match")[0],
         "last_match": part.get_column("match")[-1]}
        for (table,), part in matches.group_by(["table"], maintain_order=True)
    ]  # fmt: skip
    missing = _missing_ids(conn, sorted(matches.get_column("match").to_list()))
    holes = matches.filter(pl.col("max_hand") != pl.col("n_hands")).select("match", "max_hand", "n_hands")
    stored = conn.execute(
        "SELECT match FROM matches WHERE list_contains($m, match) AND result IS NULL ORDER BY match",
        {"m": h.get_column("match").unique().to_list()},
    ).fetchall()
    return {
        "tables": tables,
        "missing_match_ids": missing[:FAILING_LISTED],
        "missing_match_ids_total": len(missing),
        "matches_with_hand_holes": [
            {"match": m, "highest_hand": mx, "hands_in_period": n} for m, mx, n in holes.sort("match").iter_rows()
        ],
        "unfinished_matches": [m for (m,) in stored],
    }


def _unreadable(conn: duckdb.DuckDBPyConnection, matches: list[str]) -> dict[str, Any]:
    files = conn.execute(
        """SELECT lf.sha256, lf.path, lf.lines, lf.bad_lines FROM log_files lf
           WHERE lf.bad_lines > 0 AND lf.sha256 IN (SELECT sha256 FROM match_files WHERE list_contains($m, match))
           ORDER BY lf.path""",
        {"m": matches},
    ).fetchall()
    orphans = conn.execute(
        "SELECT coalesce(file, '?'), count(*) FROM findings WHERE match IS NULL GROUP BY 1 ORDER BY 1"
    ).fetchall()
    bad_matches = conn.execute(
        "SELECT match FROM matches WHERE verdict = 'unreadable' AND list_contains($m, match) ORDER BY 1",
        {"m": matches},
    ).fetchall()
    return {
        "files_with_bad_lines": [
            {"sha256": s, "path": p, "lines": n, "bad_lines": b} for s, p, n, b in files
        ],
        "lines_of_no_match": [{"file": f, "lines": n} for f, n in orphans],
        "unreadable_matches": [m for (m,) in bad_matches],
    }


def _evidence(conn: duckdb.DuckDBPyConnection, failing: list[dict[str, Any]]) -> None:
    """Add the findings' messages (the evidence) to the listed failing hands."""
    if not failing:
        return
    keys = [f"{f['match']}\x1f{f['hand'] or 0}" for f in failing]
    rows = conn.execute(
        """SELECT match, coalesce(hand, 0), list(code || ': ' || message ORDER BY seq NULLS FIRST, code)
           FROM findings WHERE list_contains($k, match || chr(31) || coalesce(hand, 0)::VARCHAR)
             AND code IN ('COMMIT_MISMATCH', 'REVEAL_MISSING', 'DEAL_MISMATCH', 'DRAW_MISMATCH',
                          'LEAD_DRAW_MISMATCH', 'SEED_REUSED')
           GROUP BY ALL""",
        {"k": keys},
    ).fetchall()
    by = {(m, h): msgs for m, h, msgs in rows}
    for f in failing:
        f["evidence"] = by.get((f["match"], f["hand"] or 0), [])


def _tests(report: BatteryReport) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "statistic": t.statistic, "df": t.df, "p": t.p_value,
         "p_adjusted": t.p_adjusted, "verdict": t.verdict, "deals": report.groups.get(t.name.split("[")[1][:-1], 0)}
        for t in report.tests
    ]  # fmt: skip


def _battery(window: AuditWindow) -> tuple[dict[str, Any] | None, Verdict]:
    deals = window.deals
    if not deals.n_deals:
        return None, "PASS"
    full = battery_with_targeted(deals, DEALS_ALPHA)
    halves = [battery_with_targeted(h, DEALS_ALPHA) for h in deals.split()]
    verdict = full.verdict
    if verdict == "FAIL" or escalate(halves) == "FAIL":
        verdict = "FAIL"
    return {
        "deals": deals.n_deals,
        "groups": dict(full.groups),
        "alpha": DEALS_ALPHA,
        "correction": "Holm step-down over every test of the window (family-wise error)",
        "tests": _tests(full),
        "skipped": [{"name": s.name, "reason": s.reason} for s in full.skipped],
        "halves": [{"deals": h.n_deals, "verdict": h.verdict} for h in halves],
        "window_verdict": full.verdict,
        "verdict": verdict,
    }, verdict


def _luck(luck: LuckReport | None, names: dict[str, str]) -> dict[str, Any] | None:
    if luck is None:
        return None
    tested = [r for r in luck.players if r.pips_p is not None]
    return {
        "alpha": luck.alpha,
        "correction": "Holm step-down over every (player, measure) with enough hands",
        "min_hands": luck.min_hands,
        "players": len(luck.players),
        "tested": len(tested),
        "flagged": [
            {"player": r.player, "name": names.get(r.player, r.player), "hands": r.hands,
             "pips_z": r.pips_z, "pips_p_adjusted": r.pips_p_adjusted,
             "doubles_z": r.doubles_z, "doubles_p_adjusted": r.doubles_p_adjusted}
            for r in luck.players if r.flagged
        ],
        "verdict": luck.verdict,
    }  # fmt: skip


def _power(n_deals: int) -> dict[str, Any]:
    table = power_table()
    sizes = list(table["sizes"])
    rows = []
    for cheat, row in table["cheats"].items():
        rate, how = power_at(list(row["rates"]), sizes, n_deals) if n_deals else (0.0, "no deals")
        rows.append({"cheat": cheat, "power": rate, "how": how, "caught_by": row.get("caught_by", "")})
    return {
        "deals": n_deals,
        "study": {"sizes": sizes, "windows_per_size": table["windows"], "tables": table["tables"],
                  "fair_windows": table["fair"]},
        "shufflers": rows,
        "friend_np_limit": friend_limit(n_deals // table["tables"]) if n_deals else 0.0,
    }  # fmt: skip


def compute(conn: duckdb.DuckDBPyConnection, data_dir: Path, scope: Scope) -> tuple[dict[str, Any], Leaves]:
    """The certificate's content for ``scope`` and its leaves (see the module doc)."""
    window = load_window(conn, scope.filters)
    h = window.hands
    match_ids = sorted(h.get_column("match").unique().to_list())
    files, missing_files = lines.store_files(conn, data_dir, match_ids)
    leaves = leaf_rows(h, lines.stored(conn, data_dir, match_ids))
    lacking = leaves.rows.filter(pl.col("lines") == 0).select("match", "hand")

    det = deterministic(window, FAILING_LISTED)
    failing = [
        {"match": f.match, "hand": f.hand, "table": f.table, "problems": list(f.problems), "detail": f.detail}
        for f in det.failing
    ]
    _evidence(conn, failing)
    battery, battery_verdict = _battery(window)
    luck_report = player_luck(window.deals, LUCK_ALPHA) if window.deals.n_deals else None
    luck = _luck(luck_report, window.names)

    started = h.get_column("started").drop_nulls()
    excluded = h.filter(pl.col("excluded").is_not_null()).group_by("excluded").len().sort("excluded")
    scope_out = {
        **scope.to_dict(),
        "tables": sorted(h.get_column("table").drop_nulls().unique().to_list()),
        "profiles": sorted(h.get_column("profile").drop_nulls().unique().to_list()),
        "matches": len(match_ids),
        "hands": h.height,
        "first_hand_started": started.min().isoformat() if started.len() else None,  # type: ignore[union-attr]
        "last_hand_started": started.max().isoformat() if started.len() else None,  # type: ignore[union-attr]
        "hands_by_seats_and_stock": [
            {"seats": p, "stock": s or "none", "hands": n}
            for p, s, n in h.group_by("players", "stock_rule").len().sort("players", "stock_rule",
                                                                          descending=[True, False]).iter_rows()
        ],
        "deals_in_battery_by_kind": {g.spec.kind: g.n for g in window.deals.groups},
        "kinds": KINDS,
        "hands_left_out_of_the_battery": {r["excluded"]: r["len"] for r in excluded.iter_rows(named=True)},
    }  # fmt: skip
    completeness = {
        "merkle_root": leaves.root,
        "leaves": len(leaves.hashes),
        "leaf_hash": "SHA-256(0x00 || table LF match LF hand LF hex SHA-256 of the hand's lines joined by LF)",
        "node_hash": "SHA-256(0x01 || left || right); an odd node is carried up (RFC 6962)",
        "order": "table, then match id (byte order), then hand number; hand 0 = the match's lines naming no hand",
        "log_lines": int(leaves.rows.get_column("lines").sum()),
        "kept_files": len(files),
        "kept_files_missing": missing_files,
        "hands_without_lines": [{"match": m, "hand": n} for m, n in lacking.head(FAILING_LISTED).iter_rows()],
        "hands_without_lines_total": lacking.height,
        **_gaps(conn, window),
        **_unreadable(conn, match_ids),
    }
    det_out = {
        "hands": det.hands,
        "checks": [{"name": c.name, "code": c.code, "what": c.what, "checked": c.checked, "passed": c.passed,
                    "failed": c.failed, "not_checked": c.not_checked} for c in det.checks],
        "failing_total": det.failing_total,
        "failing": failing,
        "ok": det.ok,
    }  # fmt: skip
    complete = not missing_files and lacking.height == 0
    verdicts: list[Verdict] = ["PASS" if det.ok else "FAIL", battery_verdict]
    verdicts += [luck_report.verdict] if luck_report else []
    verdict = worst(verdicts) if h.height else "NO DATA"
    content = {
        "certificate": {"format": FORMAT},
        "scope": scope_out,
        "completeness": {**completeness, "complete": complete},
        "software": software_identity(),
        "deterministic": det_out,
        "battery": battery,
        "power": _power(window.deals.n_deals),
        "luck": luck,
        "verdict": {
            "verdict": verdict,
            "level": f"99%: deal tests (battery and targeted) Holm at {DEALS_ALPHA:.2%}, player luck Holm at "
            f"{LUCK_ALPHA:.2%}; a fair server fails to PASS at most {DEALS_ALPHA + LUCK_ALPHA:.2%} of the time",
            "rule": "FAIL on any deterministic failure, any adjusted p below 1e-6, or a deviation in "
            "both halves of the period; WEAK on any adjusted p below its family's level; else PASS",
            "complete": complete,
        },
    }
    return content, leaves
