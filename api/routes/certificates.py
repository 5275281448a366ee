"""Certificates: the list, the desk's public key, the downloads, issuing one (with the token).

    /certificates                      /api/certificates
    /certificates/{id}/{file}          (HTML, PDF, JSON, leaves, signature)
    /api/certificates/key              the desk's public key (404 before `replay keys init`)
    POST /api/certificates             issue one: {"from", "to", "table"?, "profile"?} (token)

Certificates live in the data folder (``certificates/<id>/``, reports.certificate.issue);
the private key never leaves it and no route reads it except to sign.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any, Final

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, Field

from api import schemas as s
from api.deps import Cur, Writer
from api.responses import json_response, not_found, page
from reports.certificate import keys
from reports.certificate.build import Scope
from reports.certificate.issue import CERTIFICATES, FILES, SIGNATURE, issue, issued

router = APIRouter()

_ID: Final = re.compile(r"^C-\d{8}-\d{8}-[0-9a-f]{10}$")
_TYPES: Final = {".html": "text/html; charset=utf-8", ".pdf": "application/pdf", ".json": "application/json",
                 ".gz": "application/gzip"}  # fmt: skip


class IssueRequest(BaseModel):
    date_from: dt.date = Field(alias="from")
    date_to: dt.date = Field(alias="to")
    table: str | None = Field(default=None, max_length=200)
    profile: str | None = Field(default=None, max_length=200)


def _data_dir(request: Request) -> Path:
    return Path(request.app.state.store.db_path).parent


def _rows(request: Request) -> list[dict[str, Any]]:
    rows = list(issued(_data_dir(request)))
    for r in rows:
        r["downloads"] = {name: f"/certificates/{r['id']}/{name}" for name in r["files"]}
    return rows


def _key(request: Request) -> dict[str, Any] | None:
    pub = keys.load_public(_data_dir(request))
    return pub.to_dict() if pub else None


@router.get("/api/certificates", tags=["certificates"], summary="List certificates", operation_id="list_certificates",
            response_model=s.Certificates)
def api_certificates(request: Request) -> Response:
    """Issued certificates, newest first, and the desk's public key."""
    return json_response({"public_key": _key(request), "certificates": _rows(request)})


@router.get("/api/certificates/key", tags=["certificates"], summary="The desk's public key",
            operation_id="get_certificate_key", response_model=s.CertificateKey, responses=s.errors(404))
def api_certificate_key(request: Request) -> Response:
    """The desk's Ed25519 public key (PEM and raw), which signs every certificate."""
    key = _key(request)
    if key is None:
        raise HTTPException(404, "the desk has no key yet: run `replay keys init`")
    return json_response(key)


@router.get("/certificates", response_class=HTMLResponse, include_in_schema=False)
def certificates_page(request: Request) -> HTMLResponse:
    return page("certificates.html", nav="certificates", rows=_rows(request), key=_key(request),
                token_set=bool(request.app.state.token))  # fmt: skip


@router.get("/certificates/{cid}/{name}", include_in_schema=False)
def certificate_file(request: Request, cid: str, name: str) -> Response:
    if not _ID.match(cid) or name not in (*FILES, SIGNATURE):
        return not_found(f"no certificate file {cid}/{name}")
    path = _data_dir(request) / CERTIFICATES / cid / name
    if not path.is_file():
        return not_found(f"no certificate file {cid}/{name}")
    return FileResponse(path, media_type=_TYPES.get(path.suffix, "application/octet-stream"),
                        filename=None if path.suffix == ".html" else f"{cid}-{name}")  # fmt: skip


@router.post("/api/certificates", status_code=201, tags=["certificates"], summary="Issue a certificate",
             operation_id="issue_certificate", response_model=s.CertificateRow,
             responses={409: {"model": s.Error, "description": "the desk has no signing key"},
                        **s.errors(400, 422), **s.WRITE_ERRORS},
             dependencies=[Writer])
def api_issue(request: Request, cur: Cur, body: IssueRequest) -> Response:
    """Issue the certificate of a period (needs the write token and the desk's key)."""
    if body.date_to < body.date_from:
        raise HTTPException(422, "to is before from")
    data = _data_dir(request)
    if not keys.key_paths(data)[0].exists():
        raise HTTPException(409, "the desk has no key: run `replay keys init` on the server's data folder")
    got = issue(cur, data, Scope(body.date_from, body.date_to, body.table or None, body.profile or None))
    row = next(r for r in _rows(request) if r["id"] == got.id)
    response = json_response(row)
    response.status_code = 201
    return response
