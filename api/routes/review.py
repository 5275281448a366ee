"""Review that teaches, across a player's hands: their costliest moves
(/players/{id}/costliest and /api/players/{id}/costliest), training from
their mistakes on a spaced-repetition schedule (/train?player=ID,
/api/train?player=ID, answers POSTed to /api/train/answer) and puzzles from
the store (/puzzles, /api/puzzles, answers to /api/puzzles/answer).

Registered before the players' router: its `{player:path}` would take
`p-1/costliest` for a player id. Answers are writes: they need the desk's
token (api.middleware), or the answering player's own key (api.player_key),
which the token holder gets at /api/train/key.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal
from urllib.parse import quote, urlencode

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Query, Request, Security
from fastapi.responses import HTMLResponse, Response
from fastapi.security import HTTPBearer
from markupsafe import Markup
from pydantic import BaseModel, Field

from api import schemas as s
from api.deps import Cur, PageNo, Text, Writer
from api.player_key import PLAYER_KEY_PATHS, SCOPE_KEY, key_matches, player_key
from api.responses import json_response, not_found, page
from api.review import alternative_lines, line_book
from api.training_view import hand_data, position, reveal
from replay.store.training import put_try, solve_rates
from reports import costliest as cm
from reports import puzzles as pz
from reports import training as tr
from reports.skill import seat_ranges

router = APIRouter()

Phase = Literal["opening", "early", "middle", "late"]
Cls = Literal["inaccuracy", "mistake", "blunder"]
Sort = Literal["loss", "dd_loss", "date"]
Order = Literal["asc", "desc"]
PER_PAGE = 50


def _exists(cur: Any, player: str) -> bool:
    return cur.execute("SELECT 1 FROM seats WHERE player = ? LIMIT 1", [player]).fetchone() is not None


# -- costliest moves ------------------------------------------------------------------


@router.get("/api/players/{player:path}/costliest", tags=["review"], summary="A player's costliest moves",
            operation_id="player_costliest", response_model=s.Costliest, responses=s.errors(404, 422))
def api_costliest(cur: Cur, player: str, profile: Text = None, phase: Phase | None = None,
                  cls: Annotated[Cls | None, Query(alias="class")] = None, sort: Sort | None = None,
                  order: Order | None = None, page_no: PageNo = 1,
                  per_page: Annotated[int, Query(ge=1, le=500)] = PER_PAGE) -> Response:
    """The player's decisions that lost points, across every match: worst
    first (or by `sort`), with the best move and links to the replay at
    that move and to training."""
    if not _exists(cur, player):
        raise HTTPException(404, f"no player {player!r}")
    got = cm.costliest(cur, player, profile=profile or None, phase=phase, cls=cls, sort=sort, order=order,
                       limit=per_page, offset=(page_no - 1) * per_page)
    _links(got["moves"], player)
    return json_response({**got, "page": page_no, "per_page": per_page})


def _links(moves: list[dict[str, Any]], player: str) -> None:
    for m in moves:
        m["replay"] = f"/matches/{quote(m['match'], safe='')}/hands/{m['hand']}?ply={m['ply']}"
        m["train"] = "/train?" + urlencode({"player": player, "match": m["match"], "hand": m["hand"], "ply": m["ply"]})


@router.get("/players/{player:path}/costliest", response_class=HTMLResponse, include_in_schema=False)
def costliest_page(cur: Cur, player: str, profile: Text = None, phase: Text = None,
                   cls: Annotated[str | None, Query(alias="class", max_length=20)] = None,
                   sort: Text = None, order: Text = None, page_no: PageNo = 1) -> HTMLResponse:
    if not _exists(cur, player):
        return not_found(f"no player {player!r} in the store")
    bad = [(n, v) for n, v, ok in (("phase", phase, cm.PHASES), ("class", cls, ("inaccuracy", "mistake", "blunder")),
                                   ("sort", sort, cm.SORTS), ("order", order, ("asc", "desc"))) if v and v not in ok]
    if bad:
        return page("error.html", status=422, title="Bad request",
                    message=f"{bad[0][0]} cannot be {bad[0][1]!r}")
    got = cm.costliest(cur, player, profile=profile or None, phase=phase or None, cls=cls or None, sort=sort or None,
                       order=order or None, limit=PER_PAGE, offset=(page_no - 1) * PER_PAGE)
    _links(got["moves"], player)
    profiles = [r[0] for r in cur.execute("SELECT DISTINCT profile FROM matches WHERE profile IS NOT NULL ORDER BY 1").fetchall()]
    return page("costliest.html", nav="players", r=got, page_no=page_no, per_page=PER_PAGE, profiles=profiles,
                phases=list(cm.PHASES))


# -- training ----------------------------------------------------------------------------


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


async def _position(request: Request, match: str, hand: int, ply: int) -> dict[str, Any] | None:
    def make() -> dict[str, Any] | None:
        found = hand_data(request.app.state, match, hand)
        return None if found is None else position(found[0], ply)

    return await anyio.to_thread.run_sync(make)


def _round(cur: Any, player: str, match: str | None, hand: int | None, ply: int | None) -> dict[str, Any]:
    got = tr.queue(cur, player, _now())
    pick = None
    if match is not None and hand is not None and ply is not None:
        pick = {"match": match, "hand": hand, "ply": ply}
    else:
        nxt = (got["due"] or got["new"] or [None])[0]
        if nxt is not None:
            pick = {"match": nxt["match"], "hand": nxt["hand"], "ply": nxt["ply"]}
    return {**got, "next": pick}


@router.get("/api/train", tags=["review"], summary="A player's training round", operation_id="training_round",
            response_model=s.TrainingRound, responses=s.errors(404, 422))
async def api_train(request: Request, player: Annotated[str, Query(max_length=200)],
                    match: Text = None, hand: Annotated[int | None, Query(ge=1, le=10_000)] = None,
                    ply: Annotated[int | None, Query(ge=1, le=1_000)] = None) -> Response:
    """The player's training round: the positions due, new ones, every card's
    schedule, and the next position as the player saw it (no values: they
    come with the answer)."""
    got = await anyio.to_thread.run_sync(_with_cur, request, lambda cur: (_exists(cur, player), _round(cur, player, match, hand, ply)))
    if not got[0]:
        raise HTTPException(404, f"no player {player!r}")
    r = got[1]
    r["position"] = None if r["next"] is None else await _position(request, **r["next"])
    if r["position"] is not None:
        r["position"].pop("board")
    return json_response(r)


def _with_cur(request: Request, f: Any) -> Any:
    cur = request.app.state.store.cursor()
    try:
        return f(cur)
    finally:
        cur.close()


@router.get("/train", response_class=HTMLResponse, include_in_schema=False)
async def train_page(request: Request, player: Annotated[str | None, Query(max_length=200)] = None,
                     match: Text = None, hand: Annotated[int | None, Query(ge=1, le=10_000)] = None,
                     ply: Annotated[int | None, Query(ge=1, le=1_000)] = None) -> HTMLResponse:
    if not player:
        return page("train.html", nav="players", r=None, player=None, pos=None, board="")
    got = await anyio.to_thread.run_sync(_with_cur, request, lambda cur: (_exists(cur, player), _round(cur, player, match, hand, ply)))
    if not got[0]:
        return not_found(f"no player {player!r} in the store")
    r = got[1]
    pos = None if r["next"] is None else await _position(request, **r["next"])
    return page("train.html", nav="players", r=r, player=player, pos=pos,
                board=Markup(pos.pop("board")) if pos else "")


#: A player's own key as the API documents it: the answers take it or the token.
PlayerKey = Security(HTTPBearer(
    scheme_name="playerKey", auto_error=False,
    description="A player's own key (`pk-` and 32 hex digits), sent as `Authorization: Bearer <key>`: it "
                "answers training positions and puzzles as that player only (`player` in the body). The "
                "token holder gets it from `POST /api/train/key` or `replay train-key PLAYER`.",
))


def _check_key(request: Request, player: str | None) -> None:
    """A player's key (left by the write guard) writes for its player only:
    403 for another player's key or a made-up one."""
    given = request.scope.get(SCOPE_KEY)
    if given is None:  # the token
        return
    if not player:
        raise HTTPException(422, "player: a player's key answers as its player, who must be named")
    if not key_matches(request.app.state.token or "", player, given):
        raise HTTPException(403, f"this key is not the key of player {player!r}")


