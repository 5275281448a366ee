"""Generated bad logs, and what every one of them must get: the fault campaign.

A case is one file of several whole matches (from the sample logs) in which
one match, the victim, is damaged in one way: truncation, bad JSON, wrong
types, huge and negative numbers, odd times, lines reordered, duplicated or
interleaved, other encodings and line endings, a gzip bomb; or a folder
holding a special file. `run_case` validates it on both paths (the C scanner
with the clean-match fast path, and the pure reader line by line) under a
time limit and checks that

- nothing raises, nothing hangs;
- a victim that is not valid says why with a finding that names the file
  and a line;
- every untouched match reads exactly as it does in the undamaged file;
- both paths give the same report.

`tests/test_fuzz.py` runs a short campaign in CI; `bench/fuzz.py` runs a long
one and prints the figures (cases, crashes, hangs, differences, matches lost).
"""

from __future__ import annotations

import copy
import gzip
import os
import random
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay.findings import ValidationReport
from replay.validate import run as validate_run

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    (ROOT / "sample_logs" / "international.jsonl", 3),
    (ROOT / "sample_logs" / "domena_2p.jsonl", 2),
    (ROOT / "sample_logs" / "milo.jsonl", 2),
)
#: Seconds one case may take on one path.
TIME_LIMIT = 30.0


# -- the corpus --------------------------------------------------------------------------


def corpus() -> list[list[bytes]]:
    if not _CORPUS:
        _CORPUS.extend(_read_corpus())
    return _CORPUS


_CORPUS: list[list[bytes]] = []


def _read_corpus() -> list[list[bytes]]:
    """Whole matches from the sample logs, each as its lines (LF, no line end)."""
    out: list[list[bytes]] = []
    for path, n in SOURCES:
        by: dict[str, list[bytes]] = {}
        for raw in path.read_bytes().splitlines():
            by.setdefault(orjson.loads(raw)["match"], []).append(raw)
        out.extend(list(by.values())[:n])
    return out


# -- damage ------------------------------------------------------------------------------

ODD_TIMES = (
    "0000-01-01T00:00:00Z", "9999-12-31T23:59:60Z", "9999-12-31T23:00:00-05:00", "0001-01-01T00:30:00+01:00",
    "2026-02-30T10:00:00Z", "2026-11-04t10:00:00z", "2026-11-04T10:00:00.123456789012345678Z",
    "2026-11-04T24:00:00Z", "2026-11-04T10:00:60Z", "2026-11-04 10:00:00Z", "", "2026-11-04T10:00:00+25:00",
    "1969-12-31T23:59:59.999Z", "2024-02-29T12:00:00+14:00", "2023-02-29T00:00:00Z",
)  # fmt: skip
ODD_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 2**31, -(2**31), 2**63, -(2**63) - 1, 10**30, 1e308, -0.0, 1.5, "", "x" * 300,
    "\u202e", "\ud800", [], [[]], {}, {"a": 1}, [1, 2, 3], "63", "77", 127, 128, -128,
)  # fmt: skip


@dataclass
class Case:
    """One damaged file: its bytes, its name, and what was done."""

    name: str
    kind: str
    data: bytes | None  # None: the damage is the file itself (special files)
    victim: str | None  # the damaged match, None when the whole file is
    untouched: tuple[str, ...] = ()  # matches whose lines are all there, undamaged
    special: str | None = None
    clean: bytes | None = None  # the file undamaged: what the untouched matches must read as


