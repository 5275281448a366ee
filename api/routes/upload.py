"""Upload a table log (POST, with the write token): validated, graded and
stored in-process, through the same ingest as `replay ingest` (every move
graded under perfect information; the grade on what each player could know
follows in the background when the server samples, at once and before any
older matches: api.deepen.Deepener.take_new)."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import tempfile
import time
import zlib
from pathlib import Path
from typing import Annotated, Any

import duckdb
from fastapi import APIRouter, File, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, Response

from api import queries as q
from api import schemas as s
from api.connection import Store
from api.deps import Cur, Cursor, Writer
from api.middleware import MAX_INFLATED, MAX_UPLOAD, too_big_msg
from api.pages import u
from api.responses import json_response, page
from replay.accel import native
from replay.ingest import INGEST_SAMPLES, ingest

router = APIRouter()

#: Logs up to this size (inflated) are graded in the request, as `replay ingest`
#: grades (perfect information, about 20 ms a hand, 40 on a busy machine: some
#: 500 hands here, 10 to 20 s). A larger one is left to the background
#: sampling (api.deepen), and the answer says so: a 20 MB log is thousands of
#: hands, minutes of grading no client should wait for.
GRADE_INLINE = 2 * 1024 * 1024


@router.get("/upload", response_class=HTMLResponse, include_in_schema=False)
def upload_page(request: Request) -> HTMLResponse:
    return page("upload.html", nav="upload", token_set=bool(request.app.state.token),
                max_mb=MAX_UPLOAD // (1024 * 1024), max_inflated_mb=MAX_INFLATED // (1024 * 1024))


@router.post("/api/upload", tags=["upload"], summary="Upload a table log", operation_id="upload_log",
             response_model=s.Upload, responses={**s.errors(400, 415), **s.WRITE_ERRORS}, dependencies=[Writer])
def api_upload(request: Request, cur: Cur, file: Annotated[UploadFile, File()]) -> Response:
    """Validate and store a table log (`.jsonl` or `.jsonl.gz`, multipart field `file`;
    needs the write token): its matches with their verdicts, its lines and findings.
    Sending the same file again stores nothing new (`already_stored`)."""
    return json_response(_ingest_upload(request, file, cur))


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def _check_gzip(path: Path) -> int:
    """Refuse a .gz that is broken or inflates past MAX_INFLATED (read in chunks);
    its size inflated."""
    total = 0
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
                if total > MAX_INFLATED:
                    raise HTTPException(
                        413, f"decompressed size exceeds {MAX_INFLATED // (1024 * 1024)} MB"
                    )
    except (OSError, EOFError, zlib.error) as exc:
        raise HTTPException(400, f"not a readable gzip file: {exc}") from None
    return total


def _ingest_upload(request: Request, upload: UploadFile, cur: Cursor) -> dict[str, Any]:
    name = Path(upload.filename or "upload.jsonl").name
    if not (name.endswith(".jsonl") or name.endswith(".jsonl.gz")):
        raise HTTPException(415, "upload a .jsonl or .jsonl.gz table log")
    safe = _SAFE_NAME.sub("_", name)[-120:]
    store: Store = request.app.state.store
    with tempfile.TemporaryDirectory(prefix="replay-upload-") as tmp:
        path = Path(tmp) / safe
        size = 0
        digest = hashlib.sha256()
        with path.open("wb") as kept:
            while chunk := upload.file.read(1 << 20):
                size += len(chunk)
                if size > MAX_UPLOAD:
                    raise HTTPException(413, too_big_msg(MAX_UPLOAD))
                digest.update(chunk)
                kept.write(chunk)
        with path.open("rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        # by content, not by name: the reader sniffs the magic bytes too
        inflated = _check_gzip(path) if gz else size
        t0 = time.perf_counter()
        # the store's one write lock from the ingest to the read of what it
        # stored: a delete or a load meanwhile cannot make the answer untrue
        with store.load_lock:
            known = _run_ingest(request, path, f"upload:{name}", grade=inflated <= GRADE_INLINE)
            took = time.perf_counter() - t0
            store.bump()
            sha = digest.hexdigest()
            got = q.file_counts(cur, sha)
            rows = q.matches_by_id(cur, got.pop("ids"))
            graded = _graded(cur, [r["match"] for r in rows])
    deepener = getattr(request.app.state, "deepener", None)
    if deepener is not None and rows and not known:
        deepener.take_new()  # its sampled grade before the backlog's
    for r in rows:
        r["url"] = u("matches", r["match"])
        r["analysis"] = graded.get(r["match"], {"finished": 0, "graded": 0, "sampled": 0})
    out = {
        "file": name,
        "size": size,
        "sha256": sha,
        "seconds": round(took, 3),
        "already_stored": known,
        "matches": rows,
        **got,
        "analysis": _when_graded(request, rows),
    }
    if not rows:  # junk, or a log of no match: say what was found in it
        c = got["counts"]
        why = f"; {got['problems'][0]['message']}" if got["problems"] else ""
        out["warning"] = (f"no match in {name}: {c['lines']:,} line{'s' if c['lines'] != 1 else ''}, "
                          f"{c['bad_lines']:,} bad{why}")
    return out


def _run_ingest(request: Request, path: Path, label: str, grade: bool = True) -> bool:
    """Validate and store one file in-process (its findings name it `label`),
    with `grade`, its moves graded as `replay ingest` grades them, under the
    store's write lock; True if it was stored before. A run that
    fails is answered as such: its file is not recorded as stored (its
    matches may be, in part), and sending it again completes it."""
    store: Store = request.app.state.store
    # ingest loads its batches itself (the server's connection lets a second
    # one in: the same database instance); anything left is loaded below
    with store.load_lock:
        try:
            # graded as `replay ingest` grades (perfect information, about 20 ms a
            # hand); not with the pure-Python solver, which takes seconds a hand
            summary = ingest([path], db=store.db_path, workers=0, labels={os.fspath(path): label},
                             analysis=(INGEST_SAMPLES, 0) if grade and native is not None else None)
        except duckdb.ConnectionException as exc:  # the store was opened another way
            raise HTTPException(503, f"the store cannot take an in-process ingest now: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - said to the client, not a bare 500
            raise HTTPException(500, f"{label} was not stored whole ({type(exc).__name__}: {exc}); "
                                     "its file is not recorded as stored: send it again") from None  # fmt: skip
        store.load(force=True)
    return summary.files_known > 0


def _graded(cur: Cursor, matches: list[str]) -> dict[str, dict[str, int]]:
    """Each match's finished hands, those graded, and those graded on sampled
    deals; a hand the analysis passed over (cancelled, an illegal move) is none of them."""
    rows = cur.execute(
        """SELECT h.match, count(*), count(a.hand), count(a.hand) FILTER (WHERE a.samples > 0)
           FROM hands h LEFT JOIN hand_analysis a ON a.match = h.match AND a.hand = h.hand
           WHERE h.match IN (SELECT unnest(?)) AND h.result IS NOT NULL AND a.skip IS NULL
           GROUP BY h.match""", [matches]).fetchall()
    return {m: {"finished": f, "graded": g, "sampled": s} for m, f, g, s in rows}


def _when_graded(request: Request, rows: list[dict[str, Any]]) -> str:
    """When the uploaded matches get their grades, in words."""
    if not any(r["analysis"]["finished"] for r in rows):
        return "No hand to grade: none is over, or none was played by the rules."
    deepener = getattr(request.app.state, "deepener", None)
    if any(r["analysis"]["graded"] < r["analysis"]["finished"] for r in rows):
        later = ("The server grades the rest in the background, a few matches at a time."
                 if deepener is not None else
                 "The rest waits for the operator to run the analysis: this server grades nothing in the background.")
        return f"Some hands are not graded yet. {later}"
    if all(r["analysis"]["sampled"] >= r["analysis"]["finished"] for r in rows):
        return "Every move is graded, on what each player could know and under perfect information."
    if deepener is not None:
        return (f"Every move is graded under perfect information. The grade on what each player could know "
                f"({deepener.samples} sampled deals a decision) is being added now, in the background and before "
                "any older matches; the match pages show it as it comes.")
    return ("Every move is graded under perfect information. The grade on what each player could know "
            "(sampled deals) is not made by this server: it comes when the operator runs the sampled analysis.")
