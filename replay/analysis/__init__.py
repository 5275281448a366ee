"""The analysis of hands: the value of every move, exactly and as the player could know it.

- `grades`: one hand's analysis (`Analyzer`, `HandAnalysis`): the solver's
  exact values, the sampled values over the deals the mover could face,
  the points lost, the classes and the accuracy; the hands' inputs from a
  validation report or a stored replay, and the store's rows of the
  results. Its public names are re-exported here.
- `run`: analysing many matches: a pool of processes or a cluster, logs
  (`analyze_paths`) or what a store lacks (`analyze_store`), the JSON
  contract of docs/analysis.md (`to_json`). Imported as
  ``replay.analysis.run``, not from here: it uses the ingest's code
  version, and the ingest's worker imports this package.

The command line, `replay analyze`, is `cli.analyze`.
"""

from replay.analysis.grades import (
    ANALYSIS_VERSION,
    CLASSES,
    EXACT_LIMIT,
    NOT_OVER,
    SAMPLES,
    THRESHOLDS,
    Alternative,
    Analyzer,
    HandAnalysis,
    HandInput,
    Ply,
    accuracy,
    analysis_tables,
    analysis_weight,
    analyze,
    analyze_tables,
    classify,
    decision_rng,
    engine_move,
    hindsight,
    inputs_from_replay,
    inputs_from_report,
    resolve_options,
)

__all__ = [
    "ANALYSIS_VERSION",
    "CLASSES",
    "EXACT_LIMIT",
    "NOT_OVER",
    "SAMPLES",
    "THRESHOLDS",
    "Alternative",
    "Analyzer",
    "HandAnalysis",
    "HandInput",
    "Ply",
    "accuracy",
    "analysis_tables",
    "analysis_weight",
    "analyze",
    "analyze_tables",
    "classify",
    "decision_rng",
    "engine_move",
    "hindsight",
    "inputs_from_replay",
    "inputs_from_report",
    "resolve_options",
]
