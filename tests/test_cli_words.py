"""The command line says what it means: no match row reads VALID above a
NOT VALID it belongs to, no store is made up by a mistyped path, and counts
are in words ("1 match", never "match(es)")."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_api import SAMPLES
from tests.test_first_use import run


def test_a_match_beside_a_malformed_line_is_not_shown_valid(tmp_path: Path) -> None:
    lines = (SAMPLES / "milo.jsonl").read_text().splitlines(keepends=True)
    damaged = tmp_path / "one-bad-line.jsonl"
    damaged.write_text("".join(lines[:20]) + '{"type": "play", "broken\n' + "".join(lines[20:]))
    code, out, _ = run("validate", str(damaged))
    assert code == 1
    rows = [line for line in out.splitlines() if re.match(r"^[A-Z]+ +m-", line)]
    assert rows and not any(r.startswith("VALID ") for r in rows), out
    assert all(r.startswith("UNSURE ") and "1 bad line" in r for r in rows)
    last = out.splitlines()[-1]
    assert last.endswith(": NOT VALID") and "0 valid, 3 unsure, 0 not" in last
    # beside a clean file, that file's matches stay VALID
    clean = tmp_path / "clean.jsonl"
    clean.write_text((SAMPLES / "pagat.jsonl").read_text())
    code, out, _ = run("validate", str(damaged), str(clean))
    assert sum(line.startswith("VALID ") for line in out.splitlines()) == 3


def test_counts_are_words(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    text = (SAMPLES / "milo.jsonl").read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(text) if i and '"match_start"' in line)
    one.write_text("".join(text[:first]))  # the first match alone
    code, out, _ = run("validate", str(one))
    assert "; 1 match, 1 valid, 0 not" in out and "1 matches" not in out
    assert re.search(r"VALID +m-\S+ +milo +\d+ hands", out)


def test_serve_refuses_a_store_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "replay.duckdb"
    code, _, err = run("serve", "--db", str(missing))
    assert code == 2
    assert f"no store at {missing}" in err and "--create" in err
    assert not missing.exists() and not missing.parent.exists()  # nothing made up
