"""What a player could read from the other seats' choices (docs/belief.md).

- :mod:`~replay.belief.history`: a hand's public history, ply by ply
  (:class:`Recorder`, a :class:`replay.knowledge.Tracker` that keeps it);
- :mod:`~replay.belief.features`, :mod:`~replay.belief.model`: the play
  model, a conditional logit per family of profiles;
- :mod:`~replay.belief.weights`: the weighted belief, the deals a seat
  could face weighted by the other seats' observed choices;
- :mod:`~replay.belief.calibration`: how well a belief puts the hidden
  tiles where they are (per-tile log-loss, a reliability table);
- :mod:`~replay.belief.data`, :mod:`~replay.belief.train`: the choices of
  stored hands, the held-out split, a family's fit and its held-out scores;
- :mod:`~replay.belief.selfplay`: hands played by bots in memory (what the
  calibration is measured on).

No I/O here: the store's models table is read and written by the command
(``replay model fit``, :mod:`cli.model`).
"""

from replay.belief.calibration import Reliability, tile_log_loss
from replay.belief.features import FEATURES, move_features
from replay.belief.history import Ply, Public, Recorder, public_view
from replay.belief.model import (
    HEURISTIC,
    MODEL_VERSION,
    UNIFORM,
    PlayModel,
    Policy,
    choice,
    family,
    fit,
    log_likelihood,
)
from replay.belief.weights import Belief, Evidence, evidence, weighted_belief

__all__ = [
    "FEATURES", "HEURISTIC", "MODEL_VERSION", "UNIFORM", "Belief", "Evidence", "PlayModel", "Ply", "Policy",
    "Public", "Recorder", "Reliability", "choice", "evidence", "family", "fit", "log_likelihood", "move_features",
    "public_view", "tile_log_loss", "weighted_belief",
]  # fmt: skip
