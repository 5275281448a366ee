"""The hands and moves behind a page's counts.

/hands lists the hands a player page counts (played, won, lost, tied, the
deals of its deal luck, went out, with a bonus, passed, the matches ended
by a shutout, analysed) under the page's filters, or the hands of one seat
of a match (the match page's accuracy table), newest first. /moves lists the analysed decisions a
player page, a pair page or a match page counts ("206 blunders", a phase's
bar), with the same filters in the address, costliest first; each links to
its replay at that move. /api/graded-moves is its JSON twin.

A move counts for whoever held its seat in that hand (seat changes
resolved as the player report resolves them); only finished hands have
analysis rows, so nothing hidden leaks.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field

from api import schemas as s
from api.deps import Cur, Cursor, PageNo, Text, form_date
from api.responses import json_response, page
from reports.player import (
    ReportFilters,
    analysed_only,
    hand_outcomes,
    match_end_hands,
    seat_outcomes,
)
from reports.skill import PHASES, seat_ranges

router = APIRouter()

Class = Literal["inaccuracy", "mistake", "blunder", "any"]
Phase = Literal["lead", "early", "middle", "late"]
PER_PAGE = 100
_PHASE_RANGE = {name: (low, PHASES[i + 1][1] if i + 1 < len(PHASES) else 255) for i, (name, low) in enumerate(PHASES)}


def graded_moves(cur: Cursor, f: dict[str, Any], page_no: int = 1) -> dict[str, Any]:
    """The decisions `f` selects (match, player, partner, class, phase,
    profile, date_from, date_to), costliest first, a page of them."""
    where: list[str] = ["NOT a.forced"]
    params: list[Any] = []

    def add(sql: str, *values: Any) -> None:
        where.append(sql)
        params.extend(values)

    if f.get("match"):
        add("a.match = ?", f["match"])
    if f.get("seat") is not None:
        add("a.seat = ?", f["seat"])
    if f.get("player"):
        add("r.player = ?", f["player"])
    if f.get("partner"):  # the seat across: pairs only
        add("EXISTS (SELECT 1 FROM seats s2 WHERE s2.match = a.match AND s2.seat = (a.seat + 2) % 4 "
            "AND s2.player = ? AND s2.from_hand <= a.hand)", f["partner"])
    if f.get("class") == "any":
        add("a.class IS NOT NULL")
    elif f.get("class"):
        add("a.class = ?", f["class"])
    if f.get("phase"):
        add("a.on_line >= ? AND a.on_line < ?", *_PHASE_RANGE[f["phase"]])
    if f.get("profile"):
        add("m.profile = ?", f["profile"])
    if f.get("date_from"):  # the days of the match's start, UTC, both ends included
        add("m.started >= ?", dt.datetime.combine(f["date_from"], dt.time(), dt.UTC))
    if f.get("date_to"):
        add("m.started < ?", dt.datetime.combine(f["date_to"] + dt.timedelta(days=1), dt.time(), dt.UTC))
    body = f"""
        FROM move_analysis a JOIN matches m USING (match)
        JOIN ({seat_ranges()}) r ON r.match = a.match AND r.seat = a.seat
             AND a.hand >= r.from_hand AND a.hand < r.to_hand
        WHERE {" AND ".join(where)}"""
    total = int(cur.execute(f"SELECT count(*) {body}", params).fetchall()[0][0])
    cur.execute(f"""
        SELECT a.match, a.hand, a.ply, a.seat, r.player, coalesce(p.name, r.player) AS name, a.played, a.class,
               round(coalesce(a.pimc_loss, a.dd_loss), 2) AS loss, a.pimc_loss IS NOT NULL AS known,
               CASE WHEN a.pimc_loss IS NULL THEN list_filter(a.alternatives, lambda x: x.dd = a.dd_best)[1].move
                    ELSE list_filter(a.alternatives, lambda x: x.pimc = a.pimc_best)[1].move END AS best
        {body.replace("WHERE", "LEFT JOIN players p ON p.player = r.player WHERE", 1)}
        ORDER BY coalesce(a.pimc_loss, a.dd_loss) DESC, a.match, a.hand, a.ply
        LIMIT {PER_PAGE} OFFSET {(page_no - 1) * PER_PAGE}""", params)  # fmt: skip
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    return {"total": total, "page": page_no, "pages": max(1, -(-total // PER_PAGE)), "rows": rows}


def _filters(match: str | None, seat: int | None, player: str | None, partner: str | None, cls: str | None, phase: str | None,
             profile: str | None, date_from: str | None, date_to: str | None) -> dict[str, Any]:
    got = {"match": match, "seat": seat, "player": player, "partner": partner, "class": cls, "phase": phase, "profile": profile,
           "date_from": form_date(date_from, "date_from"), "date_to": form_date(date_to, "date_to")}
    return {k: v for k, v in got.items() if v or (k == "seat" and v is not None)}


Cls = Annotated[Class | None, Query(alias="class")]
Seat = Annotated[int | None, Query(ge=0, le=9)]


@router.get("/moves", response_class=HTMLResponse, include_in_schema=False)
def moves_page(request: Request, cur: Cur, match: Text = None, seat: Seat = None, player: Text = None, partner: Text = None,
               cls: Cls = None, phase: Phase | None = None, profile: Text = None, date_from: Text = None,
               date_to: Text = None, page_no: PageNo = 1) -> HTMLResponse:
    f = _filters(match, seat, player, partner, cls, phase, profile, date_from, date_to)
    got = graded_moves(cur, f, page_no)
    shown = {k: str(v) for k, v in f.items()}
    named = cur.execute("SELECT name FROM players WHERE player = ?", [player]).fetchall() if player else []
    return page("moves.html", nav="players" if player else "matches", r=got, filters=shown,
                who=named[0][0] if named else None)


class GradedMove(BaseModel):
    """One decision of a list of graded moves."""

    match: str
    hand: int
    ply: int
    seat: int
    player: str  # who held the seat in that hand
    name: str
    played: str  # "62 left": the tile, higher half first, and the end
    best: str | None  # the best move by the grade the loss is counted in
    loss: float  # points lost against it
    known: bool  # graded on what the mover could know (else under perfect information)
    cls: str | None = Field(None, alias="class")  # inaccuracy, mistake, blunder, or null


class GradedMoves(BaseModel):
    """A page of graded moves and the filters that chose them."""

    total: int
    page: int
    pages: int
    rows: list[GradedMove]
    filters: dict[str, str]


@router.get("/api/graded-moves", tags=["moves"], summary="Graded moves, costliest first",
            operation_id="graded_moves", response_model=GradedMoves, responses=s.errors(422))
def api_graded_moves(cur: Cur, match: Text = None, seat: Seat = None, player: Text = None, partner: Text = None, cls: Cls = None,
                     phase: Phase | None = None, profile: Text = None, date_from: Text = None, date_to: Text = None,
                     page_no: PageNo = 1) -> Response:
    """The analysed decisions behind a page's counts (the same filters as /moves), 100 a page."""
    f = _filters(match, seat, player, partner, cls, phase, profile, date_from, date_to)
    got = graded_moves(cur, f, page_no)
    return json_response({**got, "filters": {k: str(v) for k, v in f.items()}})


