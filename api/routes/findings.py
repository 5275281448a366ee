"""The findings of every match, filtered by code, severity and match."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, Response

from api import exports
from api import queries as q
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


@router.get("/api/findings")
def api_findings(cur: Cur, code: Text = None, severity: Severity | None = None,
                 match: Text = None, page_no: PageNo = 1,
                 per_page: Annotated[int, Query(ge=1, le=1000)] = 100,
                 sort: exports.FindingSort | None = None, order: exports.Order | None = None) -> Response:
    return json_response(q.list_findings(cur, code=code, severity=severity, match=match,
                                         page=page_no, per_page=per_page, sort=sort, order=order))
