"""Golden outputs: what the desk says about a fixed set of logs, as digests.

Run it in two checkouts (before and after a refactor) and compare: a change of
any validation report, analysis, simulated log or stored row shows up as a
differing digest, with the outputs kept beside it for a diff.

    python scripts/golden.py --out /tmp/golden-new            # record
    python scripts/golden.py --out /tmp/golden-new --compare /tmp/golden-old/golden.json

``scripts/golden-13144db.json`` holds the digests of commit 13144db, the code
before the rules kernel and the package cuts (the default ``--matches``):
``--compare scripts/golden-13144db.json`` checks a checkout against it.

It runs the checkout it sits in (``python -m replay`` with that tree first on
the path), so the same script measures an older checkout copied beside it.
What it covers:

- ``replay simulate`` of every profile (``--matches`` each, abandons and
  rematches included) and the logs' own digests;
- ``replay validate --json`` of ``sample_logs/``, ``sample_logs_defects/`` and
  every simulated log;
- ``replay analyze --json`` of the hands of a few sample logs;
- ``replay ingest`` of all of them into one store, then every table's row
  count and a digest of its rows (columns that hold times or paths left out).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = (
    "international", "puerto_rico", "venezuela", "colombia", "mexico", "dominican",
    "la_plaza", "pagat", "doscientos", "quinientos", "pase_sureno", "south_american",
    "milo", "chiva", "domena_2p", "domena_4p", "pr_2p", "pr_3p", "doubles_in_boneyard",
    "royal_rumble",
)  # fmt: skip
# analysed hands: a few hundred, every kind of table
ANALYSED = ("international.jsonl", "pr_3p.jsonl", "milo.jsonl", "domena_2p.jsonl",
            "royal_rumble.jsonl", "doubles_in_boneyard.jsonl")  # fmt: skip
# simulated logs also stored: a pairs table, a boneyard one, individual players
STORED = ("international", "pr_2p", "royal_rumble")
# stored columns that say when or where, not what
VOLATILE = ("ingested", "path", "_at", "elapsed", "took", "seconds", "created", "updated",
            "version", "batch", "kept", "when", "time", "stamp", "loaded", "file",
            "analysis")  # fmt: skip (analysis: the batch that analysed a match, named by the code's version)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["REPLAY_NO_DEEPEN"] = "1"
    return env


def _replay(*args: str, out: Path | None = None) -> bytes:
    cmd = [sys.executable, "-m", "replay", *args]
    done = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, check=False)
    if done.returncode not in (0, 1):  # 1: the logs hold findings
        sys.stderr.write(done.stderr.decode(errors="replace"))
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}")
    if out is not None:
        out.write_bytes(done.stdout)
    return done.stdout


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _normal(data: bytes) -> bytes:
    """A JSON report with the checkout's own root taken out of its paths."""
    return data.replace(str(ROOT).encode(), b"<root>")


def simulate(out: Path, matches: int) -> dict[str, str]:
    sim = out / "sim"
    sim.mkdir(parents=True, exist_ok=True)
    digests = {}
    for i, profile in enumerate(PROFILES):
        path = sim / f"{profile}.jsonl"
        _replay("simulate", "--profile", profile, "--matches", str(matches), "--seed", str(i),
                "--tables", "3", "--abandon-rate", "0.01", "--out", str(path))  # fmt: skip
        digests[f"simulate/{profile}"] = _digest(path.read_bytes())
    return digests


def validate(out: Path, sim_dir: Path) -> dict[str, str]:
    digests = {}
    targets = {"sample_logs": ROOT / "sample_logs", "sample_logs_defects": ROOT / "sample_logs_defects"}
    targets |= {f"sim/{p.stem}": p for p in sorted(sim_dir.glob("*.jsonl"))}
    (out / "validate").mkdir(parents=True, exist_ok=True)
    for name, path in targets.items():
        data = _normal(_replay("validate", "--json", str(path)))
        (out / "validate" / (name.replace("/", "_") + ".json")).write_bytes(data)
        digests[f"validate/{name}"] = _digest(data)
    return digests


def analyze(out: Path) -> dict[str, str]:
    digests = {}
    (out / "analyze").mkdir(parents=True, exist_ok=True)
    for name in ANALYSED:
        data = _normal(_replay("analyze", "--json", "--quiet", "--samples", "8", "--workers", "1",
                               str(ROOT / "sample_logs" / name)))  # fmt: skip
        (out / "analyze" / (name + ".json")).write_bytes(data)
        digests[f"analyze/{name}"] = _digest(data)
    return digests


def store(out: Path, sim_dir: Path) -> dict[str, str]:
    import duckdb

    db = out / "golden.duckdb"
    for p in (db, db.with_suffix(".duckdb.wal")):
        p.unlink(missing_ok=True)
    sims = [str(sim_dir / f"{p}.jsonl") for p in STORED]
    _replay("ingest", str(ROOT / "sample_logs"), str(ROOT / "sample_logs_defects"), *sims,
            "--db", str(db), "--workers", "1")  # fmt: skip
    digests = {}
    con = duckdb.connect(str(db), read_only=True)
    tables = [r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'main' "
        "and table_type = 'BASE TABLE' order by 1").fetchall()]  # fmt: skip
    lines = []
    for table in tables:
        cols = [r[0] for r in con.execute(
            "select column_name from information_schema.columns where table_name = ? "
            "order by ordinal_position", [table]).fetchall()]  # fmt: skip
        kept = [c for c in cols if not any(v in c.lower() for v in VOLATILE)]
        if not kept:
            continue
        select = ", ".join(f'"{c}"' for c in kept)
        rows = con.execute(f'select {select} from "{table}" order by all').fetchall()
        h = hashlib.sha256()
        for row in rows:
            h.update(_normal(repr(row).encode()))
        digests[f"store/{table}"] = f"{len(rows)}:{h.hexdigest()[:16]}"
        lines.append(f"{table} ({len(rows)} rows): {', '.join(kept)}")
    con.close()
    (out / "store_columns.txt").write_text("\n".join(lines) + "\n")
    return digests


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for the outputs and golden.json")
    ap.add_argument("--matches", type=int, default=150, help="simulated matches a profile")
    ap.add_argument("--sim", default=None, help="simulated logs of another run to validate")
    ap.add_argument("--compare", default=None, help="a golden.json to compare with")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    digests = simulate(out, args.matches)
    sim_dir = Path(args.sim).resolve() if args.sim else out / "sim"
    digests |= validate(out, sim_dir)
    digests |= analyze(out)
    digests |= store(out, sim_dir)
    (out / "golden.json").write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"{len(digests)} digests in {out / 'golden.json'}")
    if not args.compare:
        return 0
    old = json.loads(Path(args.compare).read_text())
    differ = sorted(k for k in old.keys() | digests.keys() if old.get(k) != digests.get(k))
    for k in differ:
        print(f"DIFFERS {k}: {old.get(k)} -> {digests.get(k)}")
    print(f"golden_identical: {len(digests) - len(differ)} of {len(old.keys() | digests.keys())}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