class Answer(BaseModel):
    """A move picked at a position (a puzzle's or a training card's)."""

    match: str = Field(max_length=200)
    hand: int = Field(ge=1, le=10_000)
    ply: int = Field(ge=1, le=1_000)
    move: str = Field(max_length=20, description='as the analysis JSON writes moves: "62 left", "pass"')
    player: str | None = Field(default=None, max_length=200)


async def _reveal(request: Request, a: Answer) -> dict[str, Any]:
    def make() -> dict[str, Any] | None:
        found = hand_data(request.app.state, a.match, a.hand)
        return None if found is None else reveal(line_book(request.app.state).attach(found[0]), a.ply, a.move)

    got = await anyio.to_thread.run_sync(make)
    if got is None:
        raise HTTPException(404, f"no decision at ply {a.ply} of hand {a.hand} of {a.match!r} with move {a.move!r}")
    return got


@router.post("/api/train/answer", tags=["review"], summary="Answer a training position",
             operation_id="answer_training", response_model=s.Revealed,
             responses={**s.errors(400, 404, 422), **s.WRITE_ERRORS}, dependencies=[Writer, PlayerKey])
async def api_train_answer(request: Request, a: Answer) -> Response:
    """Answer a training position: the values, the lines and why, and the
    position's next review (FSRS). Needs the token or the player's own key."""
    if not a.player:
        raise HTTPException(422, "player: whose training this is")
    _check_key(request, a.player)
    got = await _reveal(request, a)
    player = a.player

    def write(cur: Any) -> dict[str, Any]:
        if not _exists(cur, player):
            raise HTTPException(404, f"no player {player!r}")
        seats = cur.execute(
            f"SELECT count(*) FROM ({_seat_of()}) WHERE match = ? AND seat = ? AND ? >= from_hand AND ? < to_hand",
            [player, a.match, got["seat"], a.hand, a.hand]).fetchone()[0]
        if not seats:
            raise HTTPException(422, f"ply {a.ply} of hand {a.hand} of {a.match!r} is not a decision of {player!r}")
        with request.app.state.store.load_lock:
            return tr.answer(cur, player, (a.match, a.hand, a.ply), a.move, max(0.0, got["loss"]), got["scoring"],
                             _now())

    got["schedule"] = await anyio.to_thread.run_sync(_with_cur, request, write)
    return json_response(got)


