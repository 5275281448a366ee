"""The store's play models (migration 016): every fit kept, the newest used.

:func:`save_model` adds a family's next fit with its training window and
held-out scores; :func:`latest_models` gives, per family, the newest model
of the current features' version (:data:`replay.belief.MODEL_VERSION`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import orjson

from replay.belief.model import MODEL_VERSION, PlayModel
from replay.belief.train import Fitted, beats_uniform
from replay.store.schema import one

__all__ = ["StoredModel", "latest_models", "save_model"]


@dataclass(frozen=True, slots=True)
class StoredModel:
    """A stored fit: the model, its number and its held-out scores (nats a choice)."""

    model: PlayModel
    version: int
    loglik_model: float | None
    loglik_uniform: float | None
    loglik_heuristic: float | None

    @property
    def beats_uniform(self) -> bool:
        return beats_uniform(self.loglik_model, self.loglik_uniform)


def save_model(conn: duckdb.DuckDBPyConnection, fitted: Fitted, *, window: tuple[datetime | None, datetime | None],
               matches: int, hands: int) -> int:  # fmt: skip
    """Store `fitted` as its family's next version; that version."""
    family = fitted.model.family
    row = one(conn, "SELECT coalesce(max(version), 0) FROM play_models WHERE family = ?", [family])
    version = int(row[0]) + 1 if row else 1
    conn.execute(
        "INSERT INTO play_models VALUES (?, ?, ?, now(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [family, version, MODEL_VERSION, window[0], window[1], matches, hands, fitted.train_choices,
         fitted.test_choices, fitted.loglik_model, fitted.loglik_uniform, fitted.loglik_heuristic,
         orjson.dumps(fitted.model.to_json()).decode()],
    )  # fmt: skip
    return version


def latest_models(conn: duckdb.DuckDBPyConnection) -> dict[str, StoredModel]:
    """Per family, the newest stored model of the current features' version."""
    rows: list[Any] = conn.execute(
        "SELECT family, version, loglik_model, loglik_uniform, loglik_heuristic, model FROM play_models "
        "WHERE model_version = ? QUALIFY row_number() OVER (PARTITION BY family ORDER BY version DESC) = 1",
        [MODEL_VERSION],
    ).fetchall()
    return {
        fam: StoredModel(PlayModel.from_json(orjson.loads(body)), int(v), lm, lu, lh)
        for fam, v, lm, lu, lh, body in rows
    }
