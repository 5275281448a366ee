"""Fitting the store's play models, and refitting them once enough new hands arrived.

:func:`fit_store` fits one model per family of profiles (partnership,
boneyard, individual: :func:`replay.belief.family`) on the latest valid
stored hands, a fifth of them held out (:func:`replay.belief.data.held_out`),
and stores each as the family's next version (:mod:`replay.store.models`).
:func:`refit_due` says when the hands stored since a family's last fit make
a new one worth it; the consumers of the models refit first (``replay
analyze --db`` with sampling, the server's background grading), so a load
never waits on a fit.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any, Final

import duckdb
import orjson

from replay.analysis.grades import resolve_options
from replay.analysis.stored import stored_inputs
from replay.belief.data import Choice, hand_choices, held_out
from replay.belief.features import FEATURES
from replay.belief.model import MODEL_VERSION, family
from replay.belief.train import Fitted, train
from replay.store.models import save_model

__all__ = ["FIT_MATCHES", "MIN_CHOICES", "REFIT_GROWTH", "fit_store", "refit_due", "stored_hands"]

#: A family is fitted from this many choices on (fewer tell too little).
MIN_CHOICES: Final = 200

#: A fit reads the latest this many valid matches (by start): enough for
#: about twenty features, and a fit of a few tens of seconds at most.
FIT_MATCHES: Final = 2000

#: A family is refitted once its valid stored hands grew by this fraction
#: since its last fit (and by at least :data:`REFIT_MIN_HANDS`).
REFIT_GROWTH: Final = 0.25
REFIT_MIN_HANDS: Final = 100

_LATEST = """
SELECT match, started, rules FROM matches WHERE verdict = 'valid' AND replay IS NOT NULL AND rules IS NOT NULL
ORDER BY started DESC NULLS LAST, match DESC LIMIT ?
"""


def stored_hands(conn: duckdb.DuckDBPyConnection, since: datetime | None = None) -> dict[str, int]:
    """Valid finished hands stored, by family of profiles; with `since`,
    only those of matches started after it."""
    where = "" if since is None else "AND m.started > ?"
    rows = conn.execute(f"""
        SELECT m.rules, count(*) FROM hands h JOIN matches m USING (match)
        WHERE m.verdict = 'valid' AND m.rules IS NOT NULL AND h.result IN ('domino', 'block') {where}
        GROUP BY m.rules
    """, [] if since is None else [since]).fetchall()  # fmt: skip
    out: dict[str, int] = defaultdict(int)
    for rules, n in rows:
        try:
            out[family(resolve_options(orjson.loads(rules)))] += int(n)
        except ValueError:
            continue
    return dict(out)


def refit_due(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """The families with enough valid hands newer than their last fit's
    window (a fraction :data:`REFIT_GROWTH` of the hands it was fitted on,
    at least :data:`REFIT_MIN_HANDS`), or with none yet and that many
    hands, or whose last fit is of older features (:data:`MODEL_VERSION`)."""
    last = {fam: (hands, until, mv) for fam, hands, until, mv in conn.execute(
        "SELECT family, hands, last_started, model_version FROM play_models "
        "QUALIFY row_number() OVER (PARTITION BY family ORDER BY version DESC) = 1"
    ).fetchall()}  # fmt: skip
    due = [fam for fam, n in stored_hands(conn).items() if fam not in last and n >= REFIT_MIN_HANDS]
    for fam, (hands, until, mv) in last.items():
        if mv != MODEL_VERSION:
            due.append(fam)
            continue
        if until is None:
            continue
        new = stored_hands(conn, until).get(fam, 0)
        if new >= max(REFIT_MIN_HANDS, REFIT_GROWTH * hands):
            due.append(fam)
    return sorted(due)


def fit_store(conn: duckdb.DuckDBPyConnection, min_choices: int = MIN_CHOICES, *,
              families: list[str] | None = None, matches: int = FIT_MATCHES) -> list[dict[str, Any]]:  # fmt: skip
    """Fit and store every family (of `families`, default all) with enough
    choices in the latest `matches` valid matches; one summary a family."""
    rows = conn.execute(_LATEST, [matches]).fetchall()
    started = {m: t for m, t, _ in rows}
    fitting: dict[str, list[Choice]] = defaultdict(list)
    held: dict[str, list[Choice]] = defaultdict(list)
    tables: dict[tuple[str, bool], list[tuple[str | None, ...]]] = defaultdict(list)  # each choice's players
    seen: dict[str, set[str]] = defaultdict(set)
    hands: dict[str, int] = defaultdict(int)
    for match, inputs in stored_inputs(conn, sorted(started)):
        for inp in inputs:
            fam = family(inp.rules)
            if families is not None and fam not in families:
                continue
            got = hand_choices(inp)
            if not got:
                continue
            kept = held_out(match, inp.hand)
            (held if kept else fitting)[fam].extend(got)
            players = inp.players or (None,) * inp.rules.players
            tables[fam, kept].extend([players] * len(got))
            seen[fam].add(match)
            hands[fam] += 1
    out = []
    for fam in sorted(fitting):
        if len(fitting[fam]) < min_choices:
            continue
        fitted = train(fam, fitting[fam], held[fam], fitting_players=tables[fam, False],
                       held_players=tables[fam, True])  # fmt: skip
        times = [t for m in seen[fam] if (t := started.get(m)) is not None]
        window: tuple[datetime | None, datetime | None] = (min(times), max(times)) if times else (None, None)
        version = save_model(conn, fitted, window=window, matches=len(seen[fam]), hands=hands[fam])
        out.append(summary(fitted, version, len(seen[fam]), hands[fam]))
    return out


def summary(f: Fitted, version: int, matches: int, hands: int) -> dict[str, Any]:
    """One fit as ``replay model fit --json`` writes it."""
    return {
        "family": f.model.family, "version": version, "matches": matches, "hands": hands,
        "train_choices": f.train_choices, "test_choices": f.test_choices,
        "loglik_model": f.loglik_model, "loglik_uniform": f.loglik_uniform,
        "loglik_heuristic": f.loglik_heuristic, "beats_uniform": f.beats_uniform,
        "coef": dict(zip(FEATURES, f.model.coef, strict=True)),
        "loglik_family": f.loglik_family, "players": len(f.model.players),
    }  # fmt: skip
