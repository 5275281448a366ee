"""The findings of every match, filtered by code, severity and match."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, Response

from api import exports
from api import queries as q
from api import schemas as s
from api.deps import Cur, PageNo, Severity, Text
from api.responses import json_response, page

router = APIRouter()


@router.get("/findings", response_class=HTMLResponse, include_in_schema=False)
def findings_page(cur: Cur, code: Text = None, severity: Severity | None = None,
                  match: Text = None, page_no: PageNo = 1, sort: exports.FindingSort | None = None,
                  order: exports.Order | None = None) -> HTMLResponse:
    data = q.list_findings(cur, code=code, severity=severity, match=match, page=page_no,
                           sort=sort, order=order)
    return page("findings.html", nav="findings", sorting=q.sort_state(q.FINDING_SORTS, sort, order),
                filters={"code": code, "severity": severity, "match": match}, **data)


@router.get("/api/findings", tags=["findings"], summary="List findings", operation_id="list_findings",
            response_model=s.Findings)
def api_findings(cur: Cur, code: Text = None, severity: Severity | None = None,
                 match: Text = None, page_no: PageNo = 1,
                 per_page: Annotated[int, Query(ge=1, le=1000)] = 100,
                 sort: exports.FindingSort | None = None, order: exports.Order | None = None) -> Response:
    """The findings (what a log got wrong, and where), filtered by code, severity and
    match, a page at a time; `codes` counts every code stored."""
    return json_response(q.list_findings(cur, code=code, severity=severity, match=match,
                                         page=page_no, per_page=per_page, sort=sort, order=order))
