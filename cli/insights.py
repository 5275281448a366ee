"""`replay insights`: the cheat signals of the stored players (`reports.cheats`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import duckdb

from api.grading import progress, store_counts
from cli.common import emit, opened_store
from replay.store import default_db_path
from reports.cheats import AUDIT_HANDS, AUDIT_SAMPLES, audit_player, format_text, suspicious

__all__ = ["add_insights_parser", "run_insights"]


def add_insights_parser(subparsers: Any) -> None:
    """Add `insights` to the `replay` command's subparsers (sets `func`)."""
    p = subparsers.add_parser(
        "insights",
        help="cheat signals of the stored players; a partner-peeking audit",
        description="List every player with analysed hands and the two cheat signals of "
        "docs/insights.md (the omniscience index; the partner-peeking index of audited players), "
        "the most suspicious first. --audit grades a player's partner-peeking index (the store "
        "must not be held by a server: use its POST /api/suspicious/audit then). Exit 0 when "
        "nobody is flagged, 1 when somebody is, 2 for a usage error or a store that cannot be opened, "
        "3 when the signals are not computed yet (no decision graded on what the players could know).",
    )
    p.add_argument("--db", default=None, help="database file (default $REPLAY_DB or ./data/replay.duckdb)")
    p.add_argument("--json", action="store_true", help="print the JSON of /api/suspicious")
    p.add_argument("--bots", action="store_true", help="list marked bots too")
    p.add_argument("--min-hands", type=int, default=0, metavar="N", help="players with at least N analysed hands")
    p.add_argument("--audit", action="append", default=[], metavar="PLAYER",
                   help="grade the partner-peeking index of PLAYER first (repeat for more)")  # fmt: skip
    p.add_argument("--hands", type=int, default=AUDIT_HANDS,
                   help=f"an audit grades the player's latest N pair-game hands (default {AUDIT_HANDS})")  # fmt: skip
    p.add_argument("--samples", type=int, default=AUDIT_SAMPLES,
                   help=f"sampled deals a decision in an audit (default {AUDIT_SAMPLES})")  # fmt: skip
    p.add_argument("--workers", type=int, default=2, help="grading processes of an audit (default 2; 0: this one)")
    p.set_defaults(func=run_insights)


def run_insights(args: argparse.Namespace) -> int:
    """`replay insights`: 0 when nobody is flagged, 1 when somebody is, 2 for a
    usage error or a store that cannot be opened, 3 while the signals are not
    computed yet."""
    db = args.db or default_db_path()
    if not 1 <= args.hands <= 100_000 or not 1 <= args.samples <= 1000:
        sys.stderr.write("replay insights: --hands must be 1..100000 and --samples 1..1000\n")
        return 2
    locked = (
        "{db} is held by another process (a server or an ingest). Use the server's "
        "/api/suspicious and POST /api/suspicious/audit, or stop it and retry."
    )
    with opened_store(db, read_only=not args.audit, locked=locked, unreadable="cannot open {db}",
                      errors=(duckdb.Error, RuntimeError, OSError)) as conn:  # fmt: skip
        for player in args.audit:
            if not conn.execute("SELECT 1 FROM skill_rows WHERE player = ? AND partner IS NOT NULL LIMIT 1",
                                [player]).fetchall():  # fmt: skip
                sys.stderr.write(f"replay insights: {player!r} has no analysed hand of a pair game\n")
                return 2
            sys.stderr.write(f"auditing {player}: its latest {args.hands} pair-game hands, {args.samples} deals a decision\n")
            audit_player(conn, player, hands=args.hands, samples=args.samples, workers=args.workers)
        data = suspicious(conn, bots=args.bots, min_hands=args.min_hands)
        total, graded = store_counts(conn)
    # no background grading runs while this command holds the store: no pace, no time left
    data["grading"] = progress(graded, total, None, running=False)
    pending = bool(data["graded"]["decisions"]) and not data["graded"]["sampled"]
    if pending:  # "0 flagged" would read as a clean table
        data["flagged"] = None
    emit(args.json, lambda: data, lambda: _text(data, pending))
    return 3 if pending else 1 if data["flagged"] else 0


def _text(data: dict[str, Any], pending: bool) -> str:
    """format_text's list, its first line saying so when the signals are not computed yet."""
    text = format_text({**data, "flagged": data["flagged"] or 0})
    if not pending:
        return text
    g = data["grading"]
    first, _, rest = text.partition("\n")
    return (f"{data['players']} players with analysed hands: the signals are not computed yet, no player is "
            f"cleared or flagged ({g['graded']:,} of {g['total']:,} decisions graded on what the players "
            f"could know)\n{rest}")
