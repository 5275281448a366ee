"""Issuing a certificate: its files in a folder, signed; and the list of those issued.

A certificate is a folder (``data/certificates/<id>/``, and a copy where
``--out`` says) of five files:

- ``certificate.json``: every figure (``build.compute``), its id and time;
- ``leaves.tsv.gz``: the Merkle leaves, one hand a line (table, match,
  hand, digest of its lines, number of lines), in tree order; its SHA-256
  is in the JSON, so the proofs of inclusion need no store;
- ``certificate.html`` and ``certificate.pdf``: the same figures in words;
- ``signature.json``: the SHA-256 of the four files above, signed with the
  desk's Ed25519 key (``keys``).
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import numpy as np
import polars as pl

from reports.certificate import keys
from reports.certificate.build import Leaves, Scope, compute
from reports.certificate.render import render_html, render_pdf

__all__ = [
    "CERTIFICATES",
    "FILES",
    "SIGNATURE",
    "Issued",
    "certificate_id",
    "dump",
    "issue",
    "issued",
    "plain",
    "read_leaves",
]

CERTIFICATES: Final = "certificates"
JSON_FILE: Final = "certificate.json"
LEAVES_FILE: Final = "leaves.tsv.gz"
HTML_FILE: Final = "certificate.html"
PDF_FILE: Final = "certificate.pdf"
SIGNATURE: Final = "signature.json"
FILES: Final = (JSON_FILE, LEAVES_FILE, HTML_FILE, PDF_FILE)
_LEAF_COLUMNS: Final = ("table", "match", "hand", "digest", "lines")


@dataclass(frozen=True)
class Issued:
    id: str
    folder: Path
    content: dict[str, Any]


def plain(value: Any) -> Any:
    """JSON values only: numpy scalars as Python ones, NaN and infinities as null."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dump(content: dict[str, Any]) -> bytes:
    return (json.dumps(plain(content), indent=1, ensure_ascii=False) + "\n").encode()


def certificate_id(scope: Scope, root: str) -> str:
    """``C-<from>-<to>-`` and 10 hex digits of the scope and the Merkle root: the same data
    gives the same id, any other data another.

    >>> certificate_id(Scope(dt.date(2026, 1, 1), dt.date(2026, 1, 31)), "ab")[:20]
    'C-20260101-20260131-'
    """
    key = keys.canonical({"scope": scope.to_dict(), "root": root})
    return (f"C-{scope.date_from:%Y%m%d}-{scope.date_to:%Y%m%d}-"
            f"{hashlib.sha256(key).hexdigest()[:10]}")  # fmt: skip


def _leaves_bytes(leaves: Leaves) -> bytes:
    buf = io.BytesIO()
    leaves.rows.select(_LEAF_COLUMNS).write_csv(buf, separator="\t", quote_style="never")
    out = io.BytesIO()
    # mtime 0: the same leaves, the same bytes; level 1: the digests hardly compress, and
    # level 9 took 25 s over a million leaves
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, compresslevel=1) as gz:
        gz.write(buf.getvalue())
    return out.getvalue()


def read_leaves(folder: Path) -> pl.DataFrame:
    """The leaves file of a certificate folder."""
    data = gzip.decompress((folder / LEAVES_FILE).read_bytes())
    return pl.read_csv(
        io.BytesIO(data), separator="\t", quote_char=None,
        schema={"table": pl.String, "match": pl.String, "hand": pl.Int32, "digest": pl.String, "lines": pl.Int64},
    ).with_columns(pl.col("table").fill_null(""))  # fmt: skip


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def issue(
    conn: duckdb.DuckDBPyConnection,
    data_dir: Path,
    scope: Scope,
    out: Path | None = None,
    *,
    pdf: bool = True,
    now: dt.datetime | None = None,
) -> Issued:
    """Compute, render, sign and file a certificate; the desk must have a key (`replay keys init`)."""
    keys.load_private(data_dir)  # before the work: no key, no certificate
    content, leaves = compute(conn, data_dir, scope)
    cid = certificate_id(scope, leaves.root)
    when = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    leaves_bytes = _leaves_bytes(leaves)
    content["certificate"] |= {"id": cid, "issued": when.isoformat().replace("+00:00", "Z")}
    content["completeness"]["leaves_file"] = {"name": LEAVES_FILE, "sha256": _sha(leaves_bytes)}
    files = {JSON_FILE: dump(content), LEAVES_FILE: leaves_bytes}
    html = render_html(plain(content))
    files[HTML_FILE] = html.encode()
    if pdf:
        files[PDF_FILE] = render_pdf(html)
    manifest = {"certificate": cid, "files": {name: _sha(data) for name, data in files.items()}}
    signed = keys.sign(data_dir, manifest)
    files[SIGNATURE] = (json.dumps(signed, indent=1) + "\n").encode()
    home = data_dir / CERTIFICATES / cid
    for folder in dict.fromkeys(p for p in (home, out) if p is not None):
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*"):
            if old.name in (*FILES, SIGNATURE) and old.name not in files:
                old.unlink()  # a PDF from an earlier issue with --no-pdf would not match the manifest
        for name, data in files.items():
            (folder / name).write_bytes(data)
    return Issued(cid, out or home, content)


def issued(data_dir: Path) -> Iterator[dict[str, Any]]:
    """The certificates filed under the data folder, newest first: id, period, scope, verdict, files."""
    root = data_dir / CERTIFICATES
    rows = []
    for folder in root.glob("C-*") if root.is_dir() else ():
        try:
            content = json.loads((folder / JSON_FILE).read_text())
        except (OSError, ValueError):
            continue
        scope = content.get("scope", {})
        rows.append({
            "id": folder.name,
            "issued": content.get("certificate", {}).get("issued"),
            "from": scope.get("from"), "to": scope.get("to"),
            "table": scope.get("table"), "profile": scope.get("profile"),
            "matches": scope.get("matches"), "hands": scope.get("hands"),
            "verdict": content.get("verdict", {}).get("verdict"),
            "complete": content.get("verdict", {}).get("complete"),
            "merkle_root": content.get("completeness", {}).get("merkle_root"),
            "files": [n for n in (*FILES, SIGNATURE) if (folder / n).is_file()],
        })  # fmt: skip
    rows.sort(key=lambda r: (r["issued"] or "", r["id"]), reverse=True)
    yield from rows

