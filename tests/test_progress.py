"""Progress of long runs shows without a terminal too: a line every 10 s."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import replay.progress
from replay.analysis.run import analyze_paths

SAMPLE_LOGS = Path(__file__).resolve().parents[1] / "sample_logs"


def test_analysis_writes_progress_lines_into_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay.progress, "EVERY", 0.0)  # a line at every step instead of every 10 s
    out = io.StringIO()  # not a terminal
    results = analyze_paths([SAMPLE_LOGS / "milo.jsonl"], samples=0, workers=0, progress_out=out)
    hands = sum(len(h) for _, h in results)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and "\r" not in out.getvalue()
    assert all(" hands graded (" in line and "/s, " in line and line.endswith(" left") for line in lines)
    assert lines[-1].startswith(f"{hands:,}/{hands:,} hands graded (100%)")


def test_a_short_run_in_a_log_stays_quiet() -> None:
    out = io.StringIO()
    line = replay.progress.ProgressLine(10, out, "hands")
    line.show(5)
    line.close()
    assert out.getvalue() == ""
