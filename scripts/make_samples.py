"""Regenerate sample_logs/ and sample_logs_defects/ (deterministic: the same files every time).

    python scripts/make_samples.py [--out sample_logs] [--defects-out sample_logs_defects]

Writes one file per profile (three matches each, some rematches and seat
changes), a file of interleaved tables, a gzip file, a lead-to-partner
table, and, in a folder of their own (the demo data set stays clean),
one tiny log per finding code with its README table of expected codes. Where a profile's feature is rare (a redeal claim, an
automatic redeal), the seed is the first one from the profile's base that
shows it.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path

import orjson

from replay.rules import PROFILES
from replay.simulate import DEFECTS, SimConfig, defect_log, simulate, write_lines

Check = Callable[[list[dict]], bool]


def _has(kind: str) -> Check:
    return lambda evs: any(e["type"] == kind for e in evs)


def _abandoned(evs: list[dict]) -> bool:
    return any(e["type"] == "match_end" and e["result"] == "abandoned" for e in evs)


#: Features a file must show, by file stem.
NEEDS: dict[str, list[Check]] = {
    "colombia": [_has("redeal_claim")],
    "south_american": [_has("hand_cancelled")],
    "international": [_has("seat_change")],
    "domena_2p": [lambda evs: any("rematch_of" in e for e in evs)],
    "international-lead-to-partner": [_has("lead_yield")],
    "interleaved": [
        _abandoned,
        _has("seat_change"),
        lambda evs: any("rematch_of" in e for e in evs),
    ],
}


def _write(path: Path, base: SimConfig, stem: str) -> int:
    """Write the run of the first seed from base.seed that shows the file's features."""
    for k in range(200):
        cfg = SimConfig(**{**base.__dict__, "seed": base.seed + k})
        lines = list(simulate(cfg))
        evs = [orjson.loads(x) for x in lines]
        if all(check(evs) for check in NEEDS.get(stem, [])):
            write_lines(lines, path)
            return cfg.seed
    raise SystemExit(f"no seed gave {stem} its features")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="sample_logs", help="folder to (re)write")
    ap.add_argument("--defects-out", default="sample_logs_defects", help="folder of the defect logs")
    args = ap.parse_args()
    out, defects = Path(args.out), Path(args.defects_out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(defects, ignore_errors=True)
    defects.mkdir(parents=True)
    rows = []
    for i, name in enumerate(sorted(PROFILES)):
        seed = _write(
            out / f"{name}.jsonl", SimConfig(profiles=(name,), matches=3, seed=1000 * (i + 1)), name
        )
        rows.append((f"{name}.jsonl", f"--profile {name} --matches 3 --seed {seed}"))
    seed = _write(
        out / "international-lead-to-partner.jsonl",
        SimConfig(
            profiles=("international",),
            overrides={"lead_to_partner": True, "match_end": {"kind": "points", "target": 100}},
            matches=3,
            seed=31_000,
            bots=("partner", "random"),
        ),
        "international-lead-to-partner",
    )
    rows.append(
        (
            "international-lead-to-partner.jsonl",
            "--profile international --rules "
            '\'{"lead_to_partner": true, "match_end": {"kind": "points", "target": 100}}\' '
            f"--matches 3 --bots partner,random --seed {seed}",
        )
    )
    mix = ("international", "domena_2p", "pr_3p", "colombia")
    seed = _write(
        out / "interleaved.jsonl",
        SimConfig(
            profiles=mix,
            matches=12,
            tables=4,
            seed=32_000,
            seat_change_rate=0.3,
            abandon_rate=0.05,
        ),
        "interleaved",
    )
    rows.append(
        (
            "interleaved.jsonl",
            f"--profile {','.join(mix)} --tables 4 --matches 12 "
            f"--seat-change-rate 0.3 --abandon-rate 0.05 --seed {seed}",
        )
    )
    seed = _write(
        out / "international-many.jsonl.gz",
        SimConfig(profiles=("international",), matches=16, tables=2, seed=33_000),
        "international-many",
    )
    rows.append(("international-many.jsonl.gz", f"--matches 16 --tables 2 --gz --seed {seed}"))
    table = []
    for code, expected in DEFECTS.items():
        write_lines(defect_log(code), defects / f"{code}.jsonl")
        table.append(f"| `{code}.jsonl` | `{code}` | {', '.join(f'`{c}`' for c in expected)} |")
    (defects / "README.md").write_text(DEFECTS_README.format(table="\n".join(table)))
    (out / "README.md").write_text(
        README.format(rows="\n".join(f"| `{f}` | `replay simulate {a}` |" for f, a in rows))
    )
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"sample_logs_bytes: {total} bytes")
    total = sum(p.stat().st_size for p in defects.rglob("*") if p.is_file())
    print(f"sample_logs_defects_bytes: {total} bytes")


