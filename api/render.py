"""A hand replay as data and as inline SVG: one board for every ply, with annotations.

`build_plies(hand)` walks a stored hand (dealt tiles + move rows) and
returns one `Ply` per position: ply 0 is the deal, ply k the position after
the k-th move. Each carries the line of tiles as laid, both ends, every
hand with its pips (only once the hand is over), the stock count and the
notes a reviewer wants (alternatives, forced, what a pass reveals, known
voids, puerta, ahorcado, tranque, capicua/chuchazo/dominao, findings).
`api.board.table_svg(plies, ...)` draws the whole hand once, at a table:
every tile, badge and label is one element, shown over the plies it holds
by a one-line style (`ply_style`), so stepping swaps a rule, not a drawing.
It holds the tile symbols it `<use>`s (`tile_defs`). `build_plies(hand,
viewer=s)` is the hand as seat s knew it.

Every string that came from a log is escaped here (`esc`) before it enters
SVG markup; the templates receive the SVG as `Markup`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import lru_cache
from html import escape
from typing import Any

import orjson

from api.analysis_view import ply_panel
from replay.tiles import BIT, DOUBLE_OF, HIGH, LOW, PIPS, SUIT_MASK, tile_name

FINISHED = ("domino", "block", "cancelled")


def label(t: int) -> str:
    """A tile as the pages name it, high half first.

    >>> label(26), label(0)
    ('[6|5]', '[0|0]')
    """
    return _LABEL[t]


_LABEL: tuple[str, ...] = tuple(f"[{HIGH[t]}|{LOW[t]}]" for t in range(28))
HAND_SIZE = 7  # tiles dealt to each seat (deal-v1, every profile)


def esc(text: object) -> str:
    """Escape for SVG/HTML text and attribute values."""
    return escape(str(text), quote=True)


# --- input: what the store holds for one hand ---------------------------------


@dataclass(frozen=True, slots=True)
class MoveRow:
    ply: int
    seq: int
    seat: int
    kind: str  # play / pass / draw / yield
    tile: int | None
    end: str | None
    left: int
    right: int
    stock: int
    legal_moves: tuple[str, ...] = ()
    forced: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SeatLabel:
    seat: int
    player: str
    name: str | None = None
    bot: bool = False

    @property
    def label(self) -> str:
        return self.name or self.player


@dataclass(frozen=True, slots=True)
class FindingRow:
    code: str
    severity: str
    hand: int | None
    seq: int | None
    message: str


@dataclass(frozen=True, slots=True)
class HandData:
    match: str
    hand: int
    players: int
    teams: str  # "pairs" / "individual"
    result: str | None  # None: the hand never finished
    winner: int | None
    points: tuple[int, ...]
    score: tuple[int, ...]
    notes: tuple[str, ...]
    leader: int | None
    blocker: int | None
    dealt: tuple[tuple[int, ...], ...]  # per seat; () when withheld
    stock0: int  # tiles undealt after the deal
    seats: tuple[SeatLabel, ...]
    moves: tuple[MoveRow, ...]
    findings: tuple[FindingRow, ...] = ()
    deal_seq: int | None = None
    end_seq: int | None = None
    aside: int = 0  # tiles out of play from the start (the doubles under doubles_aside)
    analysis: dict[str, Any] | None = None  # api.analysis_view.hand_analysis, finished hands only

    @property
    def finished(self) -> bool:
        return self.result in FINISHED

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # To the render pool as plain tuples: a slotted dataclass pickles
        # field by field through __getstate__, five times slower.
        fields = tuple(getattr(self, f) for f in _HAND_FIELDS)
        flat = tuple(
            tuple(tuple(getattr(x, f) for f in _ROW_FIELDS[type(x)]) for x in v) if f in _ROWS else v
            for f, v in zip(_HAND_FIELDS, fields, strict=True)
        )
        return _hand_data, flat


def _hand_data(*flat: Any) -> HandData:
    """HandData from HandData.__reduce__'s tuples."""
    values = [
        tuple(_ROWS[f](*x) for x in v) if f in _ROWS else v
        for f, v in zip(_HAND_FIELDS, flat, strict=True)
    ]
    return HandData(*values)


