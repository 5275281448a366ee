"""The fairness page and its JSON twin: GET /fairness and GET /api/fairness.

Both take the same filters as query parameters (table, profile, player,
match, date_from, date_to; dates YYYY-MM-DD on the hand's start, UTC) and
run `reports.audit` over the app's DuckDB connection (one cursor per
request). An audit of a million deals takes seconds, so reports are cached
per store generation and filters: a reload of the store invalidates them.

The router needs only ``app.state.store`` with ``cursor()`` and
``generation`` (`api.connection.Store`); it imports nothing from api.app,
which includes it, and renders through api.pages as every page does.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

import orjson
import pyarrow as pa
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from api import schemas as s
from api.charts import heat_svg, qq_svg
from api.deps import Cur, Cursor, form_date
from api.exports import Format, rows_table, table_response
from api.lru import LRU
from api.pages import render
from api.queries import lookalike_players
from reports.audit import AuditReport, Filters, run_audit
from reports.monitor import alerts as monitor_alerts
from reports.monitor import settings as monitor_settings

router = APIRouter()

Text = Annotated[str | None, Query(max_length=200)]
CACHE_SIZE = 16
LUCK_ROWS = 50  # players shown on the page (all of them in the JSON)
BANNERS = 3  # the live monitor's latest alerts shown on the page



def _api_filters(
    table: Text = None,
    profile: Text = None,
    player: Text = None,
    match: Text = None,
    date_from: Annotated[dt.date | None, Query(description="hands started on or after (UTC)")] = None,
    date_to: Annotated[dt.date | None, Query(description="hands started on or before (UTC)")] = None,
) -> Filters:
    return Filters(table or None, profile or None, player or None, match or None, date_from, date_to)


def _page_filters(
    table: Text = None,
    profile: Text = None,
    player: Text = None,
    match: Text = None,
    date_from: Annotated[str | None, Query(max_length=40)] = None,
    date_to: Annotated[str | None, Query(max_length=40)] = None,
) -> Filters:
    return _api_filters(
        table, profile, player, match, form_date(date_from, "date_from"), form_date(date_to, "date_to")
    )


ApiChosen = Annotated[Filters, Depends(_api_filters)]
PageChosen = Annotated[Filters, Depends(_page_filters)]


def _audit(request: Request, cur: Cursor, filters: Filters) -> dict[str, Any]:
    state = request.app.state
    cache = getattr(state, "fairness_cache", None)
    if cache is None:
        cache = state.fairness_cache = LRU(CACHE_SIZE)
    key = (getattr(state.store, "generation", 0), filters)

    def make() -> dict[str, Any]:
        report: AuditReport = run_audit(cur, filters)
        return {"report": report, "json": report.to_dict()}

    audit: dict[str, Any] = cache.get_or_make(key, make)
    return audit


def _json(data: Any) -> Response:
    body = orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)
    return Response(body, media_type="application/json")


@router.get("/api/fairness/alerts", tags=["fairness"], summary="Fairness alerts", operation_id="fairness_alerts", response_model=s.Alerts)
def api_fairness_alerts(cur: Cur) -> Response:
    """The live monitor's alerts, newest first (reports.monitor), and how it is set."""
    return _json({"alerts": monitor_alerts(cur), "monitor": monitor_settings()})


@router.get("/api/fairness", tags=["fairness"], summary="Fairness audit", operation_id="fairness_audit", response_model=s.Fairness)
def api_fairness(request: Request, cur: Cur, filters: ApiChosen) -> Response:
    """The fairness audit of the window chosen by the filters (see docs/fairness.md)."""
    return _json(_audit(request, cur, filters)["json"])


