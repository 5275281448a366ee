"""What the reports keep in the store, and their subscription to its commits.

The store derives its own tables; the kept player reports (migration 007),
the ratings with their pages (013, 014), the player insights (014) and the
fairness monitor's alerts (015) are the reports package's figures, which
the store only has kept current after each load or delete. :func:`subscribe` hands them to the store's hooks
(:mod:`replay.store.hooks`); the composition roots call it once: the
``replay`` command and the app factory (``api.app.create_app``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import duckdb

from replay.store import hooks
from reports.leaderboard import keep_rating_pages
from reports.monitor import watch
from reports.player import store_reports
from reports.ratings import refresh_ratings
from reports.skill import refresh_insights

__all__ = ["keep_ratings", "keep_reports", "subscribe"]


def keep_reports(conn: duckdb.DuckDBPyConnection) -> int:
    """Work out the kept player reports (migration 007) that are missing:
    those the last derivation forgot, or a crash left undone."""
    return store_reports(conn)


def keep_ratings(conn: duckdb.DuckDBPyConnection) -> int:
    """Bring the ratings (migration 013, reports.ratings), their pages
    (reports.leaderboard) and the player insights (migration 014,
    reports.skill) up to date with the matches stored: only what changed is
    rated or summed; nothing changed is a few queries. The two run side by
    side, the insights in a thread on a cursor (and so a transaction) of
    their own: the ratings are Python on the GIL, the insights DuckDB off
    it. The number of matches rated."""
    with conn.cursor() as cur, ThreadPoolExecutor(1, thread_name_prefix="replay-insights") as pool:
        summed = pool.submit(refresh_insights, cur)
        try:
            rated = refresh_ratings(conn, then=keep_rating_pages)
        finally:
            summed.result()
    return rated


def subscribe() -> None:
    """Have the store keep the reports' tables after its commits (once is enough)."""
    hooks.on_players(keep_reports)
    hooks.on_matches(keep_ratings)
    hooks.on_matches(watch)  # the live fairness monitor (reports.monitor)
