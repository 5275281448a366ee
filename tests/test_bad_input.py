"""Values past what the store can hold are bad values of their field, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.ingest import ingest
from replay.store import open_store
from replay.validate import validate_paths

EXAMPLE = Path(__file__).parent / "data" / "examples" / "international-to-50.jsonl"


def _events() -> list[dict]:
    return [json.loads(x) for x in EXAMPLE.read_text().splitlines() if x.strip()]


def _write(tmp: Path, events: list[dict]) -> Path:
    p = tmp / "log.jsonl"
    p.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return p


@pytest.mark.parametrize(
    "index,field,value",
    [
        (5, "seq", 10**18),
        (5, "hand", 10**12),
        (5, "seat", 300),
        (25, "score", [10**30, 0]),
        (25, "points", [-(10**12), 0]),
        (2, "stock", 2**40),
    ],
)
def test_huge_values_are_schema_errors_and_store(
    tmp_path: Path, index: int, field: str, value: object
) -> None:
    ev = _events()
    ev[index][field] = value
    log = _write(tmp_path, ev)
    rep = validate_paths([log])
    codes = [f.code for m in rep.matches for f in m.findings] + [f.code for f in rep.findings]
    assert codes[0] == "SCHEMA_ERROR", codes
    assert f"'{field}" in next(f.message for m in rep.matches for f in m.findings)
    summary = ingest([log], db=tmp_path / "db" / "replay.duckdb", workers=0)
    assert summary.loaded
    conn = open_store(tmp_path / "db" / "replay.duckdb", read_only=True)
    try:
        stored = conn.execute("SELECT count(*) FROM findings WHERE code = 'SCHEMA_ERROR'").fetchall()
        assert stored == [(1,)]
    finally:
        conn.close()


def test_huge_rule_values_are_rules_unknown(tmp_path: Path) -> None:
    ev = _events()
    ev[0]["rules"] = {"capicua_bonus": 10**30}
    rep = validate_paths([_write(tmp_path, ev)])
    assert [f.code for f in rep.matches[0].findings] == ["RULES_UNKNOWN"]
    assert "capicua_bonus" in rep.matches[0].findings[0].message