_ROWS: dict[str, type] = {"seats": SeatLabel, "moves": MoveRow, "findings": FindingRow}
_ROW_FIELDS: dict[type, tuple[str, ...]] = {t: tuple(f.name for f in fields(t)) for t in _ROWS.values()}
_HAND_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(HandData))


# --- output: one position per ply ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placed:
    """A tile on the line, oriented: `a` faces left, `b` faces right."""

    tile: int
    a: int
    b: int


@dataclass(slots=True)
class Note:
    kind: str  # legal, forced, pass, draw, yield, puerta, ahorcado, tranque, out, finding, ...
    text: str
    seq: int | None = None
    severity: str | None = None


@dataclass(slots=True)
class Ply:
    n: int
    move: MoveRow | None
    title: str
    line: list[Placed]
    left: int
    right: int
    hands: list[tuple[int, ...]] | None  # None: withheld (hand not over)
    pips: list[int] | None
    stock: int
    notes: list[Note] = field(default_factory=list)
    voids: list[tuple[int, ...]] = field(default_factory=list)  # known numbers each seat lacks
    alternatives: list[tuple[str, bool]] = field(default_factory=list)  # (move, was it played)
    hanged: list[int] = field(default_factory=list)  # doubles that can no longer be played
    new_tile: int | None = None  # index in `line` of the tile just laid
    aside: int = 0
    counts: list[int] = field(default_factory=list)  # tiles each seat holds (public)
    tile_known: bool = False  # the move's tile may be shown (a play, or a draw its viewer saw)
    forced: bool | None = None  # the move was forced, where the viewer may know it
    viewer: int | None = None  # the seat whose knowledge this is (None: everything the hand allows)

    def to_json(self) -> dict[str, Any]:
        mv = self.move
        return {
            "ply": self.n,
            "seq": mv.seq if mv else None,
            "seat": mv.seat if mv else None,
            "kind": mv.kind if mv else "deal",
            "tile": _tile_or_none(mv.tile) if mv and self.tile_known else None,
            "end": mv.end if mv else None,
            "title": self.title,
            "line": [f"{p.a}{p.b}" for p in self.line],  # as laid, read left to right
            "ends": [self.left, self.right] if self.left >= 0 else None,
            "hands": [None if h is None else [tile_name(t) for t in h] for h in self.hands]
            if self.hands is not None else None,
            "counts": self.counts,
            "pips": self.pips,
            "stock": self.stock,
            "alternatives": [{"move": m, "played": p} for m, p in self.alternatives],
            "forced": self.forced,
            "voids": self.voids,
            "hanged": [tile_name(t) for t in self.hanged],
            "notes": [
                {"kind": n.kind, "text": n.text, "seq": n.seq, "severity": n.severity}
                for n in self.notes
            ],
        }


def _tile_or_none(t: int | None) -> str | None:
    return None if t is None else tile_name(t)


def _no_numbers(nums: list[int]) -> str:
    nums = sorted(set(nums))
    return " and ".join(f"no {n}" for n in nums)


