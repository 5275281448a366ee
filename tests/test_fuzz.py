"""The short fault campaign (tests/fuzzing.py): every kind of damage, a few
times each, on both paths. `bench/fuzz.py` runs the long one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.fuzzing import (
    FILE_KINDS,
    LINE_KINDS,
    SPECIAL_KINDS,
    Tally,
    corpus,
    ingest_lost,
    make_case,
    run_case,
)

CASES = 3 * len(LINE_KINDS + FILE_KINDS + SPECIAL_KINDS)


def test_no_damaged_log_crashes_hangs_splits_the_paths_or_loses_a_match(tmp_path: Path) -> None:
    rng = random.Random(20261103)
    tally = Tally()
    for n in range(CASES):
        tally.add(run_case(make_case(rng, n, corpus()), tmp_path / f"c{n}", limit=60.0))
    report = [f"{o.case}: crash={o.crash} hang={o.hang} differs={o.differs} lost={o.lost} "
              f"unexplained={o.unexplained}" for o in tally.bad]
    assert tally.cases == CASES
    assert not tally.bad, "\n".join(report)


@pytest.mark.parametrize("kind", ["bad_json", "truncate", "time"])
def test_a_damaged_victim_is_told_with_file_and_line(tmp_path: Path, kind: str) -> None:
    """The campaign's check has teeth: a damaged match reads as invalid, and
    says where."""
    kinds = LINE_KINDS + FILE_KINDS + SPECIAL_KINDS
    rng = random.Random(5)
    case = make_case(rng, kinds.index(kind), corpus())
    assert case.kind == kind and case.victim
    out = run_case(case, tmp_path)
    assert not out.unexplained and not out.lost and not out.differs


@pytest.mark.parametrize("kind", ["bad_json", "time", "flood", "endings", "fifo"])
def test_the_untouched_matches_of_a_damaged_file_are_stored_alike(tmp_path: Path, kind: str) -> None:
    kinds = LINE_KINDS + FILE_KINDS + SPECIAL_KINDS
    case = make_case(random.Random(11), kinds.index(kind), corpus())
    assert case.kind == kind and case.untouched
    assert ingest_lost(case, tmp_path) == []
