"""Live fairness monitoring: after each load, the battery on each busy table's latest deals.

After a load (the store's after-commit subscribers, ``reports.derived``),
``watch`` counts each table's stored hands. A table that has dealt at least
``STEP`` hands since the monitor last looked at it (or ``MIN_DEALS`` for a
first look) is checked: its latest ``WINDOW`` deals go through the battery
and the targeted tests (``reports.targeted``), one Holm family at
``ALPHA``. Any test below it raises an alert: a row of ``fairness_alerts``
(migration 015), shown as a banner on /fairness and listed at
/api/fairness/alerts, and, when ``REPLAY_ALERT_URL`` is set, POSTed there as
JSON.

The level. A busy table deals a hand about every two minutes, round the
clock: 720 deals a day, 262,800 a year, so at most 262,800 / ``STEP`` =
263 checks a year. Each check is a Holm family at ``ALPHA``, so a fair
table alarms on a check with chance at most ``ALPHA``, and the expected
number of alarms a year is at most 263 x ``ALPHA`` = 0.26 (the union
bound; overlapping windows only make it smaller): less than once a year,
with room for the normal approximations' tails. ``STEP`` keeps the cost
of a load in check: a load of N hands makes about N / ``STEP`` checks of
a few tens of milliseconds each, whatever the number of tables. ``bench/fairness_power.py --monitor`` measures the rate on fair
tables and how many deals after a broken shuffler starts the alarm comes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Final

import duckdb
import numpy as np
import polars as pl

from reports.audit import Filters, load_window
from reports.battery import BatteryReport, DealWindow
from reports.targeted import battery_with_targeted

__all__ = [
    "ALPHA",
    "ALERT_URL_ENV",
    "BUSY_DEALS_A_YEAR",
    "MIN_DEALS",
    "STEP",
    "WINDOW",
    "alerts",
    "check_window",
    "expected_false_alarms_a_year",
    "last_deals",
    "post_alert",
    "settings",
    "watch",
]

#: The latest deals of a table the monitor tests.
WINDOW: Final = 2000
#: New deals at a table before it is tested again.
STEP: Final = 1000
#: Deals a table needs before its first test.
MIN_DEALS: Final = 500
#: The family-wise level of one check (see the module doc for how it was chosen).
ALPHA: Final = 1e-3
#: A busy table: a hand every two minutes, every day of the year.
BUSY_DEALS_A_YEAR: Final = 30 * 24 * 365
ALERT_URL_ENV: Final = "REPLAY_ALERT_URL"
_POST_TIMEOUT: Final = 5.0
_lock = threading.Lock()


def expected_false_alarms_a_year(alpha: float = ALPHA, step: int = STEP) -> float:
    """Union bound on a fair busy table's false alarms a year.

    >>> round(expected_false_alarms_a_year(), 2)
    0.26
    """
    return BUSY_DEALS_A_YEAR / step * alpha


def last_deals(window: DealWindow, n: int) -> DealWindow:
    """The ``n`` latest deals of a window (by deal order), groups kept."""
    orders = np.sort(np.concatenate([g.order for g in window.groups])) if window.groups else np.array([])
    if len(orders) <= n:
        return window
    cut = orders[-n]
    parts = [g.take(np.flatnonzero(g.order >= cut)) for g in window.groups]
    return DealWindow(tuple(p for p in parts if p.n), window.player_ids, window.table_ids)


def check_window(window: DealWindow, alpha: float = ALPHA) -> BatteryReport:
    """One check: the battery and the targeted tests over the window, Holm at ``alpha``."""
    return battery_with_targeted(window, alpha)


@dataclass(frozen=True)
class Alert:
    table: str
    deals: int
    first_match: str | None
    last_match: str | None
    verdict: str
    tests: list[dict[str, Any]]

    def to_dict(self, alert: int, raised_at: dt.datetime) -> dict[str, Any]:
        return {"alert": alert, "table": self.table, "raised_at": raised_at.isoformat(),
                "deals": self.deals, "first_match": self.first_match, "last_match": self.last_match,
                "verdict": self.verdict, "tests": self.tests, "alpha": ALPHA}  # fmt: skip


def post_alert(url: str, body: dict[str, Any]) -> str | None:
    """POST the alert's JSON; None when it went through, else why not."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=_POST_TIMEOUT) as resp:  # noqa: S310 -- the operator's URL
            return None if 200 <= resp.status < 300 else f"HTTP {resp.status}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return str(exc)


def _due(conn: duckdb.DuckDBPyConnection) -> list[tuple[str, int]]:
    return [
        (t, int(n))
        for t, n in conn.execute(
            """SELECT m.table_id, count(*) AS n FROM hands h JOIN matches m USING (match)
               WHERE m.table_id IS NOT NULL GROUP BY 1
               HAVING n >= coalesce((SELECT f.deals FROM fairness_monitor f WHERE f.table_id = m.table_id)
                                    + $step, $min)
               ORDER BY 1""",
            {"step": STEP, "min": MIN_DEALS},
        ).fetchall()
    ]


