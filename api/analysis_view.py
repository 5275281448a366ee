"""The hand analysis on the replay and match pages (replay.analysis's rows).

A hand's analysis comes as the plain dict the page and its JSON twin
carry (replay.store.analysis_blob.shown_analysis); `ply_panel` draws one
ply's alternatives with both values, the played one marked with its loss
and class;
`value_graph` draws the value of the hand ply by ply as inline SVG, each
ply a link; `summary_panel` puts par, result and each seat's accuracy
above the board. Nothing here is ever built for a hand that is not over
(the rows only exist for finished hands; api.queries.hand_of checks).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from api.replay_model import esc as _esc
from api.replay_model import esc_once

SIGN = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}


def shown_move(move: str) -> str:
    """A move as the page names tiles: "54 left" as "[5|4] left".

    >>> shown_move("54 left"), shown_move("pass")
    ('[5|4] left', 'pass')
    """
    if len(move) > 3 and move[2] == " " and move[:2].isdigit():
        return f"[{move[0]}|{move[1]}] {move[3:]}"
    return move


@lru_cache(maxsize=256)
def _move_cell(move: str) -> str:
    """A move as a table's cell shows it (`shown_move`, escaped): a hand's panels name the same few."""
    return _esc(shown_move(move))


def _num(x: float | None, nd: int = 1) -> str:
    if x is None:
        return "–"
    return f"{x:+.{nd}f}" if nd else f"{x:+d}"


def known_loss(p: dict[str, Any]) -> float | None:
    """A graded ply's loss on what the mover could know: the read grade's
    where there is one, else the uniform sampled grade's (None: not sampled)."""
    return p.get("read_loss") if p.get("read_loss") is not None else p["pimc_loss"]


def read_gap(p: dict[str, Any]) -> str:
    """One sentence on how reading the other seats' plays changes a ply's
    grade ("" where it has no read grade or changes nothing that shows).

    >>> print(read_gap({"read_loss": 0.0, "pimc_loss": 4.2, "class": None, "class_uniform": None}))
    Read from the other seats' plays, this move loses 0.0 points, against 4.2 with every deal weighted alike: their plays make some deals likelier than others.
    """
    r, u = p.get("read_loss"), p["pimc_loss"]
    if r is None or u is None or (abs(r - u) < 1.0 and p["class"] == p.get("class_uniform")):
        return ""
    return (f"Read from the other seats' plays, this move loses {r:.1f} points, against {u:.1f} with every deal "
            "weighted alike: their plays make some deals likelier than others.")