def build_plies(hand: HandData, viewer: int | None = None) -> list[Ply]:
    """Every position of the hand, from the deal (ply 0) to the last move.

    With `viewer`, only what that seat knew at each ply: its own tiles, the
    line, how many tiles the others hold and what their passes showed; never
    their tiles, their draws, their legal moves nor what a finding says. A
    hand still on shows no seat's tiles, whoever views it.
    """
    n = hand.players
    show = hand.finished and bool(hand.dealt)

    def knows(seat: int) -> bool:
        return show and (viewer is None or seat == viewer)

    held = [set(h) for h in hand.dealt] if show else [set() for _ in range(n)]
    counts = [len(h) for h in hand.dealt] if hand.dealt else [HAND_SIZE] * n
    counts += [HAND_SIZE] * (n - len(counts))
    line: list[Placed] = []
    on_line = 0  # mask of tiles on the line
    left = right = -1
    voids: list[set[int]] = [set() for _ in range(n)]
    hanged: list[int] = []
    by_seq: dict[int, list[FindingRow]] = {}
    for f in hand.findings:
        if f.seq is not None:
            by_seq.setdefault(f.seq, []).append(f)
    last_play = max((m.ply for m in hand.moves if m.kind == "play"), default=0)
    stock = hand.stock0
    # each seat's sorted hand, pips and voids as of the last snapshot: a move
    # changes one seat (`changed`), so the others are not sorted again
    hand_view: list[tuple[int, ...]] = [()] * len(held)
    pip_view = [0] * len(held)
    void_view: list[tuple[int, ...]] = [()] * n
    changed = set(range(max(len(held), n)))

    def snapshot(k: int, mv: MoveRow | None, title: str, new: int | None) -> Ply:
        for c in changed:
            if c < len(held):
                hand_view[c] = tuple(sorted(held[c], key=_HAND_RANK.__getitem__))
                pip_view[c] = sum(map(PIPS.__getitem__, held[c]))
            if c < n:
                void_view[c] = tuple(sorted(voids[c]))
        changed.clear()
        return Ply(
            n=k,
            move=mv,
            title=title,
            line=list(line),
            left=left,
            right=right,
            hands=[h if knows(s) else None for s, h in enumerate(hand_view)] if show else None,
            pips=[p if knows(s) else None for s, p in enumerate(pip_view)] if show else None,
            stock=stock,
            voids=list(void_view),
            hanged=list(hanged),
            new_tile=new,
            aside=hand.aside,
            counts=list(counts),
            tile_known=mv is not None and mv.tile is not None and (mv.kind == "play" or knows(mv.seat)),
            forced=mv.forced if mv is not None and knows(mv.seat) else None,
            viewer=viewer,
        )

    lead = f"seat {hand.leader} leads" if hand.leader is not None else "the deal"
    first = snapshot(0, None, f"The deal: {lead}", None)
    told = show and viewer is None  # a finding's message may name any seat's tile
    first.notes.extend(_finding_notes(by_seq.get(hand.deal_seq, []) if hand.deal_seq is not None else [], told))
    plies = [first]
    prev: MoveRow | None = None
    for mv in hand.moves:
        new: int | None = None
        notes: list[Note] = []
        before = (left, right)
        s = mv.seat
        seat_ok = 0 <= s < n
        if mv.kind == "play" and mv.tile is not None:
            t = mv.tile
            name = label(t)
            fits = left < 0 or (mv.end == "left" and _carries(t, left)) or (
                mv.end == "right" and _carries(t, right)
            ) or (mv.end is None and left == right and _carries(t, left))
            physically = fits and (not show or (seat_ok and t in held[s]))
            if physically and not (on_line & BIT[t]):
                if left < 0:
                    a, b = _opening(t, mv.left, mv.right)
                    line.append(Placed(t, a, b))
                    left, right = a, b
                    new = 0
                else:
                    side = mv.end or "left"
                    if side == "left":
                        outer = _other(t, left)
                        line.insert(0, Placed(t, outer, left))
                        left = outer
                        new = 0
                    else:
                        outer = _other(t, right)
                        line.append(Placed(t, right, outer))
                        right = outer
                        new = len(line) - 1
                on_line |= BIT[t]
                if seat_ok:
                    counts[s] -= 1
                if show and seat_ok:
                    held[s].discard(t)
                    changed.add(s)
            where = "opens with" if before[0] < 0 else "plays"
            on = "" if before[0] < 0 else f" on the {mv.end or 'left'} end ({before[0] if (mv.end or 'left') == 'left' else before[1]})"
            title = f"Seat {s} {where} {name}{on}"
            # puerta: this tile puts the last of a number on the line
            for num in sorted({LOW[t], HIGH[t]}):
                if on_line & SUIT_MASK[num] == SUIT_MASK[num]:
                    notes.append(Note("puerta", f"puerta: the last {num} is on the line"))
            # ahorcado can only newly hold for this tile's numbers and the end it covered
            for num in sorted({LOW[t], HIGH[t], *before} - {-1}):
                d = DOUBLE_OF[num]
                if d in hanged or on_line & BIT[d]:
                    continue
                if (on_line & SUIT_MASK[num]) == SUIT_MASK[num] & ~BIT[d] and num not in (left, right):
                    hanged.append(d)
                    holder = next((k for k in range(n) if d in held[k]), None) if show else None
                    if viewer is None:
                        who = f" (held by seat {holder})" if holder is not None else (
                            " (not in any hand)" if show else "")
                    else:  # where it is is known only to the seat that holds it
                        who = " (in your hand)" if holder == viewer and knows(viewer) else ""
                    notes.append(Note("ahorcado", f"ahorcado: {label(d)} can no longer be played{who}"))
            if mv.ply == last_play and hand.result == "block":
                notes.append(Note("tranque", f"tranque: {name} blocks the line (ends {left} and {right})"))
            if mv.ply == last_play and hand.result == "domino":
                words = [w for w in hand.notes if w in ("capicua", "chuchazo", "dominao")]
                for w in words:
                    notes.append(Note(w, f"{w}: {name} goes out"))
                if not words:
                    notes.append(Note("out", f"domino: seat {s} goes out with {name}"))
        elif mv.kind == "pass":
            closing = hand.result == "block" and mv.ply > last_play
            if closing:
                title = f"Seat {s} passes (the line is blocked)"
            elif left >= 0 and seat_ok and mv.error is None:
                nums = sorted({left, right})
                voids[s].update(nums)
                changed.add(s)
                title = f"Seat {s} passes"
                notes.append(Note("pass", f"seat {s} holds {_no_numbers(nums)}"))
            else:
                title = f"Seat {s} passes"
        elif mv.kind == "draw":
            if seat_ok:
                counts[s] += 1
            if show and seat_ok and mv.tile is not None:
                held[s].add(mv.tile)
                changed.add(s)
            got = f" {label(mv.tile)}" if knows(s) and mv.tile is not None else " a tile"
            title = f"Seat {s} draws{got} ({mv.stock} left)"
            closing = hand.result == "block" and mv.ply > last_play
            if left >= 0 and seat_ok and not closing and mv.error is None:
                nums = sorted({left, right})
                # what was drawn before may carry any other number: only these stay known
                again = prev is not None and prev.kind == "draw" and prev.seat == s
                voids[s] = set(nums)
                changed.add(s)
                if not again:  # one note for a run of draws
                    notes.append(Note("draw", f"seat {s} held {_no_numbers(nums)}"))
        elif mv.kind == "yield":
            title = f"Seat {s} hands the lead to seat {(s + 2) % n}"
        else:
            title = f"Seat {s}: {mv.kind}"
        stock = mv.stock if mv.stock >= 0 else stock
        if mv.error is not None:
            title += f" (not legal: {mv.error})"
        p = snapshot(mv.ply, mv, title, new)
        if knows(s):
            p.alternatives = _alternatives(mv, before)
            if mv.kind in ("play", "pass", "draw") and mv.error is None:
                if mv.forced:
                    p.notes.append(Note("forced", "forced: the only legal move"))
                elif mv.legal_moves:
                    p.notes.append(Note("legal", f"{len(mv.legal_moves)} legal moves"))
        p.notes.extend(notes)
        p.notes.extend(_finding_notes(by_seq.get(mv.seq, []), told))
        plies.append(p)
        prev = mv
    if hand.end_seq is not None and plies:
        plies[-1].notes.extend(_finding_notes(by_seq.get(hand.end_seq, []), told))
    if hand.finished and hand.result != "cancelled" and plies:
        plies[-1].notes.append(Note("result", _result_text(hand)))
    elif not hand.finished:
        plies[-1].notes.append(Note("withheld", "the hand is not over: the hands stay hidden"))
    if viewer is not None and show and plies:
        plies[0].notes.insert(0, Note("view", f"seen from seat {viewer}: its own tiles, the line, "
                                              "how many tiles the others hold and what their passes showed"))
    return plies


