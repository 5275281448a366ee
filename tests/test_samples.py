"""sample_logs/ against the validator: the samples are valid, each defect log
(sample_logs_defects/) yields exactly the codes its README row names, and
both folders are what scripts/make_samples.py writes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from replay.rules import PROFILES
from replay.simulate import DEFECTS, defect_log
from replay.validate import validate_paths

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
DEFECT_DIR = ROOT / "sample_logs_defects"
_ROW = re.compile(r"^\| `([^`]+\.jsonl)` \| `([A-Z_]+)` \| (.*) \|$")


def _expected() -> dict[str, list[str]]:
    """file name -> expected codes, from sample_logs_defects/README.md."""
    out = {}
    for line in (DEFECT_DIR / "README.md").read_text().splitlines():
        m = _ROW.match(line)
        if m:
            out[m.group(1)] = sorted(re.findall(r"`([A-Z_]+)`", m.group(3)))
    return out


def _sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz")))


def test_samples_are_small_and_complete() -> None:
    total = sum(p.stat().st_size for p in SAMPLES.rglob("*") if p.is_file())
    assert total <= 5_000_000
    names = {p.name for p in _sample_files()}
    assert {f"{name}.jsonl" for name in PROFILES} <= names
    assert any(n.endswith(".jsonl.gz") for n in names)
    assert "interleaved.jsonl" in names
    assert set(_expected()) == {f"{code}.jsonl" for code in DEFECTS}


def test_every_sample_is_valid() -> None:
    report = validate_paths([SAMPLES])  # the folder, as the README's first command reads it
    assert len(report.files) == len(_sample_files())
    assert [f.code for f in report.findings] == []
    bad = {m.match: [f.code for f in m.findings] for m in report.matches if m.findings}
    assert bad == {}
    assert all(m.verdict == "valid" for m in report.matches)
    by_profile: dict[str, int] = {}
    for m in report.matches:
        if m.result in ("win", "tie"):
            by_profile[m.profile or ""] = by_profile.get(m.profile or "", 0) + 1
    assert all(by_profile.get(p, 0) >= 2 for p in PROFILES), by_profile


@pytest.mark.parametrize("name", sorted(f"{c}.jsonl" for c in DEFECTS))
def test_defect_yields_exactly_its_codes(name: str) -> None:
    report = validate_paths([DEFECT_DIR / name])
    got = sorted(
        {f.code for f in report.findings} | {f.code for m in report.matches for f in m.findings}
    )
    assert got == _expected()[name]


@pytest.mark.parametrize("code", sorted(DEFECTS))
def test_defect_files_are_what_the_simulator_writes(code: str) -> None:
    want = b"".join(line + b"\n" for line in defect_log(code))
    assert (DEFECT_DIR / f"{code}.jsonl").read_bytes() == want


def test_make_samples_reproduces_the_folder(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_samples.py"), "--out", str(tmp_path / "s"),
         "--defects-out", str(tmp_path / "d")],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )  # fmt: skip
    for folder, made in ((SAMPLES, tmp_path / "s"), (DEFECT_DIR, tmp_path / "d")):
        names = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
        assert names == sorted(p.relative_to(made) for p in made.rglob("*") if p.is_file())
        for name in names:
            assert (made / name).read_bytes() == (folder / name).read_bytes(), name