def ply_panel(p: dict[str, Any], players: int = 4, teams: str = "pairs") -> str:
    """One ply's alternatives with their values (HTML): exact, known (every
    deal alike) and, where the family has a play model, read (the deals
    weighted by the other seats' plays: the headline).

    The values count as the whole page does (`convention`): in a game of
    two sides, for seat 0's side whoever moves, so the other side's best
    move is the lowest; the points lost are the mover's, always a loss.
    """
    cls = p["class"]
    flip = _side_value(1, p["seat"], players, teams)  # the mover's values as the page counts them
    k = known_loss(p)
    loss = k if k is not None else p["dd_loss"]
    if p["forced"]:
        head = "forced: no choice"
    elif cls:
        head = (f'<b class="grade g-{cls}">{_esc(shown_move(p["played"]))}{SIGN[cls]} {cls}</b>: lost {loss:.1f} '
                f"on what the seat could know, {p['dd_loss']} under perfect information")  # fmt: skip
    elif p.get("too_close"):
        head = (f"too close to call: lost {loss:.1f} on what the seat could know, but the evidence leaves "
                f"the mark open; {p['dd_loss']} under perfect information")  # fmt: skip
    elif p["dd_loss"] or (k or 0) > 0.05:
        head = f"lost {loss:.1f} on what the seat could know, {p['dd_loss']} under perfect information"
    else:
        head = "a best move"
    how = ""
    if not p["samples"] and not p["forced"]:
        head += ' <span class="muted unsampled">(not sampled yet: "known" comes later)</span>'
    if p["samples"]:
        how = f"{'every one of the' if p['exact'] else ''} {p['samples']} deals the seat could face"
    rows = []
    read = any(a.get("read") is not None for a in p["alternatives"])
    best_dd = max(a["dd"] for a in p["alternatives"])
    key = "read" if read else "pimc"
    means = [a[key] for a in p["alternatives"] if a[key] is not None]
    best_pi = max(means) if means else None
    for a in p["alternatives"]:
        mine = a["move"] == p["played"]
        tags = []
        if a["dd"] == best_dd:
            tags.append('<span class="tag best" title="a best move under perfect information">★</span>')
        if best_pi is not None and a[key] is not None and a[key] >= best_pi - 1e-9:
            tags.append('<span class="tag known" title="the best move on what the seat could know">☆</span>')
        mark = f' <b class="grade g-{cls}">{SIGN[cls]}</b>' if mine and cls else ""
        rcell = f'<td class="num">{_num(_times(a["read"], flip))}{_span(a["read_ci"], flip)}</td>' if read else ""
        rows.append(
            f'<tr class="{"played" if mine else ""}"><td>{_move_cell(a["move"])}{mark}{" ←" if mine else ""}'
            f' {" ".join(tags)}</td><td class="num">{flip * a["dd"]:+d}</td>{rcell}'
            f'<td class="num">{_num(_times(a["pimc"], flip))}{_span(a["pimc_ci"], flip)}</td></tr>'
        )
    rhead = ('<th title="what a strong reader could know: the deals the seat could face, each weighted by how '
             'likely the other seats\' plays were in it, with its 95% interval">read</th>') if read else ""
    gap = read_gap(p)
    whose = _whose_values(p["seat"], players, teams)
    return (
        f'<div class="analysis"><h3>Analysis <small>{head}</small></h3>'
        f'<table class="alts-values"><thead><tr><th>move</th><th title="perfect information: the exact value, every hand known">exact</th>'
        f'{rhead}<th title="what the seat could know, every deal weighted alike: the mean over the deals it could face, with its 95% interval">'
        f'{"alike" if read else "known"}</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        + (f'<p class="read-gap">{_esc(gap)}</p>' if gap else "")
        + (f'<p class="muted">read: what a strong reader could know, the deals weighted by how likely the other '
           f"seats' plays were in each (worth {p['read_ess']:.0f} equal deals); alike: every deal weighted "
           f"alike. The grade follows read.</p>" if read and p.get("read_ess") is not None else "")
        + (f'<p class="muted whose">{whose}; ← played; exact: every hand known; known: '
           f"the mean over {how}, with its 95% interval</p>" if how else
           f'<p class="muted whose">{whose}; ← played; exact: every hand known</p>')
        + "</div>"
    )  # fmt: skip


def _times(x: float | None, flip: int) -> float | None:
    return None if x is None else flip * x


def _span(ci: list[float] | None, flip: int = 1) -> str:
    if not ci or ci[0] == ci[1]:
        return ""
    lo, hi = sorted((flip * ci[0], flip * ci[1]))
    return f" <small>[{lo:+.1f}, {hi:+.1f}]</small>"


def own_panel(p: dict[str, Any]) -> str:
    """A seat's own decision in its view (HTML): each alternative's value on
    what the seat could know, the played one marked; no perfect-information
    value (it speaks of tiles the seat did not see). A decision not sampled
    yet says so."""
    if p["forced"]:
        return '<div class="analysis own"><h3>Your move <small>forced: no choice</small></h3></div>'
    if not p["samples"] or any(a["pimc"] is None for a in p["alternatives"]):
        return ('<div class="analysis own"><h3>Your move <small>not graded yet on what you could know</small></h3>'
                "</div>")
    cls = p["class"]
    key = "read" if all(a.get("read") is not None for a in p["alternatives"]) else "pimc"
    lost = known_loss(p) or 0.0
    head = (f'<b class="grade g-{cls}">{SIGN[cls]} {cls}</b>: lost {lost:.1f}' if cls else
            f"too close to call: lost {lost:.1f}" if p.get("too_close") else
            f"lost {lost:.1f}" if lost > 0.05 else "a best move")  # fmt: skip
    best = max(a[key] for a in p["alternatives"])
    rows = []
    for a in p["alternatives"]:
        mine = a["move"] == p["played"]
        star = ' <span class="tag known" title="the best move on what you could know">☆</span>' if a[key] >= best - 1e-9 else ""
        rows.append(f'<tr class="{"played" if mine else ""}"><td>{_esc(shown_move(a["move"]))}{" ←" if mine else ""}'
                    f'{star}</td><td class="num">{_num(a[key])}{_span(a[key + "_ci"])}</td></tr>')
    how = f"{'every one of the' if p['exact'] else ''} {p['samples']} deals you could face"
    weighed = (", each weighted by how likely the other seats' plays were in it (read from their plays)"
               if key == "read" else "")
    gap = read_gap(p)
    return (f'<div class="analysis own"><h3>Your move <small>{head}</small></h3>'
            '<table class="alts-values"><thead><tr><th>move</th><th title="the mean over the deals you could face">'
            f'{"read" if key == "read" else "known"}</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            + (f'<p class="read-gap">{_esc(gap)}</p>' if gap else "")
            + f'<p class="muted">points from your side; the mean over {how}{weighed}, with its 95% interval</p></div>')