def hand_sections(hand: HandData, viewer: int | None = None) -> tuple[str, list[str]]:
    """The replay page's drawing: the table (`api.board.table_svg`) and every
    ply's notes as its HTML section, ply 0 first; with `viewer`, as that seat
    saw the hand (`build_plies`). The whole view carries the hand's analysis
    (api.analysis_view), a ply's panel in its section; a seat's view does not
    (its values speak of tiles the seat did not see)."""
    from api.board import table_svg  # it draws with this module's pieces

    plies = build_plies(hand, viewer)
    sections = [ply_section(p) for p in plies]
    if hand.analysis is not None and hand.finished and viewer is None:
        by_ply = {a["ply"]: a for a in hand.analysis["plies"]}
        sections = [
            s.replace("</section>", ply_panel(by_ply[p.n]) + "</section>") if p.n in by_ply else s
            for p, s in zip(plies, sections, strict=True)
        ]
    return table_svg(plies, hand.seats, hand.players, hand.teams), sections


def hand_json(hand: HandData, info: dict[str, Any], seats: list[dict[str, Any]],
              viewer: int | None = None) -> bytes:
    """The replay page's JSON twin: the hand's header, its seats, where they
    sit at the table, and every ply (as `viewer` saw it, with one)."""
    from api.board import places

    plies = build_plies(hand, viewer)
    view = "all" if viewer is None else f"seat{viewer}"
    if viewer is not None and info.get("analysis") is not None:
        info = {**info, "analysis": None}  # its values speak of tiles the seat did not see
    return orjson.dumps({"info": info, "seats": seats, "view": view,
                         "places": {str(k): v for k, v in places(hand.players, viewer or 0).items()},
                         "plies": [p.to_json() for p in plies]})


