"""Checking a certificate: its signature, its files, and every figure recomputed.

``verify_folder`` checks, in order, and reports every problem it finds
(an empty list of problems is a valid certificate):

1. the signature over the manifest, with the key in ``signature.json``,
   and that this key is the desk's (when the desk's public key is given);
2. each file against its SHA-256 in the manifest (one changed byte shows);
3. the leaves file against the JSON's hash, and the Merkle root the
   leaves give against the JSON's root;
4. given the store, every figure computed again (``build.compute``) and
   compared, path by path, and every leaf's digest against the kept logs;
   given the logs instead, every leaf's digest read from them.

``prove`` and ``check_proof`` are the inclusion proofs of single hands.
"""

from __future__ import annotations

import hashlib
import json
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import duckdb
import polars as pl

from reports.certificate import keys, lines, merkle
from reports.certificate.build import Scope, compute, leaf_rows
from reports.certificate.issue import FILES, JSON_FILE, LEAVES_FILE, SIGNATURE, plain, read_leaves

__all__ = ["Verification", "check_proof", "diff", "parse_hand", "prove", "verify_folder"]

#: What describes the issuing run, not the data: not recomputed.
_RUN_ONLY: Final = ("certificate", "software", "completeness.leaves_file")
_REL: Final = 1e-9
_SHOWN: Final = 50


@dataclass
class Verification:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": self.problems, "notes": self.notes, "checked": self.checked}


def _flat(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list):
        out[f"{path}.length"] = len(value)
        for i, v in enumerate(value):
            _flat(v, f"{path}[{i}]", out)
    else:
        out[path] = value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=_REL, abs_tol=1e-300)
    return bool(a == b)


def diff(stated: dict[str, Any], recomputed: dict[str, Any]) -> list[str]:
    """Every figure that differs, as 'path: stated X, recomputed Y'.

    >>> diff({"a": {"b": 1.0, "c": [1, 2]}}, {"a": {"b": 1.0000000000001, "c": [1, 3]}})
    ['a.c[1]: stated 2, recomputed 3']
    """
    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    _flat(stated, "", left)
    _flat(recomputed, "", right)
    out = []
    for path in sorted(set(left) | set(right), key=lambda p: (p.split(".")[0], p)):
        if any(path == r or path.startswith(r + ".") for r in _RUN_ONLY):
            continue
        if path not in left:
            out.append(f"{path}: not stated, recomputed {right[path]!r}")
        elif path not in right:
            out.append(f"{path}: stated {left[path]!r}, not recomputed")
        elif not _same(left[path], right[path]):
            out.append(f"{path}: stated {left[path]!r}, recomputed {right[path]!r}")
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _leaf_differences(stated: pl.DataFrame, found: pl.DataFrame, where: str = "") -> list[str]:
    """Each hand whose digest in ``found`` is not the stated one (``where``: what was read)."""
    joined = stated.join(found, on=["match", "hand"], how="left", suffix="_now")
    bad = joined.filter(pl.col("digest_now").is_null() & (pl.col("lines") > 0)
                        | pl.col("digest_now").is_not_null() & (pl.col("digest") != pl.col("digest_now")))  # fmt: skip
    out = []
    for m, h, n, now in bad.select("match", "hand", "lines", "lines_now").head(_SHOWN).iter_rows():
        what = "its log lines are missing" if now is None else f"its log lines differ ({n} stated, {now} now)"
        out.append(f"hand {m}/{h}: {what}{where}")
    if bad.height > _SHOWN:
        out.append(f"... and {bad.height - _SHOWN} more hands whose log lines differ{where}")
    return out


def _signature(folder: Path, v: Verification, desk_key: keys.PublicKey | None) -> None:
    """The signature over the manifest, the key's identity, and every file against the manifest."""
    try:
        signed = json.loads((folder / SIGNATURE).read_text())
        key = keys.public_from_pem(signed["public_key"])
    except (OSError, ValueError, KeyError) as exc:
        v.problems.append(f"{SIGNATURE}: unreadable ({exc})")
        return
    if keys.verify(signed, key):
        v.checked.append(f"signature: valid, key {key.key_id}")
    else:
        v.problems.append(f"{SIGNATURE}: the signature does not match its manifest (key {key.key_id})")
    if desk_key is None:
        v.notes.append("no desk public key given: the signature was checked with the key the certificate carries")
    elif desk_key.key_id != key.key_id:
        v.problems.append(f"signed with key {key.key_id}, not the desk's key {desk_key.key_id}")
    manifest = signed.get("manifest", {}).get("files", {})
    for name in FILES:
        path = folder / name
        if name not in manifest:
            if path.exists():
                v.problems.append(f"{name}: present but not signed")
        elif not path.exists():
            v.problems.append(f"{name}: missing")
        elif _sha(path) != manifest[name]:
            v.problems.append(f"{name}: changed since it was signed (SHA-256 {_sha(path)} != {manifest[name]})")
        else:
            v.checked.append(f"{name}: SHA-256 as signed")


