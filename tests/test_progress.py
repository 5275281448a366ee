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


def test_a_stopped_analysis_leaves_no_worker_running(tmp_path: Path) -> None:
    """SIGTERM to `replay analyze` with two workers grading: within 5 s no
    process of its group is left (the workers used to finish their match)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "replay", "analyze", str(SAMPLE_LOGS / "international.jsonl"), "--samples", "400",
         "--workers", "2", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    pgid = os.getpgid(proc.pid)

    def group() -> list[int]:
        out = subprocess.run(["ps", "-o", "pid=", "-g", str(pgid)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]

    deadline = time.monotonic() + 60
    while len(group()) < 4 and time.monotonic() < deadline:  # the command, the fork server, two workers
        time.sleep(0.2)
    assert len(group()) >= 4, group()
    time.sleep(1.0)  # the workers are inside their first match
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while group() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = group()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