def _finding_notes(found: list[FindingRow], show: bool) -> list[Note]:
    out = []
    for f in found:
        # a finding's message may name a hidden tile until the hand is over
        text = f"{f.code}: {f.message}" if show else f"{f.code} (details withheld until the hand is over)"
        out.append(Note("finding", text, f.seq, f.severity))
    return out


def _result_text(hand: HandData) -> str:
    pts = " / ".join(str(p) for p in hand.points)
    who = f", winner seat {hand.winner}" if hand.winner is not None else ", no winner"
    return f"{hand.result}{who}; points {pts}"


def _carries(t: int, num: int) -> bool:
    return LOW[t] == num or HIGH[t] == num


def _other(t: int, num: int) -> int:
    return HIGH[t] if LOW[t] == num else LOW[t]


def _opening(t: int, left: int, right: int) -> tuple[int, int]:
    if {left, right} == {LOW[t], HIGH[t]} and left >= 0:
        return left, right
    return HIGH[t], LOW[t]


def _hand_order(t: int) -> tuple[int, int]:
    return (-HIGH[t], -LOW[t])


_LABEL_OF: dict[str, str] = {tile_name(t): label(t) for t in range(28)}

#: Each tile's place in a hand as shown (highest first), for sorting by lookup.
_HAND_RANK: tuple[int, ...] = tuple(sorted(range(28), key=_hand_order).index(t) for t in range(28))


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


# --- SVG ----------------------------------------------------------------------------

U = 22  # half a tile, in px
_PIP_AT = {
    0: (),
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.22), (0.75, 0.22), (0.25, 0.5), (0.75, 0.5), (0.25, 0.78), (0.75, 0.78)),
}


def _face(n: int) -> str:
    dots = "".join(f'<circle cx="{x * 20:g}" cy="{y * 20:g}" r="2.2" fill="#1d1d1b"/>' for x, y in _PIP_AT[n])
    return f'<symbol id="f{n}" viewBox="0 0 20 20">{dots}</symbol>'


_BODY = (
    '<symbol id="bh" viewBox="0 0 40 20"><rect x=".5" y=".5" width="39" height="19" rx="3" fill="#fffdf4" '
    'stroke="#3a3a36"/><line x1="20" y1="3" x2="20" y2="17" stroke="#8a877c"/></symbol>'
    '<symbol id="bv" viewBox="0 0 20 40"><rect x=".5" y=".5" width="19" height="39" rx="3" fill="#fffdf4" '
    'stroke="#3a3a36"/><line x1="3" y1="20" x2="17" y2="20" stroke="#8a877c"/></symbol>'
)


def _tile_h(a: int, b: int) -> str:
    return (
        f'<symbol id="h{a}{b}" viewBox="0 0 40 20"><use href="#bh" width="40" height="20"/>'
        f'<use href="#f{a}" width="20" height="20"/><use href="#f{b}" x="20" width="20" height="20"/></symbol>'
    )