README = """# Sample logs

Table logs written by the simulator (`replay/simulate/`), in the exact
format of the table-log spec (v1): bot players, real seed chains, deals
derived by deal-v1, claims computed by `replay.match`. Every file here
is a valid log (`replay validate sample_logs/` finds nothing), so the
demo of the README's first command opens on a clean store and a PASS
fairness audit; the planted defects are a demo of their own, in
[`../sample_logs_defects/`](../sample_logs_defects/README.md). The player
pool is the same everywhere (ids `p-00001` ..., names fixed by the id), so
player reports have history.

Regenerate everything (deterministic, same bytes every time):

    python scripts/make_samples.py

Each file is also one `replay simulate` call (add `--out FILE`):

| file | invocation |
|---|---|
{rows}

- One file per profile: three whole matches under the profile's own rules
  (some rematches, some seat changes: a player leaves, a marked bot or
  another player takes the seat, play goes on).
- `interleaved.jsonl`: four tables of four profiles at once, their events
  mixed in time order, with seat changes, rematches and an abandoned match.
- `international-lead-to-partner.jsonl`: leaders hand the lead over
  (`lead_yield`).
- `international-many.jsonl.gz`: a gzip log of two tables.
- `../sample_logs_defects/`: one tiny log per finding code, each with one
  planted error; its README lists the codes a validator must report for each.

Choices where the spec leaves room: a rematch has no `lead_draw` (its first
lead comes from `next_match_lead`, not `first_lead`); the earlier match's
"first leader" is the leader of its first played hand; a random bot lays a
non-double opening tile low half left now and then (`"36"`: 3 on the left
end), which `--no-flip` turns off; a reveal sometimes comes after the next
deal; `seat_change` carries `hand` when it happens mid-hand.
"""

DEFECTS_README = """# Planted defects: a demo of what the audit desk finds

These logs are kept out of `sample_logs/` on purpose: the README's first
command ingests that folder, and a newcomer's store should open clean.
To see every finding code on the pages, store these in a database of
their own and serve it (another port if the first demo still runs):

    replay ingest sample_logs_defects/ --db data/defects.duckdb
    replay serve --db data/defects.duckdb --port 8001

The home page then lists the invalid matches first, /findings has one or
more findings per code (each naming the file and line of its event), and
/fairness is FAIL (the deal, draw, lead-draw, seed-chain and reused-seed
defects are deterministic failures).

One log per finding code of the table-log spec, each a short match (mostly
`international` to 50, `domena_2p` to 40 where the boneyard matters,
`venezuela`/`puerto_rico`/`colombia` to 40-50 for the opening, block and
redeal rules) with one planted error. `expected` is the exact set of codes
a validator must report on the file read alone (`SEED_REUSED` is reported
on both matches of its file).

Regenerate with `python scripts/make_samples.py`, or one of them with
`replay simulate --defect CODE --out FILE`.

| file | planted | expected |
|---|---|---|
{table}

How each is planted, where it matters:

- `MALFORMED_LINE`, `SCHEMA_ERROR`: an extra line (cut-off JSON; an event
  without `match`), both top-level findings; the match itself is intact.
- `UNKNOWN_EVENT`: an extra `chat` event without `seq` (so no seq finding
  either way).
- `SEQ_DUPLICATE`: a reveal written twice with the same seq and a
  different `ts`; `SEQ_REPEATED`: a reveal line written twice, identical.
- `HAND_INCOMPLETE`: the log stops two moves before the end of hand 1, so
  the match is incomplete too.
- `COMMIT_MISSING`: `match_start` without `anchor`.
- `COMMIT_MISMATCH`: hand 2 is dealt from a seed outside the chain, and that
  seed is revealed (the deal matches it; the chain does not).
- `DEAL_MISMATCH`: two tiles trade places between seats 0 and 1 in hand 2,
  and the hand is played out with the traded tiles.
- `DRAW_MISMATCH`: the first draw of a hand takes the second boneyard tile
  (the next one takes the first).
- `WRONG_LEADER`: the last hand's `deal.leader` is the seat after the
  entitled one, who then opens.
- `TILE_NOT_IN_HAND`, `TILE_DOES_NOT_FIT`: an extra play before the seat's
  real move (the replay skips it).
- `FALSE_PASS`, `ILLEGAL_DRAW`, `DRAWN_TILE_NOT_PLAYED`, `NOT_YOUR_TURN`,
  `LEAD_YIELD_INVALID`: the bad move is made and play goes on from it.
- `REDEAL_INVALID`: a claim without five doubles, and the hand is thrown in.
- `HAND_NOT_OVER`: the passes `all_pass` owes after a block are missing.
- `POINTS_MISMATCH`: hand 1 claims 10 more points for each side; the
  running score stays right. `SCORE_MISMATCH`: the last hand's running score
  is one off, and `match_end` repeats that claimed score.
- `RESULT_MISMATCH`: a domino credited to the winner's partner.
"""


if __name__ == "__main__":
    main()