def _seat_of() -> str:
    return seat_ranges("WHERE s.player = ?")


# -- any alternative's line ------------------------------------------------------------------


@router.get("/api/lines", tags=["review"], summary="The principal line after one alternative",
            operation_id="alternative_line", response_model=s.Lines, responses=s.errors(404, 422))
async def api_lines(request: Request, match: Annotated[str, Query(max_length=200)],
                    hand: Annotated[int, Query(ge=1, le=10_000)], ply: Annotated[int, Query(ge=1, le=1_000)],
                    move: Annotated[str, Query(max_length=20, description='"62 left", as the analysis writes moves')]
                    ) -> Response:  # fmt: skip
    """The principal line after any legal alternative of a decision of a
    finished hand, beside the line after the move played, with the reasons
    (the replay's JSON twin gives the best move's)."""

    def make() -> dict[str, Any] | None:
        found = hand_data(request.app.state, match, hand)
        return None if found is None else alternative_lines(found[0], ply, move)

    got = await anyio.to_thread.run_sync(make)
    if got is None:
        raise HTTPException(404, f"no decision at ply {ply} of hand {hand} of {match!r} with the move {move!r}")
    return json_response(got)


# -- puzzles ------------------------------------------------------------------------------


#: Puzzles listed (and given their themes, a search of their lines each): the first in store order.
LISTED = 500


def _puzzles(request: Request, cur: Any, profile: str | None) -> tuple[list[dict[str, Any]], int]:
    """The store's first `LISTED` puzzles with their themes, and how many
    there are in all (kept until the store changes)."""
    state = request.app.state
    gen = state.store.generation
    cache: tuple[int, dict[str | None, tuple[list[dict[str, Any]], int]]] | None = getattr(state, "puzzle_cache", None)
    if cache is None or cache[0] != gen:
        cache = state.puzzle_cache = (gen, {})
    if profile not in cache[1]:
        found = pz.candidates(cur, profile)
        listed = found[:LISTED]
        for p in listed:
            got = hand_data(state, p["match"], p["hand"])
            ln = {} if got is None else line_book(state).of(got[0]).get(p["ply"], {})
            p["themes"] = ln.get("themes", [])
        cache[1][profile] = (listed, len(found))
    listed, total = cache[1][profile]
    return list(listed), total


def _puzzle_list(request: Request, cur: Any, profile: str | None, theme: str | None) -> dict[str, Any]:
    found, total = _puzzles(request, cur, profile)
    rates = solve_rates(cur)
    hands = pz.count_hands(cur, profile)
    out = []
    for p in found:
        if theme and not any(t == theme or t.startswith(theme + " ") for t in p["themes"]):
            continue
        tries, solved = rates.get((p["match"], p["hand"], p["ply"]), (0, 0))
        # neither the answer nor the move played at the table (it may be the answer)
        out.append({k: v for k, v in p.items() if k not in ("answer", "played")}
                   | {"tries": tries, "solved": solved, "solve_rate": None if not tries else round(solved / tries, 3)})
    return {"puzzles": out, "found": total, "listed": len(found), "hands": hands,
            "per_10000_hands": None if not hands else round(10_000 * total / hands, 1),
            "themes": sorted({t.split(" in ")[0] for p in found for t in p["themes"]}),
            "filters": {"profile": profile, "theme": theme}}