def _tile_v(a: int, b: int) -> str:
    return (
        f'<symbol id="v{a}{b}" viewBox="0 0 20 40"><use href="#bv" width="20" height="40"/>'
        f'<use href="#f{a}" width="20" height="20"/><use href="#f{b}" y="20" width="20" height="20"/></symbol>'
    )


_SYMBOLS = {f"{k}{a}{b}": f(a, b) for k, f in (("h", _tile_h), ("v", _tile_v)) for a in range(7) for b in range(7)}
_DEFS_HEAD = "<defs>" + "".join(_face(n) for n in range(7)) + _BODY


def tile_defs(symbols: set[str]) -> str:
    """The `<defs>` of a drawing that uses the tile `symbols` (hAB, vAB): those,
    the pip faces f0..f6 and the tile bodies bh and bv they are made of.

    A board carries only its own tiles: all 98 took 28 KB of a 62 KB page.

    >>> d = tile_defs({"h52", "v33"})
    >>> d.count("<symbol id="), 'id="h52"' in d, 'id="h25"' in d
    (11, True, False)
    """
    return _DEFS_HEAD + "".join(_SYMBOLS[k] for k in sorted(symbols)) + "</defs>"


def _runs(values: list[Any]) -> list[tuple[int, int, Any]]:
    """(first ply, stop ply, value) of each run of equal values.

    >>> _runs(["a", "a", "b", "a"])
    [(0, 2, 'a'), (2, 3, 'b'), (3, 4, 'a')]
    """
    out: list[tuple[int, int, Any]] = []
    for k, v in enumerate(values):
        if out and out[-1][2] == v:
            out[-1] = (out[-1][0], k + 1, v)
        else:
            out.append((k, k + 1, v))
    return out


@lru_cache(maxsize=65536)
def _span(on: int, off: int, last: int) -> str:
    """The classes that show an element from ply `on` up to, not including, `off`
    (see `ply_style`): none for an element shown throughout."""
    cls = []
    if on > 0:
        cls.append(f"on{on}")
    if off <= last:
        cls.append(f"off{off}")
    return " ".join(cls)


def _in(el: str, span: str) -> str:
    """`el` shown over `span` (a group only when it has one)."""
    return f'<g class="{span}">{el}</g>' if span else el


def ply_style(n: int, last: int) -> str:
    """The rule that shows ply `n` of a board drawn by `board_svg`: it hides
    what appears later (`on{k}`, k > n) and what is gone by then (`off{k}`, k <= n).

    >>> ply_style(1, 3)
    '<style id="ply-style">svg.board .on2,svg.board .on3,svg.board .off1{display:none}</style>'
    """
    hide = [f"svg.board .on{k}" for k in range(n + 1, last + 1)]
    hide += [f"svg.board .off{k}" for k in range(1, n + 1)]
    rule = ",".join(hide) + "{display:none}" if hide else ""
    return f'<style id="ply-style">{rule}</style>'


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


# --- trend chart ----------------------------------------------------------------------