@router.get("/fairness", response_class=HTMLResponse, include_in_schema=False)
def fairness_page(request: Request, cur: Cur, filters: PageChosen) -> HTMLResponse:
    data = _audit(request, cur, filters)["json"]
    luck = data["luck"]
    rows: list[dict[str, Any]] = []
    svg = Markup("")
    if luck:
        def strength(r: dict[str, Any]) -> float:
            z: float = max(abs(r["pips_z"] or 0.0), abs(r["doubles_z"] or 0.0))
            return z

        rows = sorted(luck["players"], key=lambda r: (not r["flagged"], -strength(r)))
        svg = Markup(luck_svg(luck["histogram"]))
    params = {k: v for k, v in filters.to_dict().items() if v}
    charts = data.get("charts") or {}
    qq = charts.get("qq") or {}
    html = render("fairness.html",
        qq_svg=Markup(qq_svg({"battery tests": qq.get("battery"), "player luck": qq.get("luck")})),
        heat=[(t, Markup(heat_svg(t))) for t in charts.get("tile_seat", [])],
        params=params,
        nav="fairness",
        r=data,
        filters=filters.to_dict(),
        choices=_choices(cur),
        lookalikes=lookalike_players(cur),
        luck_rows=rows[:LUCK_ROWS],
        luck_more=max(0, len(rows) - LUCK_ROWS),
        luck_svg=svg,
        json_url="/api/fairness" + ("?" + urlencode(params) if params else ""),
        alerts=monitor_alerts(cur, BANNERS),
    )
    return HTMLResponse(html)


Part = Literal["tests", "luck", "failing", "tile-seat"]
_PARTS: dict[str, list[tuple[str, pa.DataType]]] = {
    "tests": [("name", pa.string()), ("statistic", pa.float64()), ("df", pa.float64()),
              ("p_value", pa.float64()), ("p_adjusted", pa.float64()), ("verdict", pa.string())],
    "luck": [("player", pa.string()), ("hands", pa.int64()),
             ("mean_pips", pa.float64()), ("pips_ci", pa.list_(pa.float64())), ("pips_z", pa.float64()),
             ("pips_p", pa.float64()), ("pips_p_adjusted", pa.float64()), ("doubles_hands", pa.int64()),
             ("mean_doubles", pa.float64()), ("doubles_ci", pa.list_(pa.float64())),
             ("doubles_z", pa.float64()), ("doubles_p", pa.float64()), ("doubles_p_adjusted", pa.float64()),
             ("flagged", pa.bool_()), ("name", pa.string()), ("url", pa.string())],
    "failing": [("match", pa.string()), ("hand", pa.int64()), ("table", pa.string()), ("profile", pa.string()),
                ("problems", pa.list_(pa.string())), ("detail", pa.string()), ("url", pa.string())],
    "tile-seat": [("group", pa.string()), ("tile", pa.string()), ("column", pa.string()),
                  ("observed", pa.int64()), ("expected", pa.float64()), ("z", pa.float64())],
}


def part_rows(data: dict[str, Any], part: str) -> list[dict[str, Any]]:
    """The rows of one list of an audit's JSON (`/api/fairness`): the battery's
    tests of the whole window (without their detail), the players' luck, the
    failing hands (as many as the JSON lists), or the tile x seat cells."""
    if part == "tests":
        return list(data["battery"]["full"]["tests"]) if data.get("battery") else []
    if part == "luck":
        return list(data["luck"]["players"]) if data.get("luck") else []
    if part == "failing":
        return list(data["deterministic"]["failing"])
    return [
        {"group": t["group"], "tile": tile, "column": col, "observed": t["observed"][i][c],
         "expected": t["expected"][c], "z": t["z"][i][c]}
        for t in (data.get("charts") or {}).get("tile_seat", [])
        for i, tile in enumerate(t["tiles"]) for c, col in enumerate(t["columns"])
    ]


@router.get("/api/fairness/{part}.{fmt}", tags=["fairness"], summary="Download a part of the fairness audit",
            operation_id="download_fairness", response_class=Response, responses=s.DOWNLOAD)
