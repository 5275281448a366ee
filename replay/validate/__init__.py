"""The validator: replays each match through the engine and collects findings.

- `replayer`: `MatchReplayer`, one match's events through the engine, the
  findings of play, deals, seeds and claims; `validate_match`.
- `order`: lines into matches and events into seq order; the findings about
  lines and order (SEQ_*, TIME_ORDER); `locate` names a finding's line.
- `crossmatch`: what needs several matches: rematches after their match,
  seeds used twice (SEED_REUSED).
- `fast_path`: a clean match validated at the level of hands (C deals,
  hand replay and scorer), or ``None`` to go line by line.
- `run`: files and folders in, one `ValidationReport` out (`validate_paths`,
  the command line's JSON contract), by the C fast path
  (`replay.validate.fast_path`) where a match allows it.
"""

from replay.validate.crossmatch import first_leader, seed_reuse, validate_in_order, with_findings
from replay.validate.order import Record, group_records, line_finding, locate
from replay.validate.replayer import MatchReplayer, validate_match
from replay.validate.run import (
    report_json,
    validate_grouped,
    validate_paths,
    validate_sources,
    without_gc,
)

__all__ = [
    "MatchReplayer",
    "Record",
    "first_leader",
    "group_records",
    "line_finding",
    "locate",
    "report_json",
    "seed_reuse",
    "validate_grouped",
    "validate_in_order",
    "validate_match",
    "validate_paths",
    "validate_sources",
    "with_findings",
    "without_gc",
]
