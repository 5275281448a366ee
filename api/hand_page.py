"""The replay page of a hand: every ply's title, notes and legal moves, its board and its JSON twin.

`build_plies(hand, viewer)` turns the positions of `replay.hand_walk.walk`
(the game: line, ends, hands, voids, puerta, ahorcado, tranque) into the
page's `Ply`s, each with its title and the notes a reviewer wants
(alternatives, forced, what a pass reveals, findings, the result).
`hand_sections` draws the table once for the whole hand (`api.board`) and
every ply's notes as an HTML section; `hand_json` is the page's JSON twin.
`build_plies(hand, viewer=s)` is the hand as seat s knew it.

Every string that came from a log is escaped here (`esc`) before it enters
markup; the templates receive the HTML as `Markup`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import orjson

from api.analysis_view import own_panel, ply_panel
from api.board import LineLayer, places, table_svg
from api.replay_model import FindingRow, HandData, MoveRow, Note, Ply, esc, label
from api.review import marks, review_json, scoring_of, why_panel
from replay.hand_walk import Position, shows_hands, walk
from replay.tiles import tile_name

__all__ = ["Drawing", "board_text", "build_plies", "hand_drawing", "hand_json", "hand_sections", "ply_section"]


def _no_numbers(nums: tuple[int, ...]) -> str:
    return " and ".join(f"no {n}" for n in nums)


def build_plies(hand: HandData, viewer: int | None = None) -> list[Ply]:
    """Every position of the hand, from the deal (ply 0) to the last move,
    with its title and notes.

    With `viewer`, only what that seat knew at each ply: its own tiles, the
    line, how many tiles the others hold and what their passes showed; never
    their tiles, their draws, their legal moves nor what a finding says. A
    hand still on shows no seat's tiles, whoever views it.
    """
    show = shows_hands(hand)
    by_seq: dict[int, list[FindingRow]] = {}
    for f in hand.findings:
        if f.seq is not None:
            by_seq.setdefault(f.seq, []).append(f)
    told = show and viewer is None  # a finding's message may name any seat's tile
    positions = walk(hand, viewer)
    lead = f"seat {hand.leader} leads" if hand.leader is not None else "the deal"
    first = _ply(positions[0], f"The deal: {lead}", hand, viewer)
    first.notes.extend(_finding_notes(by_seq.get(hand.deal_seq, []) if hand.deal_seq is not None else [], told))
    plies = [first]
    for pos in positions[1:]:
        mv = pos.move
        assert isinstance(mv, MoveRow)
        title, notes = _words(pos, mv, hand, viewer, show)
        p = _ply(pos, title, hand, viewer)
        if pos.seen:
            p.alternatives = _alternatives(mv, pos.before)
            if mv.kind in ("play", "pass", "draw") and mv.error is None:
                if mv.forced:
                    p.notes.append(Note("forced", "forced: the only legal move"))
                elif mv.legal_moves:
                    p.notes.append(Note("legal", f"{len(mv.legal_moves)} legal moves"))
        p.notes.extend(notes)
        p.notes.extend(_finding_notes(by_seq.get(mv.seq, []), told))
        plies.append(p)
    if hand.end_seq is not None and plies:
        plies[-1].notes.extend(_finding_notes(by_seq.get(hand.end_seq, []), told))
    if hand.finished and hand.result != "cancelled" and plies:
        plies[-1].notes.append(Note("result", _result_text(hand)))
    elif not hand.finished:
        plies[-1].notes.append(Note("withheld", "the hand never finished (or is still on): the hands stay hidden"))
    if viewer is not None and show and plies:
        plies[0].notes.insert(0, Note("view", f"seen from seat {viewer}: its own tiles, the line, "
                                              "how many tiles the others hold and what their passes showed"))
    return plies


def _ply(pos: Position, title: str, hand: HandData, viewer: int | None) -> Ply:
    mv = pos.move
    assert mv is None or isinstance(mv, MoveRow)
    return Ply(
        n=pos.n,
        move=mv,
        title=title,
        line=pos.line,
        left=pos.left,
        right=pos.right,
        hands=pos.hands,
        pips=pos.pips,
        stock=pos.stock,
        voids=pos.voids,
        hanged=pos.hanged,
        new_tile=pos.new_tile,
        aside=hand.aside,
        counts=pos.counts,
        tile_known=pos.tile_known,
        forced=pos.forced,
        viewer=viewer,
    )


def _words(pos: Position, mv: MoveRow, hand: HandData, viewer: int | None, show: bool) -> tuple[str, list[Note]]:
    """The title of a move's ply and the notes on what it did."""
    notes: list[Note] = []
    s = mv.seat
    if mv.kind == "play" and mv.tile is not None:
        name = label(mv.tile)
        left, right = pos.before
        where = "opens with" if left < 0 else "plays"
        on = "" if left < 0 else f" on the {mv.end or 'left'} end ({left if (mv.end or 'left') == 'left' else right})"
        title = f"Seat {s} {where} {name}{on}"
        for num in pos.puerta:
            notes.append(Note("puerta", f"puerta: the last {num} is on the line"))
        for d, holder in pos.ahorcado:
            if viewer is None:
                who = f" (held by seat {holder})" if holder is not None else (" (not in any hand)" if show else "")
            else:  # where it is is known only to the seat that holds it
                who = " (in your hand)" if holder is not None else ""
            notes.append(Note("ahorcado", f"ahorcado: {label(d)} can no longer be played{who}"))
        if pos.last_play and hand.result == "block":
            notes.append(Note("tranque", f"tranque: {name} blocks the line (ends {pos.left} and {pos.right})"))
        if pos.last_play and hand.result == "domino":
            words = [w for w in hand.notes if w in ("capicua", "chuchazo", "dominao")]
            for w in words:
                notes.append(Note(w, f"{'capicúa' if w == 'capicua' else w}: {name} goes out"))
            if not words:
                notes.append(Note("out", f"domino: seat {s} goes out with {name}"))
    elif mv.kind == "pass":
        title = f"Seat {s} passes (the line is blocked)" if pos.closing else f"Seat {s} passes"
        if pos.lacks:
            notes.append(Note("pass", f"seat {s} holds {_no_numbers(pos.lacks)}"))
    elif mv.kind == "draw":
        got = f" {label(mv.tile)}" if pos.tile_known and mv.tile is not None else " a tile"
        title = f"Seat {s} draws{got} ({mv.stock} left)"
        if pos.lacks and not pos.again:  # one note for a run of draws
            notes.append(Note("draw", f"seat {s} held {_no_numbers(pos.lacks)}"))
    elif mv.kind == "yield":
        title = f"Seat {s} hands the lead to seat {(s + 2) % hand.players}"
    else:
        title = f"Seat {s}: {mv.kind}"
    if mv.error is not None:
        title += f" (not legal: {mv.error})"
    return title, notes