def export_fairness(request: Request, cur: Cur, part: Part, fmt: Format, filters: ApiChosen) -> Response:
    """One list of the audit of the window these filters choose, as CSV or
    Parquet: `tests` (the battery on the whole window), `luck` (each player),
    `failing` (the failing hands the JSON lists) or `tile-seat` (the heat
    map's cells: how often each tile went to each seat, against fair deals)."""
    data = _audit(request, cur, filters)["json"]
    return table_response(rows_table(part_rows(data, part), _PARTS[part]), fmt, f"fairness-{part}")


def _choices(cur: Cursor) -> dict[str, list[str]]:
    rows = cur.execute(
        "SELECT list(DISTINCT profile ORDER BY profile) FILTER (WHERE profile IS NOT NULL), "
        "list(DISTINCT table_id ORDER BY table_id) FILTER (WHERE table_id IS NOT NULL) FROM matches"
    ).fetchall()
    profiles, tables = rows[0] if rows else (None, None)
    return {"profiles": profiles or [], "tables": tables or []}


# --------------------------------------------------------------------------- the chart


def luck_svg(hist: dict[str, Any], width: int = 640, height: int = 220) -> str:
    """Histogram of the players' luck z-scores (pips and doubles) against N(0, 1).

    Bars: players per bin of 0.5 (outer bins open); the line: the counts a
    fair deal expects. Numbers only: nothing from a log enters this SVG.
    """
    series = [(k, hist[k]) for k in ("pips", "doubles") if hist.get(k)]
    if not series or not any(sum(h["counts"]) for _, h in series):
        return '<p class="muted">no player with enough hands for a z-score</p>'
    edges = series[0][1]["edges"]
    nb = len(edges) + 1
    top = max(max(max(h["counts"]), max(h["expected"])) for _, h in series) or 1
    pad_l, pad_r, pad_t, pad_b = 34, 10, 14, 34
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    bw = w / nb

    def y(v: float) -> float:
        return pad_t + h - v / top * h

    out = [
        f'<svg class="lucksvg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'role="img" aria-label="histogram of the players\' luck z-scores">',
        f'<line x1="{pad_l}" y1="{pad_t + h}" x2="{width - pad_r}" y2="{pad_t + h}" class="axis"/>',
        f'<text x="4" y="{pad_t + 8}" class="ax">{top:g}</text>',
        f'<text x="4" y="{pad_t + h}" class="ax">0</text>',
    ]
    inner = bw * 0.8 / len(series)
    for k, (name, hs) in enumerate(series):
        for i, c in enumerate(hs["counts"]):
            if not c:
                continue
            x = pad_l + i * bw + bw * 0.1 + k * inner
            label = _bin_label(edges, i)
            out.append(
                f'<rect x="{x:.1f}" y="{y(c):.1f}" width="{inner:.1f}" height="{pad_t + h - y(c):.1f}" '
                f'class="bar {name}"><title>{name} z {label}: {c} players '
                f'(fair: {hs["expected"][i]:.1f})</title></rect>'
            )
    exp = series[0][1]["expected"]
    pts = " ".join(f"{pad_l + (i + 0.5) * bw:.1f},{y(e):.1f}" for i, e in enumerate(exp))
    out.append(f'<polyline points="{pts}" class="expected"/>')
    for i in range(0, nb, 2):
        out.append(
            f'<text x="{pad_l + (i + 0.5) * bw:.1f}" y="{height - pad_b + 14}" class="ax" '
            f'text-anchor="middle">{_bin_label(edges, i)}</text>'
        )
    out.append(
        f'<text x="{pad_l + w / 2:.1f}" y="{height - 4}" class="ax" text-anchor="middle">'
        "z-score of each player's mean per hand; line: what fair deals expect</text>"
    )
    out.append("</svg>")
    return "".join(out)


def _bin_label(edges: list[float], i: int) -> str:
    if i == 0:
        return f"&lt;{edges[0]:g}"
    if i == len(edges):
        return f"≥{edges[-1]:g}"
    return f"{edges[i - 1]:g}"