def _since(conn: duckdb.DuckDBPyConnection, tables: list[str]) -> dt.date | None:
    """The earliest day among the due tables' ``WINDOW``-th latest hands: one window, read from
    there on, holds every due table's latest deals (not each table's whole history)."""
    rows = conn.execute(
        """SELECT min(started) FROM (
               SELECT h.started, row_number() OVER (PARTITION BY m.table_id ORDER BY h.started DESC) AS k
               FROM hands h JOIN matches m USING (match)
               WHERE list_contains($t, m.table_id) AND h.started IS NOT NULL)
           WHERE k <= $n""",
        {"t": tables, "n": WINDOW},
    ).fetchall()
    first = rows[0][0] if rows else None
    return first.astimezone(dt.UTC).date() if isinstance(first, dt.datetime) else None


def _check_table(hands: pl.DataFrame, table: str) -> tuple[BatteryReport | None, Alert | None]:
    """Check one table's latest deals, from the hands of the window the due tables share."""
    mine = hands.filter((pl.col("table") == table) & pl.col("excluded").is_null()).tail(WINDOW)
    if mine.height < MIN_DEALS:
        return None, None
    deals = DealWindow.from_frame(mine.select("table", "match", "hand", "players", "deck", "seat_players"))
    report = check_window(deals)
    if report.verdict == "PASS":
        return report, None
    failing = [{"name": t.name, "p": t.p_value, "p_adjusted": t.p_adjusted, "statistic": t.statistic}
               for t in report.tests if t.verdict != "PASS"]  # fmt: skip
    first, last = mine.get_column("match")[0], mine.get_column("match")[-1]
    return report, Alert(table, deals.n_deals, first, last, report.verdict, failing)


def watch(conn: duckdb.DuckDBPyConnection) -> int:
    """The after-load subscriber: check every table that is due; the number of alerts raised."""
    with _lock:  # two loads at once would check a table twice
        raised = 0
        now = dt.datetime.now(dt.UTC)
        url = os.environ.get(ALERT_URL_ENV) or None
        due = _due(conn)
        # one read: the due tables' hands from the earliest day any of them needs, deals only
        tables = tuple(t for t, _ in due)
        hands = (load_window(conn, Filters(date_from=_since(conn, list(tables)), tables=tables), seeds=False).hands
                 if due else pl.DataFrame())  # fmt: skip
        for table, n in due:
            report, alert = _check_table(hands, table)
            p_min = min((t.p_adjusted for t in report.tests), default=None) if report else None
            conn.execute(
                "INSERT OR REPLACE INTO fairness_monitor VALUES (?, ?, ?, ?, ?)",
                [table, n, now, report.verdict if report else "TOO FEW DEALS", p_min],
            )
            if alert is None:
                continue
            ((next_id,),) = conn.execute("SELECT coalesce(max(alert), 0) + 1 FROM fairness_alerts").fetchall()
            body = alert.to_dict(int(next_id), now)
            error = post_alert(url, body) if url else None
            conn.execute(
                "INSERT INTO fairness_alerts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [next_id, table, now, alert.deals, alert.first_match, alert.last_match, alert.verdict,
                 json.dumps(alert.tests), None if url is None else error is None, error],
            )  # fmt: skip
            raised += 1
        return raised


def settings() -> dict[str, Any]:
    """The monitor's window, step, level and the false-alarm bound they give."""
    return {"window": WINDOW, "step": STEP, "min_deals": MIN_DEALS, "alpha": ALPHA,
            "busy_table_deals_a_year": BUSY_DEALS_A_YEAR,
            "expected_false_alarms_a_year": expected_false_alarms_a_year(),
            "alert_url_set": bool(os.environ.get(ALERT_URL_ENV))}  # fmt: skip


def alerts(conn: duckdb.DuckDBPyConnection, limit: int = 100) -> list[dict[str, Any]]:
    """The latest alerts, newest first."""
    rows = conn.execute(
        """SELECT alert, table_id, raised_at, deals, first_match, last_match, verdict, tests, posted, post_error
           FROM fairness_alerts ORDER BY alert DESC LIMIT ?""",
        [limit],
    ).fetchall()
    return [
        {"alert": a, "table": t, "raised_at": r.isoformat() if r else None, "deals": d, "first_match": f,
         "last_match": la, "verdict": v, "tests": json.loads(tests), "posted": p, "post_error": e}
        for a, t, r, d, f, la, v, tests, p, e in rows
    ]  # fmt: skip