#: `played`: the hands played out (the player page's "hands played"); `dealt`: the
#: deals its deal luck counts (played or cancelled, dealt 7 tiles); `out`: the
#: hands the player went out in themselves (a dominó of their own, not their partner's).
Outcome = Literal["won", "lost", "tied", "played", "dealt", "out"]
HandResult = Literal["domino", "block"]  # how the hand ended: a player out, or blocked (tranque)
#: the matches won (`given`) or lost (`taken`) by a shutout, each by the last hand the player held in it
Shutout = Literal["given", "taken"]
#: the matches won or lost, each by the last hand the player held in it (the player page's match wins, losses)
MatchOutcome = Literal["won", "lost"]
Flag = Annotated[bool, Query()]


def _hand_rows(cur: Cursor, player: str | None, match: str | None, seat: int | None,
               chosen: ReportFilters) -> Any:
    if player:
        return hand_outcomes(cur, player, chosen if chosen else None)
    if match and seat is not None:
        return seat_outcomes(cur, match, seat)
    raise HTTPException(422, "give a player, or a match and a seat")


@router.get("/hands", response_class=HTMLResponse, include_in_schema=False)
def hands_page(cur: Cur, player: Text = None, match: Text = None, seat: Seat = None, outcome: Outcome | None = None,
               result: HandResult | None = None, profile: Text = None, partner: Text = None, date_from: Text = None,
               date_to: Text = None, bonus: Text = None, passed: Flag = False, analysed: Flag = False,
               shutout: Shutout | None = None, match_outcome: MatchOutcome | None = None, doubles: Flag = False,
               first: Annotated[int | None, Query(ge=1, le=10_000_000)] = None,
               page_no: PageNo = 1) -> HTMLResponse:
    chosen = ReportFilters(profile or None, form_date(date_from, "date_from"), form_date(date_to, "date_to"),
                           partner or None)
    df = _hand_rows(cur, player, match, seat, chosen)
    # first: a match's last hand is the last of all the hands kept
    if shutout:
        df = match_end_hands(df, "won" if shutout == "given" else "lost", shutout=True)
    if match_outcome:
        df = match_end_hands(df, match_outcome)
    if outcome == "dealt":
        df = df.filter(df["result"].is_not_null() & (df["dealt_tiles"] == 7))
    elif outcome == "out":
        df = df.filter(df["went_out"])
    elif outcome:
        df = df.filter(df["played"] & df[outcome])
    if result:
        df = df.filter(df["result"] == result)
    if bonus:  # went out with it
        df = df.filter(df["went_out"] & df["notes"].list.contains(bonus).fill_null(False))
    if passed:  # the hands played in which they passed (the passes counted as the report counts them)
        df = df.filter(df["played"] & (df["passes"] > 0))
    if analysed:
        df = analysed_only(cur, df)
    if doubles:  # at tables that keep the doubles in play (the deal luck's doubles row)
        df = df.filter((df["stock"] != "doubles_aside").fill_null(False))
    if first:  # the first so many, in time order (a point of the player page's running totals)
        df = df.head(first)
    df = df.reverse()  # newest first
    total = df.height
    pages = max(1, -(-total // PER_PAGE))
    rows = df.slice((page_no - 1) * PER_PAGE, PER_PAGE).to_dicts()
    named = cur.execute("SELECT name FROM players WHERE player = ?", [player]).fetchall() if player else []
    filters = {k: v for k, v in (("player", player), ("match", match), ("seat", seat), ("outcome", outcome),
                                 ("result", result), ("bonus", bonus), ("passed", "1" if passed else None),
                                 ("analysed", "1" if analysed else None), ("shutout", shutout),
                                 ("match_outcome", match_outcome),                                 ("doubles", "1" if doubles else None),
                                 ("first", first),
                                 ("profile", profile), ("partner", partner), ("date_from", date_from),
                                 ("date_to", date_to)) if v is not None and v != ""}
    return page("hands.html", nav="players" if player else "matches", rows=rows, total=total, page_no=page_no,
                pages=pages, filters=filters, who=named[0][0] if named else None,
                matches=df["match"].n_unique(), passes=int(df["passes"].sum() or 0) if passed else None)