def _from_store(
    v: Verification, content: dict[str, Any], stated: pl.DataFrame, conn: duckdb.DuckDBPyConnection,
    data_dir: Path,
) -> None:
    comp = content["completeness"]
    matches = stated.get_column("match").unique().to_list()
    files, _ = lines.store_files(conn, data_dir, matches)
    # the kept files hashed again (DuckDB, hashlib: mostly outside the GIL) while the figures
    # are recomputed: the two take the time of the longer
    with ThreadPoolExecutor(1) as pool:
        reread = pool.submit(lines.digests, files, matches)
        fresh_content, leaves = compute(conn, data_dir, Scope.from_dict(content["scope"]))
        found = reread.result()
    fresh = plain(fresh_content)
    if leaves.root != comp["merkle_root"]:
        v.problems.append(f"merkle root recomputed from the store: {leaves.root}, stated {comp['merkle_root']}")
    v.problems += _leaf_differences(stated, leaves.rows.select("match", "hand", "digest", "lines"),
                                    " (the digest stored with it)")  # fmt: skip
    from_files = _leaf_differences(stated, found, " (read again from the kept log files)")
    v.problems += from_files
    if not from_files:
        v.checked.append(f"every leaf's log lines read again from {len(files)} kept file(s): the same")
    figures = diff(content, fresh)
    v.problems += figures[:_SHOWN] + ([f"... and {len(figures) - _SHOWN} more figures"] if len(figures) > _SHOWN else [])
    if not figures:
        v.checked.append("every figure recomputed from the store: the same")
    if fresh["software"] != content["software"]:
        v.notes.append("recomputed with other software than issued it (see software): figures may differ for that reason")


def verify_folder(
    folder: Path,
    *,
    desk_key: keys.PublicKey | None = None,
    conn: duckdb.DuckDBPyConnection | None = None,
    data_dir: Path | None = None,
    logs: list[Path] | None = None,
) -> Verification:
    """Check the certificate in ``folder`` (see the module doc)."""
    v = Verification()
    _signature(folder, v, desk_key)
    try:
        content = json.loads((folder / JSON_FILE).read_text())
        comp = content["completeness"]
        stated = read_leaves(folder)
    except (OSError, ValueError, KeyError) as exc:
        v.problems.append(f"{JSON_FILE} or its leaves: unreadable ({exc})")
        return v
    if _sha(folder / LEAVES_FILE) != comp.get("leaves_file", {}).get("sha256"):
        v.problems.append(f"{LEAVES_FILE}: not the leaves the certificate names")
    root = leaf_rows(stated.select("table", "match", "hand"), stated.select("match", "hand", "digest", "lines")).root
    if root != comp["merkle_root"]:
        v.problems.append(f"merkle root: the leaves give {root}, the certificate states {comp['merkle_root']}")
    else:
        v.checked.append(f"merkle root of the leaves file: {root}")
    if conn is not None and data_dir is not None:
        _from_store(v, content, stated, conn, data_dir)
    if logs:
        found = lines.digests(lines.log_paths(logs), stated.get_column("match").unique().to_list())
        problems = _leaf_differences(stated, found)
        v.problems += problems
        if not problems:
            v.checked.append(f"every leaf's log lines read again from {len(logs)} path(s): the same")
    return v


def parse_hand(text: str) -> tuple[str, int]:
    """``MATCH/HAND`` (or ``MATCH:HAND``) into its parts.

    >>> parse_hand("m-1000-0001/3")
    ('m-1000-0001', 3)
    """
    for sep in ("/", ":", " "):
        match, got, hand = text.rpartition(sep)
        if got and hand.isdigit():
            return match, int(hand)
    raise ValueError(f"not MATCH/HAND: {text!r}")


def prove(folder: Path, match: str, hand: int) -> dict[str, Any]:
    """The inclusion proof of one hand in the certificate in ``folder``."""
    content = json.loads((folder / JSON_FILE).read_text())
    leaves = read_leaves(folder)
    built = leaf_rows(leaves.select("table", "match", "hand"), leaves.select("match", "hand", "digest", "lines"))
    rows = built.rows.with_row_index("i").filter((pl.col("match") == match) & (pl.col("hand") == hand))
    if not rows.height:
        raise KeyError(f"hand {match}/{hand} is not in certificate {content['certificate']['id']}")
    i, table, digest = rows.select("i", "table", "digest").row(0)
    path = merkle.inclusion_path(built.hashes, i)
    return {
        "certificate": content["certificate"]["id"],
        "merkle_root": content["completeness"]["merkle_root"],
        "leaf_index": i,
        "leaves": len(built.hashes),
        "table": table,
        "match": match,
        "hand": hand,
        "digest": digest,
        "leaf_hash": built.hashes[i].hex(),
        "path": [{"side": side, "hash": h.hex()} for side, h in path],
    }


def check_proof(proof: dict[str, Any], digest: str | None = None) -> list[str]:
    """Problems with a proof: its path to the root, and (given) the hand's digest read again."""
    problems = []
    d = digest if digest is not None else proof["digest"]
    if digest is not None and digest != proof["digest"]:
        problems.append(f"hand {proof['match']}/{proof['hand']}: its log lines now hash to {digest}, "
                        f"the proof has {proof['digest']}")  # fmt: skip
    leaf = merkle.leaf_hash(merkle.leaf_data(proof["table"], proof["match"], proof["hand"], d))
    path = [(s["side"], bytes.fromhex(s["hash"])) for s in proof["path"]]
    if not merkle.verify_path(leaf, path, bytes.fromhex(proof["merkle_root"])):
        problems.append("the path does not lead from the hand's leaf to the root")
    return problems