def _side_value(v: int, seat: int, players: int, teams: str) -> int:
    """A value from `seat`'s side as side 0's (two sides: zero-sum)."""
    two = teams == "pairs" or players == 2
    if not two:
        return v
    mine = seat % 2 if teams == "pairs" else seat
    return v if mine == 0 else -v


def value_graph(a: dict[str, Any], players: int, teams: str, current: int | None = None,
                width: int = 640, height: int = 150) -> str:  # fmt: skip
    """The hand's value ply by ply (SVG): the value of each position under
    perfect play, and its drop where the move played lost some, from side
    0's point of view in two-sided games (in three- and four-seat individual
    games a line a seat, from that seat's side, through its own moves);
    each ply's point links to it."""
    plies = a["plies"]
    if not plies:
        return ""
    two = teams == "pairs" or players == 2
    pts_before = [_side_value(p["dd_best"], p["seat"], players, teams) for p in plies]
    pts_after = [_side_value(p["dd"], p["seat"], players, teams) for p in plies]
    vals = pts_before + pts_after + [0]
    lo, hi = min(vals), max(vals)
    if hi == lo:
        hi, lo = hi + 1, lo - 1
    pad_l, pad_r, pad_t, pad_b = 40, 10, 24, 22
    n = len(plies)
    w, h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(i: int) -> float:
        return pad_l + (w * i / max(n - 1, 1))

    def y(v: float) -> float:
        return pad_t + h * (hi - v) / (hi - lo)

    whose = convention(players, teams)
    # the axis's title, above the plot: whose points, and which way is ahead
    out = [f'<svg class="vgraph" viewBox="0 0 {width} {height}" role="group" aria-label="value of the hand ply by ply, {whose}">'
           f'<text x="{pad_l}" y="{pad_t - 9}" class="lab whose">{whose} ↑</text>']  # fmt: skip
    out.append(f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(0):.1f}" y2="{y(0):.1f}" class="zero"/>')
    out.append(f'<text x="4" y="{y(hi) + 4:.1f}" class="lab">{hi:+d}</text>')
    out.append(f'<text x="4" y="{y(lo) + 4:.1f}" class="lab">{lo:+d}</text>')
    # two sides: one line, side 0's; else a line a seat, through its own decisions
    groups = [list(range(n))] if two else [[i for i, p in enumerate(plies) if p["seat"] == s] for s in range(players)]
    for k, idx in enumerate(groups):
        if len(idx) > 1:
            line = " ".join(f"{x(i):.1f},{y(pts_before[i]):.1f}" for i in idx)
            out.append(f'<polyline points="{line}" class="before{"" if two else f" s{k}"}"/>')
    for i, p in enumerate(plies):
        cls = p["class"]
        if pts_before[i] != pts_after[i]:
            out.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(pts_before[i]):.1f}" '
                       f'y2="{y(pts_after[i]):.1f}" class="drop"/>')  # fmt: skip
        r = 5 if cls else 3
        cur = " current" if current == p["ply"] else ""
        who = "" if two else f" s{p['seat']}"
        # each title once a page: escaped past the cache, which keeps the texts that come again
        title = f"ply {p['ply']}: seat {p['seat']} {shown_move(p['played'])}, lost {p['dd_loss']}"
        if cls:
            title += f" ({cls})"
        out.append(
            f'<a href="?ply={p["ply"]}" data-ply="{p["ply"]}" tabindex="-1"><circle cx="{x(i):.1f}" cy="{y(pts_before[i]):.1f}" '
            f'r="{r}" class="pt{who}{" g-" + cls if cls else ""}{cur}"><title>{esc_once(title)}</title></circle></a>'
        )
    out.append(f'<text x="{pad_l}" y="{height - 6}" class="lab">ply {plies[0]["ply"]}</text>')
    out.append(f'<text x="{width - pad_r - 40}" y="{height - 6}" class="lab">ply {plies[-1]["ply"]}</text>')
    out.append("</svg>")
    return "".join(out)


def _whose(teams: str) -> str:
    return "seats 0 and 2" if teams == "pairs" else "seat 0"