class Drawing(NamedTuple):
    """A hand drawn for its replay page: the table, every ply's section, the
    plies, and each graded ply's mark and best move (`api.review.marks`)."""

    board: str
    sections: list[str]
    plies: list[Ply]
    graded: dict[int, dict[str, Any]]


def hand_drawing(hand: HandData, viewer: int | None = None, flagged: frozenset[str] = frozenset()) -> Drawing:
    """The replay page's drawing: the table (`api.board.table_svg`, with each
    decision's best move) and every ply's notes as its HTML section, ply 0
    first; with `viewer`, as that seat saw the hand (`build_plies`). The
    whole view carries the hand's analysis (api.analysis_view) and the
    principal lines with their reasons (api.review), a ply's panels in its
    section; a seat's view, once the hand is over, its own decisions graded
    on what it could know, and nothing else of the analysis (the other
    values speak of tiles the seat did not see). `flagged`: the players
    the cheat signals flag, marked beside their names on the table."""
    plies = build_plies(hand, viewer)
    sections = [ply_section(p) for p in plies]
    graded: dict[int, dict[str, Any]] = {}
    if hand.analysis is not None and hand.finished:
        graded = marks(hand.analysis, scoring_of(hand), viewer)
        by_ply = {a["ply"]: a for a in hand.analysis["plies"]}
        if viewer is None:
            # the lines cost a search a ply: the page's script fetches them from the JSON twin
            panels = {k: ply_panel(a, hand.players, hand.teams) + why_panel(graded.get(k), None, pending=True)
                      for k, a in by_ply.items()}
        else:
            panels = {k: own_panel(by_ply[k]) + why_panel(g, None) for k, g in graded.items()}
        sections = [
            s.replace("</section>", panels[p.n] + "</section>") if p.n in panels else s
            for p, s in zip(plies, sections, strict=True)
        ]
    best = {k: (g["best"], g["played"]) for k, g in graded.items() if g["best"] is not None}
    return Drawing(table_svg(plies, hand.seats, hand.players, hand.teams, best, flagged), sections, plies, graded)