def _json_line(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj)
    except TypeError:  # a value orjson refuses (a lone surrogate, an int past 64 bits)
        import json

        return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _damage_line(rng: random.Random, raw: bytes) -> bytes:
    obj = orjson.loads(raw)
    key = rng.choice(sorted(obj))
    obj[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    if key == "match" and isinstance(obj[key], str) and obj[key]:
        obj[key] = "fz-" + obj[key]  # never another match's id: that line would be that match's
    return _json_line(obj)


def _bad_json(rng: random.Random, raw: bytes) -> bytes:
    how = rng.randrange(6)
    if how == 0:
        return raw[: rng.randrange(1, len(raw))]
    if how == 1:
        i = rng.randrange(len(raw))
        return raw[:i] + raw[i + 1 :]
    if how == 2:
        i = rng.randrange(len(raw))
        return raw[:i] + bytes([rng.randrange(256)]) + raw[i:]
    if how == 3:
        return b"[" + raw + b"]"
    if how == 4:
        return raw + b"}"
    return b"{" * rng.randrange(1, 100_000)


def _encoding(rng: random.Random, raw: bytes) -> bytes:
    how = rng.randrange(5)
    if how == 0:
        return raw.decode().encode("utf-16")
    if how == 1:
        return raw.decode().encode("latin-1", "replace")
    if how == 2:
        return raw.replace(b'"type"', b'"typ\\ud800e"', 1)
    if how == 3:
        return b"\xef\xbb\xbf" + raw
    return raw.replace(b":", b":\x00", 1)


def _victim_lines(rng: random.Random, kind: str, lines: list[bytes]) -> list[bytes]:
    lines = list(lines)
    i = rng.randrange(len(lines))
    if kind == "wrong_type":
        lines[i] = _damage_line(rng, lines[i])
    elif kind == "number":
        obj = orjson.loads(lines[i])
        keys = [k for k, v in obj.items() if isinstance(v, int) and not isinstance(v, bool)] or ["seq"]
        obj[rng.choice(keys)] = rng.choice((2**63, -(2**63) - 1, -1, 10**40, 2**31, -(2**31), 2**32 + 1))
        lines[i] = _json_line(obj)
    elif kind == "time":
        obj = orjson.loads(lines[i])
        obj["ts"] = rng.choice(ODD_TIMES)
        lines[i] = _json_line(obj)
    elif kind == "bad_json":
        lines[i] = _bad_json(rng, lines[i])
    elif kind == "reorder":
        j = min(len(lines), i + rng.randrange(2, 12))
        window = lines[i:j]
        rng.shuffle(window)
        lines[i:j] = window
    elif kind == "duplicate":
        for _ in range(rng.randrange(1, 6)):
            k = rng.randrange(len(lines))
            extra = lines[k] if rng.random() < 0.5 else _damage_line(rng, lines[k])
            lines.insert(rng.randrange(len(lines) + 1), extra)
    elif kind == "encoding":
        lines[i] = _encoding(rng, lines[i])
    elif kind == "flood":
        lines[i:i] = [lines[i]] * rng.randrange(200, 3000)
    return lines


#: Damage to the victim's lines, and to the file as a whole.
LINE_KINDS = ("wrong_type", "number", "time", "bad_json", "reorder", "duplicate", "encoding", "flood")
FILE_KINDS = ("truncate", "interleave", "endings", "gzip", "gzip_broken", "gzip_bomb")
SPECIAL_KINDS = ("fifo", "dir_named_log", "empty", "broken_link")


def _id(lines: list[bytes]) -> str:
    match: str = orjson.loads(lines[0])["match"]
    return match


def make_case(rng: random.Random, n: int, matches: list[list[bytes]]) -> Case:
    """Case `n`: a file of 2-4 whole matches, the last of them damaged."""
    kinds = LINE_KINDS + FILE_KINDS + SPECIAL_KINDS
    kind = kinds[n % len(kinds)] if n < len(kinds) else rng.choice(kinds)
    if kind in SPECIAL_KINDS:
        return Case(f"case{n}-{kind}", kind, None, None, (_id(matches[0]),), special=kind)
    picked = rng.sample(range(len(matches)), rng.randrange(2, 5))
    clean = [matches[k] for k in picked[:-1]]
    victim_lines = matches[picked[-1]]
    # a rematch of the victim takes its first leader from it: not untouched
    ids = tuple(_id(m) for m in clean if orjson.loads(m[0]).get("rematch_of") != _id(victim_lines))
    undamaged = b"".join(ln + b"\n" for m in clean for ln in m) + b"".join(ln + b"\n" for ln in victim_lines)
    case = _damaged(rng, n, kind, clean, victim_lines, ids)
    case.clean = undamaged
    return case


def _damaged(rng: random.Random, n: int, kind: str, clean: list[list[bytes]], victim_lines: list[bytes],
             ids: tuple[str, ...]) -> Case:
    victim = _id(victim_lines)
    # the victim last: a damage that runs on (a cut, a bare CR) reaches no other match
    if kind in LINE_KINDS:
        body = [ln for m in clean for ln in m] + _victim_lines(rng, kind, victim_lines)
        return Case(f"case{n}-{kind}.jsonl", kind, b"".join(ln + b"\n" for ln in body), victim, ids)
    if kind == "interleave":
        untouched = [ln for m in clean for ln in m]
        mixed: list[bytes] = []
        theirs, mine = iter(untouched), iter(_victim_lines(rng, rng.choice(LINE_KINDS[:4]), victim_lines))
        for src in rng.choices((0, 1), k=len(untouched) + len(victim_lines)):
            ln = next(theirs if src == 0 else mine, None)
            if ln is not None:
                mixed.append(ln)
        mixed += list(theirs) + list(mine)
        return Case(f"case{n}-{kind}.jsonl", kind, b"".join(ln + b"\n" for ln in mixed), victim, ids)
    whole = b"".join(ln + b"\n" for m in clean for ln in m)
    tail = b"".join(ln + b"\n" for ln in victim_lines)
    if kind == "truncate":
        return Case(f"case{n}-{kind}.jsonl", kind, whole + tail[: rng.randrange(len(tail))], victim, ids)
    if kind == "endings":
        # the untouched matches in LF or CR LF, the victim's lines in any mix (a bare CR too)
        sep = rng.choice((b"\n", b"\r\n"))
        head = b"".join(ln + sep for m in clean for ln in m)
        ends = [rng.choice((b"\n", b"\r\n", b"\r", b"\r\r\n")) for _ in victim_lines]
        bom = b"\xef\xbb\xbf" if rng.random() < 0.3 else b""
        return Case(f"case{n}-{kind}.jsonl", kind,
                    bom + head + b"".join(ln + e for ln, e in zip(victim_lines, ends, strict=True)), victim, ids)
    if kind == "gzip":
        return Case(f"case{n}-{kind}.jsonl.gz", kind, gzip.compress(whole + tail), victim, ids)
    if kind == "gzip_broken":
        z = gzip.compress(whole + tail)
        cut = len(gzip.compress(whole)) - 20 + rng.randrange(len(z) - len(gzip.compress(whole)) + 20)
        z = z[:cut] if rng.random() < 0.7 else z[:cut] + bytes(rng.randrange(256) for _ in range(50))
        return Case(f"case{n}-{kind}.jsonl.gz", kind, z, None)  # where it breaks is where reading stops
    # a bomb: a few KB of gzip that inflate to one very long line (or very many blank ones)
    fill = rng.choice((b" ", b"\n", b"{", b"x"))
    size = 40 * 1024 * 1024
    bomb = gzip.compress(fill * size, compresslevel=9)
    return Case(f"case{n}-{kind}.jsonl.gz", kind, gzip.compress(whole) + bomb, None, ids)


# -- running a case ----------------------------------------------------------------------


class Hang(Exception):
    """A path took longer than its time limit."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def fire(signum: int, frame: Any) -> None:
        raise Hang(f"over {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def validate_fast(paths: list[Path]) -> ValidationReport:
    """The C path (scanner and fast path) where built; the pure one otherwise."""
    return validate_run.validate_paths(paths)


def validate_pure(paths: list[Path]) -> ValidationReport:
    """The reader line by line and the replayer, as ``REPLAY_PURE=1`` reads."""
    return validate_run.validate_paths_pure(paths)


@dataclass
class Outcome:
    case: str
    kind: str
    crash: str | None = None
    hang: str | None = None
    differs: bool = False
    lost: list[str] = field(default_factory=list)
    unexplained: bool = False  # the victim is not valid, and no finding names a file and a line


def _matches(report: ValidationReport) -> dict[str, Any]:
    return {m.match: m.to_json() for m in report.matches}


def _write_case(case: Case, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if case.special is None:
        assert case.data is not None
        (folder / case.name).write_bytes(case.data)
        return folder
    good = folder / "good.jsonl"
    good.write_bytes(b"".join(ln + b"\n" for ln in _CORPUS[0]))
    odd = folder / f"{case.name}.jsonl"
    if case.special == "fifo":
        os.mkfifo(odd)
    elif case.special == "dir_named_log":
        odd.mkdir()
        (odd / "inner.jsonl").write_bytes(b"")
    elif case.special == "empty":
        odd.write_bytes(b"")
    else:
        odd.symlink_to(folder / "nowhere")
    return folder


def run_case(case: Case, folder: Path,
             paths: tuple[Callable[[list[Path]], ValidationReport], ...] = (validate_fast, validate_pure),
             limit: float = TIME_LIMIT) -> Outcome:
    """Validate the case on each path and check what every case must get."""
    out = Outcome(case.name, case.kind)
    where = _write_case(case, folder)
    reports = []
    for validate in paths:
        try:
            with time_limit(limit):
                reports.append(validate([where]))
        except Hang as exc:
            out.hang = f"{validate.__name__}: {exc}"
            return out
        except Exception:  # noqa: BLE001 -- what the campaign counts
            out.crash = f"{validate.__name__}: {traceback.format_exc(limit=-4)}"
            return out
    first = reports[0]
    out.differs = any(r.to_json() != first.to_json() for r in reports[1:])
    got = _matches(first)
    baseline = _undamaged(case, folder / "undamaged")
    for mid in case.untouched:
        want = baseline[mid]
        have = got.get(mid)
        if have is None or _plain(have) != _plain(want):
            out.lost.append(mid)
    victim = got.get(case.victim) if case.victim else None
    if victim is not None and victim["verdict"] != "valid":
        told = [f for f in victim["findings"] if f.get("file") and f.get("line")]
        told += [f.to_json(top_level=True) for f in first.findings if f.file and f.line]
        out.unexplained = not told
    return out


def _plain(m: dict[str, Any]) -> dict[str, Any]:
    """A match's report without where its findings were read (the damage may
    move lines) and without SEED_REUSED (a damaged copy may share seeds)."""
    m = dict(m)
    m["findings"] = sorted((f["code"], f["hand"], f["seq"]) for f in m["findings"] if f["code"] != "SEED_REUSED")
    return m


def _undamaged(case: Case, folder: Path) -> dict[str, Any]:
    """The matches of the case's file as they read undamaged."""
    folder.mkdir(parents=True, exist_ok=True)
    if case.clean is None:  # a special file beside a good one
        path = folder / "good.jsonl"
        path.write_bytes(b"".join(ln + b"\n" for ln in corpus()[0]))
    else:
        path = folder / "clean.jsonl"
        path.write_bytes(case.clean)
    return _matches(validate_fast([path]))


