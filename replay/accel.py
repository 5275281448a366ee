"""The optional C accelerator (``replay/_native.c``), or ``None``.

Every function of it has a pure-Python twin that stays the reference: the
deal-v1 shuffle (:mod:`replay.deal`), the reading of canonical log lines
(:mod:`replay.canonical_reader`), the replay of a clean hand (:mod:`replay.engine`),
a match's scoring (:mod:`replay.match`), the solver
(:class:`replay.solver.PySolver`) and a play model's log-probability of a
past play (:mod:`replay.belief.weights`). Set ``REPLAY_PURE=1`` to run without it
(the tests compare both paths).

>>> native is None or native.MOVE_SIZE == 24
True
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("REPLAY_PURE"):
        return None
    try:
        return importlib.import_module("replay._native")
    except ImportError:  # not compiled here: the pure-Python path
        return None


native: ModuleType | None = _load()

__all__ = ["native"]