def hand_sections(hand: HandData, viewer: int | None = None) -> tuple[str, list[str]]:
    """The table and every ply's section (`hand_drawing`)."""
    d = hand_drawing(hand, viewer)
    return d.board, d.sections


def hand_json(hand: HandData, info: dict[str, Any], seats: list[dict[str, Any]],
              viewer: int | None = None) -> bytes:
    """The replay page's JSON twin: the hand's header, its seats, where they
    sit at the table, and every ply (as `viewer` saw it, with one)."""
    plies = build_plies(hand, viewer)
    view = "all" if viewer is None else f"seat{viewer}"
    if viewer is not None and info.get("analysis") is not None:
        info = {**info, "analysis": None}  # its values speak of tiles the seat did not see
    review = review_json(hand, viewer)
    if viewer is None and review and shows_hands(hand):
        _lay_lines(plies, hand.players, review)
    out = [p.to_json() for p in plies]
    for r in review:  # each graded ply carries its review (a seat's view: its own decisions)
        if 0 <= r["ply"] < len(out):
            out[r["ply"]]["review"] = r
    return orjson.dumps({"info": info, "seats": seats, "view": view,
                         "places": {str(k): v for k, v in places(hand.players, viewer or 0).items()},
                         "plies": out, "review": review})


def _lay_lines(plies: list[Ply], players: int, review: list[dict[str, Any]]) -> None:
    """Each principal line of `review` as the page lays it on the board
    (`ghosts_played`, `ghosts_best`: `api.board.line_ghosts`), beside its
    moves. The whole view of a hand that is over only: a line speaks of
    every seat's tiles."""
    layer = LineLayer(plies, players)  # the hand's boards read once for all its lines
    for r in review:
        k = r["ply"]
        for which in ("played", "best"):
            moves, steps = r.get(f"line_{which}"), r.get(f"steps_{which}")
            if moves and steps and len(moves) == len(steps) and 0 < k < len(plies):
                r[f"ghosts_{which}"] = layer.ghosts(k, moves, [s[0] for s in steps])
            else:
                r[f"ghosts_{which}"] = None


def _finding_notes(found: list[FindingRow], show: bool) -> list[Note]:
    out = []
    for f in found:
        # a finding's message may name a hidden tile until the hand is over
        text = f"{f.code}: {f.message}" if show else f"{f.code} (details hidden: they may name a tile this page does not show)"
        out.append(Note("finding", text, f.seq, f.severity))
    return out


def _result_text(hand: HandData) -> str:
    pts = " / ".join(str(p) for p in hand.points)
    who = f", winner seat {hand.winner}" if hand.winner is not None else ", no winner"
    return f"{hand.result}{who}; points {pts}"


_LABEL_OF: dict[str, str] = {tile_name(t): label(t) for t in range(28)}


@lru_cache(maxsize=1024)
def _move_parts(m: str) -> tuple[str, str]:
    tile, _, end = m.partition(":")
    return tile, end


def _alternatives(mv: MoveRow, before: tuple[int, int]) -> list[tuple[str, bool]]:
    out = []
    played_end = mv.end or "left"
    played = tile_name(mv.tile) if mv.tile is not None and mv.kind == "play" else None
    for m in mv.legal_moves:
        tile, end = _move_parts(m)
        if not end:
            word = {"PASS": "pass", "DRAW": "draw", "YIELD": "hand the lead over"}.get(m, m.lower())
            out.append((word, mv.kind == word or (m == "YIELD" and mv.kind == "yield")))
            continue
        same = tile == played
        shown = _LABEL_OF.get(tile, tile)
        if before[0] < 0:
            out.append((shown, same))
        else:
            # on equal ends left and right are one move
            hit = same and (end == played_end or before[0] == before[1])
            out.append((f"{shown} {end}", hit))
    if mv.kind != "yield" and not any(hit for _, hit in out):
        # the move made was none of the legal ones: show it beside them
        what = mv.kind if mv.tile is None else f"{label(mv.tile)} {mv.end or ''}".strip()
        out.append((f"{what} (not legal)", True))
    return out