def convention(players: int, teams: str) -> str:
    """How the hand page counts points, in the words its graph, its sentence
    and its move tables share: in a game of two sides, always for the side
    of seat 0 (as a chess board counts for White), up being that side
    ahead; else each seat for itself.

    >>> convention(4, "pairs")
    'points for seats 0 and 2 (up: they are ahead)'
    >>> convention(2, "individual")
    'points for seat 0 (up: it is ahead)'
    >>> convention(3, "individual")
    "each seat's own line, in points for that seat"
    """
    if teams == "pairs" or players == 2:
        return f"points for {_whose(teams)} (up: {'they are' if teams == 'pairs' else 'it is'} ahead)"
    return "each seat's own line, in points for that seat"


def _whose_values(seat: int, players: int, teams: str) -> str:
    """Whose points a move table counts, and which way the mover wants them.

    >>> _whose_values(3, 4, "pairs")
    'points for seats 0 and 2, as on the graph (seat 3 wants them low)'
    """
    if teams == "pairs" or players == 2:
        mine = seat % 2 if teams == "pairs" else seat
        return f"points for {_whose(teams)}, as on the graph (seat {seat} wants them {'high' if mine == 0 else 'low'})"
    return f"points for seat {seat}, the seat to move"


def summary_panel(a: dict[str, Any], seats: list[dict[str, Any]], players: int, teams: str,
                  flag: Callable[[str], str] | None = None) -> str:
    """Par against result and the seats' accuracy (HTML); `flag(player)`:
    the mark beside a flagged player's name (the templates' `flag` macro)."""
    if a.get("skipped"):
        return f'<section class="analysis-summary"><h2>Analysis</h2><p class="muted">Not analysed: {_esc(a["skipped"])}.</p></section>'
    first = a["first_seat"] or 0
    two = teams == "pairs" or players == 2  # two sides: the graph's side, side 0, for the sentence too
    par, res = (a["par"][0], a["result"][0]) if two else (a["par"][first], a["result"][first])
    names = {s["seat"]: s.get("name") or s.get("player") for s in seats}
    marks = {s["seat"]: flag(s["player"]) if flag is not None and s.get("player") else "" for s in seats}
    cells = "".join(
        f"<tr><td>seat {s}: {_esc(names.get(s, ''))}{marks.get(s, '')}</td>"
        f'<td class="num">{"–" if acc is None else f"{acc:.1f}%"}</td>'
        f'<td class="num">{"–" if dd is None else f"{dd:.1f}%"}</td></tr>'
        for s, (acc, dd) in enumerate(zip(a["accuracy"], a["accuracy_dd"], strict=False))
    )
    samples = a["samples"]
    if samples and a.get("read_model"):
        unif = a.get("accuracy_uniform") or []
        alike = ", ".join("–" if u is None else f"{u:.1f}%" for u in unif)
        samples_words = (f"{samples} sampled deals per decision, weighted by how likely the other seats' plays "
                         f"were in each (what a strong reader could know; play model {a['read_model']}). With "
                         f"every deal weighted alike the accuracies would be {alike}")  # fmt: skip
    else:
        samples_words = f"{samples} sampled deals per decision"
    how = (samples_words if samples else
           "Perfect information only so far: the grade on what each seat could know comes when the hand "
           "is sampled (the server does it in the background), and until then accuracy and classes follow "
           "perfect information")  # fmt: skip
    return (
        '<section class="analysis-summary"><h2>Analysis</h2>'
        f"<p>Par <b>{par:+d}</b>, result <b>{res:+d}</b> (points for {_whose(teams) if two else f'seat {first}, who made the first move'}; "
        f"par is the value of the deal under best play by everyone). Graph and move values: {convention(players, teams)}.</p>"
        f"{value_graph(a, players, teams)}"
        '<table class="grid narrow acc"><thead><tr><th>seat</th><th>accuracy (what each could know)</th>'
        f"<th>accuracy (perfect information)</th></tr></thead><tbody>{cells}</tbody></table>"
        f'<p class="muted">{how}. Accuracy = 100 × (1 − points lost ÷ points at stake), over the seat\'s '
        "decisions in the hand; a decision puts at stake the gap between its best and its worst move. "
        "Classes by the points lost on what the seat could know (the low end of its 95% interval): "
        "?! inaccuracy from 5, ? mistake from 10, ?? blunder from 20 (milo: 0.1, 0.25, 0.5).</p></section>"
    )  # fmt: skip
