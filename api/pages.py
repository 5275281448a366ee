"""The page templates (Jinja2) and the replay page, drawn whole.

The server renders its pages here, and so do the render workers
(api.pool): a replay page leaves a worker as the bytes sent, so the
server's one process, which holds the GIL for every request, only routes
and caches it. Nothing here imports FastAPI, the store or DuckDB.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from api.analysis_view import shown_move, summary_panel
from api.glossary import term_link
from api.hand_page import Drawing, hand_drawing
from api.names import as_value, shown
from api.replay_model import HandData
from api.review import move_list
from api.tile_svg import ply_style
from replay.tiles import tile_name

__all__ = ["draw_hand_page", "env", "flagged_now", "hand_page", "mark_flagged", "render", "u", "warm"]

env = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
    # the templates ship with the package: checking their mtimes on every
    # render was an eighth of a replay page's CPU (bench/api.py under py-spy)
    auto_reload=False,
)


def u(*parts: object, **params: object) -> str:
    """A path with every part quoted (ids come from logs) and an optional query.

    >>> u("matches", "m/1", "hands", 2, ply=3, q=None)
    '/matches/m%2F1/hands/2?ply=3'
    """
    try:  # a replay page asks for a dozen, the same for every hand of a match
        return _u(*parts, **params)
    except TypeError:  # a part or a value that is not hashable
        return _u.__wrapped__(*parts, **params)


@lru_cache(maxsize=4096, typed=True)  # typed: 1 and True are other parts
def _u(*parts: object, **params: object) -> str:
    path = "/" + "/".join(quote(str(p), safe="") for p in parts)
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


def _side_of(teams: str, seat: int | None) -> int | None:
    if seat is None:
        return None
    return seat % 2 if teams == "pairs" else seat


def _finalize(value: object) -> object:
    # every text a template writes out (ids and names from logs among them) as
    # a person should read it: invisible and direction characters spelled out
    if isinstance(value, str) and not isinstance(value, Markup):
        return shown(value)
    return value


env.finalize = _finalize

# the players the cheat signals flag: the app sets the source (api.insights.FlaggedPlayers)
# once its store is open; a render worker has none, and marks nobody
_flag_source: list[Callable[[], frozenset[str]]] = []


def mark_flagged(source: Callable[[], frozenset[str]]) -> None:
    """Have every page mark the names of the players `source()` gives."""
    _flag_source[:] = [source]


def flagged_now() -> frozenset[str]:
    """The players flagged now (none without a source): a render worker has
    no store, so the server sends it the flags of the hand it draws."""
    if not _flag_source:
        return frozenset()
    try:
        return _flag_source[0]()
    except Exception:  # no analysis tables yet, a store being replaced: no mark, never a broken page
        return frozenset()


def _flagged(player: object) -> bool:
    return player in flagged_now()

env.globals.update(u=u, side_of=_side_of, has_fairness=True, term=term_link, flagged=_flagged)
env.filters["tile"] = lambda t: "" if t is None else tile_name(t)
env.filters["value"] = as_value  # a form field's value, as typed
env.filters["move"] = lambda m: "" if m is None else shown_move(m)

def warm() -> None:
    """Compile every template now, at start-up (a quarter of a second in all).

    Compiled on first use instead, the first page of each kind took 80 ms
    more, and under 20 clients every request behind it waited as long.
    """
    for name in env.list_templates(filter_func=lambda n: n.endswith(".html")):
        env.get_template(name)


def render(name: str, **ctx: Any) -> str:
    """The template `name` rendered with `ctx`."""
    return env.get_template(name).render(**ctx)


def hand_page(board: str, sections: list[str], info: dict[str, Any], seats: list[dict[str, Any]],
              ply: int | None, viewer: int | None = None, drawing: Drawing | None = None,
              flagged: frozenset[str] | None = None) -> str:
    """The replay page of a drawn hand (`hand_sections`) showing ply `ply`
    (0 if None; the last if past it), as seat `viewer` saw it (None: all).

    Every ply is sent; without JavaScript the style and the one unhidden
    section show the ply asked for. `flagged`: the players to mark as
    flagged (None: ask the app's source, which a render worker lacks).
    """
    last = len(sections) - 1
    at = 0 if ply is None else max(0, min(ply, last))
    notes = "".join(s.replace(" hidden>", ">", 1) if i == at else s for i, s in enumerate(sections))
    view = None if viewer is None else f"seat{viewer}"
    a = info.get("analysis") if viewer is None else None  # a seat's view: what it knew, no more
    flags = flagged_now() if flagged is None else flagged
    mark = env.get_template("macros.html").module.flag  # type: ignore[attr-defined]
    panel = (summary_panel(a, seats, info["players"], info["teams"], lambda p: str(mark(p, p in flags)))
             if a is not None else "")
    vq = f"view={view}&" if view else ""
    moves = move_list(drawing.plies, drawing.graded, at, vq) if drawing is not None else ""
    return render("hand.html", nav="matches", ply=at, last=last, info=info, seats=seats,
                  view=view, viewer=viewer, vq=vq,
                  board=Markup(board), style=Markup(ply_style(at, last)), notes=Markup(notes),
                  analysis=Markup(panel), moves=Markup(moves), graded=bool(drawing and drawing.graded),
                  flags=flags)


def draw_hand_page(hand: HandData, info: dict[str, Any], seats: list[dict[str, Any]], ply: int | None,
                   viewer: int | None = None, flagged: frozenset[str] | None = None) -> bytes:
    """The replay page of `hand` at ply `ply` (as seat `viewer` saw it), as
    the bytes sent (UTF-8); `flagged`: the seats' players the cheat signals
    flag (None: ask the app's source)."""
    flags = flagged_now() if flagged is None else flagged
    d = hand_drawing(hand, viewer, flags)
    return hand_page(d.board, d.sections, info, seats, ply, viewer, d, flags).encode()
