"""Validating a run: files and folders in, one report out.

`validate_paths` is what `replay validate` runs. With the C accelerator the
scanner reads the files and a clean match in one file is validated hand by
hand in C (`replay.validate.fast_path`); any other match, and every match without C,
goes line by line through `MatchReplayer`. Both give the same report.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from replay import events as ev
from replay.accel import native
from replay.canonical_reader import Source, scan_paths
from replay.findings import FileReport, Finding, MatchReport, ValidationReport
from replay.reader import EventLine, LogReader, iter_paths
from replay.validate.crossmatch import validate_in_order
from replay.validate.fast_path import fast_report
from replay.validate.order import Record, group_records
from replay.validate.replayer import validate_match


def validate_grouped(
    by_match: Mapping[str, Sequence[Record]], *, keep_moves: bool = False
) -> list[MatchReport]:
    """Validate every match; rematches after the match they follow."""
    rematch_of: dict[str, str] = {}
    for mid, recs in by_match.items():
        for rec in recs:
            if isinstance(rec, EventLine) and isinstance(rec.event, ev.MatchStart):
                if rec.event.rematch_of:
                    rematch_of[mid] = rec.event.rematch_of
                break

    def one(mid: str, leaders: Mapping[str, int | None]) -> MatchReport:
        return validate_match(by_match[mid], rematch_leaders=leaders, keep_moves=keep_moves)

    return validate_in_order(list(by_match), rematch_of, one)


def validate_sources(
    by_match: Mapping[str, Sequence[Source]], *, keep_moves: bool = False
) -> list[MatchReport]:
    """:func:`validate_grouped` over what :func:`replay.canonical_reader.scan_paths` read:
    a clean match in one file hand by hand (:mod:`replay.validate.fast_path`), any
    other line by line from the same records LogReader would have made."""
    rematch_of: dict[str, str] = {}
    for mid, srcs in by_match.items():
        start = _first_start(srcs)
        if start is not None and start.rematch_of:
            rematch_of[mid] = start.rematch_of

    def one(mid: str, leaders: Mapping[str, int | None]) -> MatchReport:
        srcs = by_match[mid]
        if len(srcs) == 1 and not keep_moves:
            rep = fast_report(srcs[0], rematch_leaders=leaders)
            if rep is not None:
                return rep
        records = [rec for src in srcs for rec in src.records()]
        return validate_match(records, rematch_leaders=leaders, keep_moves=keep_moves)

    return validate_in_order(list(by_match), rematch_of, one)


def _first_start(srcs: Sequence[Source]) -> ev.MatchStart | None:
    # The scanner leaves every match_start to Python: it is among `others`.
    for src in srcs:
        for _, rec in src.others:
            if isinstance(rec, EventLine) and isinstance(rec.event, ev.MatchStart):
                return rec.event
    return None


def validate_paths(paths: Sequence[str | os.PathLike[str]], *, keep_moves: bool = False) -> ValidationReport:
    """Read files and folders of logs and validate every match in them."""
    with without_gc():
        return _validate_paths(paths, keep_moves=keep_moves)


@contextmanager
def without_gc() -> Iterator[None]:
    """Pause the cycle collector: reading makes millions of acyclic objects,
    and its passes over them cost more than the reading itself."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _validate_paths(paths: Sequence[str | os.PathLike[str]], *, keep_moves: bool) -> ValidationReport:
    if native is not None:
        file_reports, sources, lost = scan_paths(paths)
        reports = validate_sources(sources, keep_moves=keep_moves)
        return ValidationReport(files=tuple(file_reports), findings=tuple(lost), matches=tuple(reports))
    return validate_paths_pure(paths, keep_moves=keep_moves)


def validate_paths_pure(paths: Sequence[str | os.PathLike[str]], *, keep_moves: bool = False) -> ValidationReport:
    """The Python path, C build or not (``REPLAY_PURE=1`` reads this way):
    the reader line by line, the records grouped by match, the replayer."""
    files: list[FileReport] = []
    by_match: dict[str, list[Record]] = {}
    top: list[Finding] = []
    for path in iter_paths(paths):
        reader = LogReader(path)
        grouped, lost = group_records(reader.records())
        for mid, recs in grouped.items():
            by_match.setdefault(mid, []).extend(recs)
        top.extend(lost)
        st = reader.stats
        files.append(FileReport(st.path, st.lines, st.bad_lines))
    reports = validate_grouped(by_match, keep_moves=keep_moves)
    return ValidationReport(files=tuple(files), findings=tuple(top), matches=tuple(reports))


def report_json(report: ValidationReport) -> dict[str, Any]:
    """The command line's JSON object."""
    return report.to_json()