def _stored(folder: Path, db: Path, ids: tuple[str, ...]) -> dict[str, Any]:
    import duckdb

    from replay.ingest import ingest

    db.parent.mkdir(parents=True, exist_ok=True)
    ingest([str(folder)], db=db, workers=0, analysis=(0, 0))
    with duckdb.connect(str(db), read_only=True) as conn:
        rows = conn.execute(
            """SELECT m.match, m.verdict, m.result, m.score, m.hands, m.errors, m.warnings,
                      (SELECT list((h.hand, h.result, h.points, h.score, h.dealt) ORDER BY h.hand)
                       FROM hands h WHERE h.match = m.match)
               FROM matches m WHERE list_contains(?, m.match)""", [list(ids)]).fetchall()
    return {r[0]: r[1:] for r in rows}


def ingest_lost(case: Case, folder: Path) -> list[str]:
    """The untouched matches that a store of the damaged file holds otherwise
    than a store of the undamaged one (or not at all)."""
    if not case.untouched:
        return []
    damaged = _stored(_write_case(case, folder / "damaged"), folder / "store-damaged" / "replay.duckdb",
                      case.untouched)
    clean = folder / "clean"
    clean.mkdir(parents=True, exist_ok=True)
    if case.clean is None:
        (clean / "good.jsonl").write_bytes(b"".join(ln + b"\n" for ln in corpus()[0]))
    else:
        (clean / "clean.jsonl").write_bytes(case.clean)
    want = _stored(clean, folder / "store-clean" / "replay.duckdb", case.untouched)
    return [m for m in case.untouched if damaged.get(m) != want.get(m)]


@dataclass
class Tally:
    cases: int = 0
    crashes: int = 0
    hangs: int = 0
    differences: int = 0
    lost: int = 0
    unexplained: int = 0
    bad: list[Outcome] = field(default_factory=list)

    def add(self, o: Outcome) -> None:
        self.cases += 1
        self.crashes += o.crash is not None
        self.hangs += o.hang is not None
        self.differences += o.differs
        self.lost += len(o.lost)
        self.unexplained += o.unexplained
        if o.crash or o.hang or o.differs or o.lost or o.unexplained:
            self.bad.append(o)