def trend_svg(points: list[tuple[str, float, float]], width: int = 640, height: int = 160) -> str:
    """A small chart of (label, points per hand, win rate) over time buckets."""
    if not points:
        return '<p class="muted">no hands yet</p>'
    pad_l, pad_r, pad_t, pad_b = 40, 40, 12, 26
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    ys = [p[1] for p in points]
    lo, hi = min(min(ys), 0.0), max(max(ys), 1.0)
    span = hi - lo or 1.0
    n = len(points)

    def px(i: int) -> float:
        return pad_l + (w * i / (n - 1) if n > 1 else w / 2)

    def py(v: float) -> float:
        return pad_t + h - (v - lo) / span * h

    def pw(v: float) -> float:
        return pad_t + h - v * h

    ppp = " ".join(f"{px(i):.1f},{py(p[1]):.1f}" for i, p in enumerate(points))
    win = " ".join(f"{px(i):.1f},{pw(p[2]):.1f}" for i, p in enumerate(points))
    zero = py(0.0)
    parts = [
        f'<svg class="trend" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        'aria-label="points per hand and win rate over time">',
        f'<line x1="{pad_l}" y1="{zero:.1f}" x2="{width - pad_r}" y2="{zero:.1f}" class="axis"/>',
        f'<polyline points="{ppp}" class="ppp"/>',
        f'<polyline points="{win}" class="win"/>',
        f'<text x="4" y="{pad_t + 8}" class="ax">{hi:.0f}</text>',
        f'<text x="4" y="{pad_t + h}" class="ax">{lo:.0f}</text>',
        f'<text x="{width - pad_r + 4}" y="{pad_t + 8}" class="ax">100%</text>',
        f'<text x="{width - pad_r + 4}" y="{pad_t + h}" class="ax">0%</text>',
        f'<text x="{pad_l}" y="{height - 6}" class="ax">{esc(points[0][0])}</text>',
        f'<text x="{width - pad_r}" y="{height - 6}" class="ax" text-anchor="end">{esc(points[-1][0])}</text>',
    ]
    for i, p in enumerate(points):
        parts.append(
            f'<circle cx="{px(i):.1f}" cy="{py(p[1]):.1f}" r="2.5" class="ppp-dot">'
            f"<title>{esc(p[0])}: {p[1]:.1f} points per hand, {p[2]:.0%} won</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


# --- one ply as an HTML section (built here, not in Jinja: it is the hot path) ---------


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
        out.append(f" <small>seq {mv.seq}</small>")
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
        out.append(f'<p class="muted">hanged doubles: {", ".join(label(t) for t in p.hanged)}</p>')
    out.append(f'<details class="board-text"><summary>The board as text</summary><p>{esc(board_text(p))}</p></details>')
    out.append("</section>")
    return "".join(out)


def board_text(p: Ply) -> str:
    """What the board shows at a ply, in words (the drawing's text alternative):
    the line left to right with its open ends, each seat's tiles and pips
    (none while the hand is on: they are hidden), the boneyard.

    >>> from replay.tiles import parse_tile as t
    >>> ply = Ply(3, None, "", [Placed(t("66"), 6, 6), Placed(t("63"), 6, 3)], 6, 3,
    ...           [(t("50"), t("41")), ()], [10, 0], 4)
    >>> board_text(ply)
    'Line, left to right: 66 63; open ends 6 and 3. Seat 0: 2 tiles (50 41), 10 pips. Seat 1: no tile, 0 pips. Boneyard: 4 tiles.'
    >>> board_text(Ply(0, None, "", [], -1, -1, None, None, 14))
    'The line is empty. The hands stay hidden until the hand is over. Boneyard: 14 tiles.'
    """
    parts = [f"Line, left to right: {' '.join(f'{t.a}{t.b}' for t in p.line)}; open ends {p.left} and {p.right}."
             if p.line else "The line is empty."]
    if p.hands is not None:
        for seat, tiles in enumerate(p.hands):
            if tiles is None:  # a seat's view: the others' tiles are not its to see
                k = p.counts[seat] if seat < len(p.counts) else 0
                parts.append(f"Seat {seat}: {k} tile{'s' if k != 1 else ''}, not shown.")
                continue
            held = f"{len(tiles)} tile{'s' if len(tiles) != 1 else ''} ({' '.join(tile_name(t) for t in tiles)})"
            pip = p.pips[seat] if p.pips is not None and seat < len(p.pips) else None
            pips = f", {pip} pips" if pip is not None else ""
            parts.append(f"Seat {seat}: {held if tiles else 'no tile'}{pips}.")
    else:
        parts.append("The hands stay hidden until the hand is over.")
    if p.stock:
        parts.append(f"Boneyard: {p.stock} tile{'s' if p.stock != 1 else ''}.")
    return " ".join(parts)


@lru_cache(maxsize=4096)
def _voids_table(voids: tuple[tuple[int, ...], ...]) -> str:
    head = "".join(f"<th>{n}</th>" for n in range(7))
    rows = "".join(
        f"<tr><th>seat {s}</th>" + "".join(f"<td>{'✕' if n in v else ''}</td>" for n in range(7)) + "</tr>"
        for s, v in enumerate(voids)
    )
    return (f'<h3>Known voids</h3><table class="voids"><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>")