@router.get("/api/puzzles", tags=["review"], summary="Puzzles from the store", operation_id="list_puzzles",
            response_model=s.Puzzles, responses=s.errors(422))
async def api_puzzles(request: Request, profile: Text = None, theme: Text = None) -> Response:
    """Every puzzle of the store (one move clearly best under both grades:
    docs/review.md), with its themes and solve rate; filters by profile and
    theme; how many were found per 10,000 sampled hands."""
    got = await anyio.to_thread.run_sync(_with_cur, request, lambda cur: _puzzle_list(request, cur, profile or None, theme or None))
    return json_response(got)


@router.get("/puzzles", response_class=HTMLResponse, include_in_schema=False)
async def puzzles_page(request: Request, profile: Text = None, theme: Text = None, match: Text = None,
                       hand: Annotated[int | None, Query(ge=1, le=10_000)] = None,
                       ply: Annotated[int | None, Query(ge=1, le=1_000)] = None) -> HTMLResponse:
    got = await anyio.to_thread.run_sync(_with_cur, request, lambda cur: _puzzle_list(request, cur, profile or None, theme or None))
    profiles = await anyio.to_thread.run_sync(_with_cur, request, lambda cur: [r[0] for r in cur.execute(
        "SELECT DISTINCT profile FROM matches WHERE profile IS NOT NULL ORDER BY 1").fetchall()])
    pos = None
    if match is not None and hand is not None and ply is not None:
        if not any((p["match"], p["hand"], p["ply"]) == (match, hand, ply) for p in got["puzzles"]):
            return not_found(f"no puzzle at ply {ply} of hand {hand} of {match!r}")
        pos = await _position(request, match, hand, ply)
    return page("puzzles.html", nav="players", r=got, profiles=profiles, pos=pos,
                board=Markup(pos.pop("board")) if pos else "")


@router.post("/api/puzzles/answer", tags=["review"], summary="Answer a puzzle", operation_id="answer_puzzle",
             response_model=s.Revealed, responses={**s.errors(400, 404, 422), **s.WRITE_ERRORS},
             dependencies=[Writer, PlayerKey])
async def api_puzzle_answer(request: Request, a: Answer) -> Response:
    """Answer a puzzle: solved or not, the values, the lines and why; the try
    is kept for the solve rate. Needs the token, or the player's own key
    (then `player` is required: the try is theirs)."""
    _check_key(request, a.player)
    puzzles, _ = await anyio.to_thread.run_sync(_with_cur, request, lambda cur: _puzzles(request, cur, None))
    p = next((p for p in puzzles if (p["match"], p["hand"], p["ply"]) == (a.match, a.hand, a.ply)), None)
    if p is None:
        raise HTTPException(404, f"no puzzle at ply {a.ply} of hand {a.hand} of {a.match!r}")
    got = await _reveal(request, a)
    got["solved"] = a.move == p["answer"]
    got["answer"] = p["answer"]

    def write(cur: Any) -> None:
        with request.app.state.store.load_lock:
            put_try(cur, a.match, a.hand, a.ply, a.player, a.move, got["solved"], _now())

    await anyio.to_thread.run_sync(_with_cur, request, write)
    return json_response(got)


# -- a player's own key ------------------------------------------------------------------


class KeyFor(BaseModel):
    """Whose key."""

    player: str = Field(max_length=200)


class PlayerKeyOut(BaseModel):
    """A player's own key and how to send it."""

    player: str
    key: str = Field(description="`pk-` and 32 hex digits; valid until the server's token changes")
    header: str = Field(description="the header that answers as this player")
    writes: list[str] = Field(description="the writes the key may make, as this player only")


@router.post("/api/train/key", tags=["review"], summary="A player's own key", operation_id="player_key",
             response_model=PlayerKeyOut, responses={**s.errors(404, 422), **s.WRITE_ERRORS}, dependencies=[Writer])
def api_player_key(cur: Cur, request: Request, k: KeyFor) -> Response:
    """The key with which a player answers their training positions and
    puzzles without the token (an HMAC of the player id under the token:
    the same every time it is asked, revoked for everyone when the token
    changes). Needs the token."""
    if not _exists(cur, k.player):
        raise HTTPException(404, f"no player {k.player!r}")
    key = player_key(request.app.state.token, k.player)
    return json_response({"player": k.player, "key": key, "header": f"Authorization: Bearer {key}",
                          "writes": sorted(PLAYER_KEY_PATHS)})
