"""`replay model fit`: fit the play models of the stored hands (`replay.belief`).

    replay model fit [--db FILE] [--min-choices N] [--json]

Per family of profiles (partnership, boneyard, individual): the choices of
every valid stored hand, a fifth of the hands held out
(`replay.belief.data.held_out`), a conditional logit fitted on the rest and
scored on them against every legal move alike and a fixed rule of thumb;
the fit is stored as the family's next version (table ``play_models``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import duckdb

from cli.common import emit, opened_store
from cli.words import count
from replay.analysis.refit import MIN_CHOICES, fit_store
from replay.store import default_db_path

__all__ = ["add_model_parser", "fit_store", "run_model"]

def add_model_parser(subparsers: Any) -> None:
    """Add `model` to the `replay` command's subparsers (sets `func`)."""
    p = subparsers.add_parser(
        "model",
        help="the play models that weigh what a player could read (docs/belief.md)",
        description="Fit the play model of each family of profiles on the store's valid hands, score it "
        "on held-out hands and store it as the family's next version. Exit 0 when a model was stored, "
        "1 when no family had enough choices, 2 for a usage error or a store that cannot be opened.",
    )
    sub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    f = sub.add_parser("fit", help="fit and store the play models")
    f.add_argument("--db", default=None, help="database file (default $REPLAY_DB or ./data/replay.duckdb)")
    f.add_argument("--min-choices", type=int, default=MIN_CHOICES, metavar="N",
                   help=f"fit a family from N fitted choices on (default {MIN_CHOICES})")  # fmt: skip
    f.add_argument("--json", action="store_true", help="print the fits as JSON")
    f.set_defaults(func=run_model)


def _text(fits: list[dict[str, Any]]) -> str:
    if not fits:
        return "no family of profiles has enough choices to fit a play model\n"
    lines = []
    for f in fits:
        def nats(x: float | None) -> str:
            return "-" if x is None else f"{x:.3f}"

        lines.append(
            f"{f['family']} v{f['version']}: {count(f['matches'], 'match', 'matches')}, {count(f['hands'], 'hand')}, "
            f"{f['train_choices']} choices fitted, {f['test_choices']} held out; held-out log-likelihood a "
            f"choice {nats(f['loglik_model'])} nats (uniform {nats(f['loglik_uniform'])}, rule of thumb "
            f"{nats(f['loglik_heuristic'])}){'' if f['beats_uniform'] else ': not better than uniform, unused'}"
        )
    return "\n".join(lines) + "\n"


def run_model(args: argparse.Namespace) -> int:
    """`replay model fit`: 0 when a model was stored, 1 when none could be, 2 for a usage error."""
    if args.min_choices < 1:
        sys.stderr.write("replay model: --min-choices must be at least 1\n")
        return 2
    db = args.db or default_db_path()
    locked = "{db} is held by another process (a server or an ingest): stop it and retry"
    with opened_store(db, read_only=False, locked=locked, unreadable="cannot open {db}",
                      errors=(duckdb.Error, RuntimeError, OSError)) as conn:  # fmt: skip
        fits = fit_store(conn, args.min_choices)
    emit(args.json, lambda: {"models": fits}, lambda: _text(fits))
    return 0 if fits else 1
