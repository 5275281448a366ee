"""Kill -9 of an ingest at a random moment, then the same ingest again:
nothing lost, nothing doubled, alone and with the server holding the store
while 20 clients read its pages (0 errors). The short run of
`bench/fuzz_ingest.py`, which runs as many trials as asked."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def fuzz_ingest() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_ingest", ROOT / "bench" / "fuzz_ingest.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_kill_9_then_rerun_alone_and_while_served(tmp_path: Path) -> None:
    results = fuzz_ingest().run(1, 3, tmp_path)
    assert [r["served"] for r in results] == [False, True]
    for r in results:
        assert r["same"], r["diff"]
    served = results[1]
    assert served["requests"] > 100 and served["errors"] == []