def ply_section(p: Ply) -> str:
    """The `<section>` of one ply's title and notes (hidden; the page unhides
    the current one, and `ply_style` shows its board).

    Every text of the ply is escaped here.
    """
    mv = p.move
    out = [
        f'<section class="ply" id="ply-{p.n}" data-ply="{p.n}" hidden>'
        f'<h2 class="ply-title"><span class="plyn">{p.n}</span> {esc(p.title)}'
    ]
    if mv is not None:
        out.append(f' <small title="its number among the log\'s events">log event {mv.seq}</small>')
    out.append("</h2>")
    if p.alternatives:
        forced = ' <span class="tag forced">forced</span>' if mv is not None and mv.forced else ""
        chips = " ".join(
            f'<span class="alt{" played" if played else ""}">{esc(move)}</span>'
            for move, played in p.alternatives
        )
        out.append(f'<h3>Legal moves{forced}</h3><p class="alts">{chips}</p>')
    notes = [n for n in p.notes if n.kind not in ("forced", "legal")]
    if notes:
        out.append('<ul class="anns">')
        for n in notes:
            sev = f" s-{esc(n.severity)}" if n.severity else ""
            out.append(f'<li class="ann k-{esc(n.kind)}{sev}">{esc(n.text)}</li>')
        out.append("</ul>")
    if any(p.voids):
        out.append(_voids_table(tuple(tuple(v) for v in p.voids)))
    if p.hanged:
        out.append(f'<p class="muted"><a class="term" href="/glossary#ahorcado">ahorcado</a> (hanged doubles): {", ".join(label(t) for t in p.hanged)}</p>')
    # the board's text is numbers and fixed words only (board_text): nothing to escape
    out.append(f'<details class="board-text"><summary>The board as text</summary><p>{board_text(p)}</p></details>')
    out.append("</section>")
    return "".join(out)


def board_text(p: Ply) -> str:
    """What the board shows at a ply, in words (the drawing's text alternative):
    the line left to right with its open ends, each seat's tiles and pips
    (none while the hand is on: they are hidden), the boneyard.

    >>> from replay.tiles import parse_tile as t
    >>> from api.replay_model import Placed
    >>> ply = Ply(3, None, "", [Placed(t("66"), 6, 6), Placed(t("63"), 6, 3)], 6, 3,
    ...           [(t("50"), t("41")), ()], [10, 0], 4)
    >>> board_text(ply)
    'Line, left to right: [6|6] [6|3]; open ends 6 and 3. Seat 0: 2 tiles ([5|0] [4|1]), 10 pips. Seat 1: no tile, 0 pips. Boneyard: 4 tiles.'
    >>> board_text(Ply(0, None, "", [], -1, -1, None, None, 14))
    'The line is empty. The hands stay hidden until the hand is over. Boneyard: 14 tiles.'
    """
    parts = [f"Line, left to right: {' '.join([_PLACED_TEXT[t.a][t.b] for t in p.line])}; open ends {p.left} and {p.right}."
             if p.line else "The line is empty."]
    if p.hands is not None:
        for seat, tiles in enumerate(p.hands):
            if tiles is None:  # a seat's view: the others' tiles are not its to see
                k = p.counts[seat] if seat < len(p.counts) else 0
                parts.append(f"Seat {seat}: {k} tile{'s' if k != 1 else ''}, not shown.")
                continue
            held = _held_text(tuple(tiles))
            pip = p.pips[seat] if p.pips is not None and seat < len(p.pips) else None
            pips = f", {pip} pips" if pip is not None else ""
            parts.append(f"Seat {seat}: {held if tiles else 'no tile'}{pips}.")
    else:
        parts.append("The hands stay hidden until the hand is over.")
    if p.stock:
        parts.append(f"Boneyard: {p.stock} tile{'s' if p.stock != 1 else ''}.")
    return " ".join(parts)


#: A tile on the line as the board's text names it, `[a|b]`, by its halves.
_PLACED_TEXT = tuple(tuple(f"[{a}|{b}]" for b in range(7)) for a in range(7))


@lru_cache(maxsize=4096)
def _held_text(tiles: tuple[int, ...]) -> str:
    # a seat's hand stays as it is over most plies
    return f"{len(tiles)} tile{'s' if len(tiles) != 1 else ''} ({' '.join(label(t) for t in tiles)})"


@lru_cache(maxsize=4096)
def _voids_table(voids: tuple[tuple[int, ...], ...]) -> str:
    head = "".join(f"<th>{n}</th>" for n in range(7))
    rows = "".join(
        f"<tr><th>seat {s}</th>" + "".join(f"<td>{'✕' if n in v else ''}</td>" for n in range(7)) + "</tr>"
        for s, v in enumerate(voids)
    )
    return (f'<h3>Known voids</h3><table class="voids"><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>")
