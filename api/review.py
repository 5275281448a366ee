"""The review of a hand on its replay page: the move list with its marks, the
best move of each decision, and its principal lines with the reasons why.

`marks(analysis, scoring)` gives each graded ply its mark (``?!``, ``?``,
``??``, or "too close to call"), the points lost and the best move;
`move_list` draws the list beside the board; `LineBook` gives a hand its
principal lines and their sentences (:mod:`replay.analysis.line`,
:mod:`replay.analysis.explain`), worked out on its first view and kept in
the store, and `why_panel` draws them under a ply's notes.

What a seat's view shows: the seat's own decisions only, graded on what it
could know (the sampled grade: its values speak of no tile it did not
see), with the best move on that grade; no perfect-information value and no
line (they speak of every hand). A hand still on has no analysis at all.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections import OrderedDict
from contextlib import closing
from html import escape
from threading import Lock, Thread
from typing import Any, Final, overload

import duckdb
import orjson

from api.replay_model import HandData, Ply, label
from replay.analysis.explain import explain, themes, tile_words
from replay.analysis.grades import THRESHOLDS
from replay.analysis.line import LINE_VERSION, hand_lines
from replay.store.lines import prune_lines, put_lines, stored_lines

__all__ = ["SIGN", "LineBook", "alternative_lines", "best_move", "for_drawing", "line_book", "line_stamp", "lines_of",
           "marks", "move_list", "review_json", "why_panel", "work_out_lines"]

log = logging.getLogger("replay.review")

SIGN: Final = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
CLOSE: Final = "too close to call"


def best_move(p: dict[str, Any], known_only: bool = False) -> str | None:
    """The best alternative of a graded ply: on what the mover could know
    where the ply is sampled, else under perfect information (None for a
    forced move, or with `known_only` when the ply is not sampled)."""
    if p["forced"]:
        return None
    alts = p["alternatives"]
    if p["samples"] and all(a.get("read") is not None for a in alts):  # the read grade, where there is one
        return str(max(alts, key=lambda a: a["read"])["move"])
    if p["samples"] and all(a["pimc"] is not None for a in alts):
        return str(max(alts, key=lambda a: a["pimc"])["move"])
    if known_only:
        return None
    return str(max(alts, key=lambda a: a["dd"])["move"])


def _mark(p: dict[str, Any], scoring: str, known_only: bool) -> tuple[str | None, float | None]:
    """(mark, points lost) of a graded ply, on the grade the view may show."""
    if p["forced"]:
        return None, None
    sampled = bool(p["samples"]) and p["pimc_loss"] is not None
    if known_only and not sampled:
        return None, None
    known = p.get("read_loss") if p.get("read_loss") is not None else p["pimc_loss"]
    loss = float(known) if sampled and known is not None else float(p["dd_loss"])
    if p["class"] and (sampled or not known_only):
        return SIGN[p["class"]], loss
    if p.get("too_close"):  # stored by the analysis: the class its evidence leaves open
        return CLOSE, loss
    # a loss its mean calls an inaccuracy that its 95% interval does not confirm
    if sampled and not p["exact"] and loss >= THRESHOLDS.get(scoring, THRESHOLDS["pips"])[0] - 1e-9:
        return CLOSE, loss
    return None, loss


def marks(analysis: dict[str, Any] | None, scoring: str, viewer: int | None = None) -> dict[int, dict[str, Any]]:
    """Each graded ply's mark, loss and best move, by ply; with `viewer`,
    that seat's own decisions on what it could know only."""
    if analysis is None:
        return {}
    out: dict[int, dict[str, Any]] = {}
    for p in analysis["plies"]:
        if viewer is not None and p["seat"] != viewer:
            continue
        mark, loss = _mark(p, scoring, viewer is not None)
        out[p["ply"]] = {"mark": mark, "lost": None if loss is None else round(loss, 1), "class": p["class"],
                         "best": best_move(p, viewer is not None), "played": p["played"], "forced": p["forced"]}
    return out


def _move_words(p: Ply) -> str:
    mv = p.move
    if mv is None:
        return "the deal"
    if mv.kind == "play" and mv.tile is not None:
        return f"{label(mv.tile)} {mv.end}" if mv.end else label(mv.tile)
    if mv.kind == "draw":
        return f"draws {label(mv.tile)}" if p.tile_known and mv.tile is not None else "draws"
    if mv.kind == "yield":
        return "hands the lead over"
    return mv.kind


def move_list(plies: list[Ply], graded: dict[int, dict[str, Any]], at: int, vq: str = "") -> str:
    """The list of the hand's moves beside the board (HTML): every ply with
    its seat, its move, forced marked, its mark and the points lost; `at`
    the current one. Each entry links to its ply (the page's script steps
    there without a reload)."""
    rows = []
    for p in plies:
        mv = p.move
        g = graded.get(p.n)
        cls = ["mv"]
        if p.n == at:
            cls.append("cur")
        seat = "" if mv is None else f'<span class="who">{mv.seat}</span>'
        forced = ' <span class="tag forced" title="the only legal move">forced</span>' if p.forced else ""
        mark = lost = ""
        if g is not None and g["mark"]:
            if g["mark"] == CLOSE:
                cls.append("close")
                mark = '<span class="mark close" title="the loss is within the evidence\'s margin">too close to call</span>'
            else:
                cls.append(f"g-{g['class']}")
                mark = f'<span class="mark" title="{g["class"]}">{g["mark"]}</span>'
        if g is not None and g["lost"]:
            lost = f'<span class="lost" title="points lost">−{g["lost"]:.1f}</span>'
        data = "" if mv is None else f' data-seat="{mv.seat}"'
        cur = ' aria-current="step"' if p.n == at else ""
        rows.append(f'<li class="{" ".join(cls)}" data-ply="{p.n}"{data}><a href="?{vq}ply={p.n}"{cur}>'
                    f'<span class="n">{p.n}</span>{seat}<span class="what">{escape(_move_words(p))}{forced}</span>'
                    f"{mark}{lost}</a></li>")
    return ('<nav class="movelist" id="movelist" aria-label="the moves of the hand"><h2>Moves</h2>'
            '<p class="legend muted">seat, move; ?! inaccuracy, ? mistake, ?? blunder, points lost</p>'
            f'<ol>{"".join(rows)}</ol></nav>')


# -- principal lines: worked out once per hand, kept in the store --------------------------

_LINES: OrderedDict[tuple[Any, ...], dict[int, dict[str, Any]]] = OrderedDict()
_LOCK = Lock()
_KEEP = 256


def _worth_lines(hand: HandData) -> bool:
    a = hand.analysis
    return a is not None and hand.review is not None and hand.finished and not a.get("skipped")


def _best_moves(a: dict[str, Any]) -> dict[int, str]:
    return {p["ply"]: b for p in a["plies"] if (b := best_move(p)) is not None}


def line_stamp(hand: HandData) -> str:
    """A digest of everything a hand's lines are worked out from: the hand as
    the solver replays it (rules, deal, boneyard, moves, match context), the
    best move of each decision, the analysis version, its sampled deals and
    seed, and the line code's version. Equal stamps, equal lines; the
    frozen records' reprs hold only numbers, strings and tuples, the same
    in every process."""
    a = hand.analysis
    assert a is not None
    what = repr((LINE_VERSION, a["version"], a["samples"], a["seed"], sorted(_best_moves(a).items()), hand.review))
    return hashlib.blake2b(what.encode(), digest_size=16).hexdigest()


def work_out_lines(hand: HandData) -> dict[int, dict[str, Any]]:
    """Each graded ply's `line_played`, `line_best` (moves as the analysis
    JSON writes them), `steps_played`/`steps_best` (who moved, the ends
    after), `why` (sentences), `facts` and `themes`, by ply, searched now
    (about 60 ms of CPU a 4-seat hand, C solver: bench/review.py); {} for
    a hand without analysis."""
    a, inp = hand.analysis, hand.review
    if a is None or inp is None or not _worth_lines(hand):
        return {}
    out: dict[int, dict[str, Any]] = {}
    for k, pl in hand_lines(inp, _best_moves(a)).items():
        claims = explain(inp.rules, pl)
        out[k] = {
            "line_played": pl.played.moves,
            "line_best": pl.best.moves,
            "steps_played": [[s.seat, s.left, s.right] for s in pl.played.steps],
            "steps_best": [[s.seat, s.left, s.right] for s in pl.best.steps],
            "why": [c.text for c in claims],
            "facts": [c.fact for c in claims],
            "themes": themes(inp.rules, pl),
        }
    return out


def lines_of(hand: HandData) -> dict[int, dict[str, Any]]:
    """The hand's principal lines (:func:`work_out_lines`): those the store
    gave it (:class:`LineBook`), else worked out here, a process keeping the
    last 256 hands' (for callers without a store)."""
    if isinstance(hand.lines, bytes):
        return decode_lines(hand.lines)
    if hand.lines is not None:
        return hand.lines
    a = hand.analysis
    if a is None or not _worth_lines(hand):
        return {}
    key = (hand.match, hand.hand, a["version"], a["samples"], a["seed"], LINE_VERSION)
    with _LOCK:
        got = _LINES.get(key)
        if got is not None:
            _LINES.move_to_end(key)
            return got
    out = work_out_lines(hand)
    with _LOCK:
        _LINES[key] = out
        while len(_LINES) > _KEEP:
            _LINES.popitem(last=False)
    return out


def encode_lines(lines: dict[int, dict[str, Any]]) -> bytes:
    return orjson.dumps({str(k): v for k, v in lines.items()})


def decode_lines(body: bytes) -> dict[int, dict[str, Any]]:
    return {int(k): v for k, v in orjson.loads(body).items()}


class LineBook:
    """The principal lines of a store's hands, worked out on a hand's first
    view and kept in the store (:mod:`replay.store.lines`): a restart, or
    another server on the same file, reads them instead of searching again.
    A row worked out from anything else (another analysis of the hand, or
    another line code: `line_stamp`) is not used; the last 256 hands' are
    kept in memory too.

    Stored by the server, which owns the file, one hand at a time, while no
    load or background analysis holds the store: a page does not wait for
    them (a hand whose store is held then is stored by the book's writer
    thread once it is free). The first write of a process drops the rows of
    matches no longer stored (`prune_lines`).
    """

    def __init__(self, store: Any, keep: int = _KEEP) -> None:
        self.store = store
        self.keep = keep
        self.memory: OrderedDict[tuple[str, int, str], dict[int, dict[str, Any]]] = OrderedDict()
        self.matches: OrderedDict[str, dict[int, tuple[str, bytes]]] = OrderedDict()  # stored rows, by match
        self.lock = Lock()
        self.writing = Lock()
        self.pending: dict[tuple[str, int], tuple[str, bytes]] = {}  # left for the writer thread
        self.writer: Thread | None = None
        self.pruned = False
        self.worked = self.read = self.written = 0  # hands worked out, read from the store, stored

    def attach(self, hand: HandData, cur: Any = None) -> HandData:
        """The hand with its lines (`HandData.lines`: what `lines_of` and the JSON twin give)."""
        if not _worth_lines(hand) or hand.lines is not None:
            return hand
        return dataclasses.replace(hand, lines=self.of(hand, cur))

    def of(self, hand: HandData, cur: Any = None) -> dict[int, dict[str, Any]]:
        if not _worth_lines(hand):
            return {}
        stamp = line_stamp(hand)
        got = self._known(hand, stamp)
        if got is not None:
            return got
        row = self._stored(hand.match, cur).get(hand.hand)
        if row is not None and row[0] == stamp:
            got = decode_lines(row[1])
            self.read += 1
        else:
            got = work_out_lines(hand)
            self.worked += 1
            self._store(hand, stamp, got)
        self._keep((hand.match, hand.hand, stamp), got)
        return got

    def known(self, hand: HandData) -> HandData | None:
        """The hand with its lines if this book has them at hand: in memory, or
        in its match's stored rows already read (None: the store must be
        read, or the lines searched). The JSON twin then needs no thread."""
        if not _worth_lines(hand) or hand.lines is not None:
            return hand
        got = self._known(hand, line_stamp(hand), raw=True)
        return None if got is None else dataclasses.replace(hand, lines=got)

    @overload
    def _known(self, hand: HandData, stamp: str) -> dict[int, dict[str, Any]] | None: ...
    @overload
    def _known(self, hand: HandData, stamp: str, raw: bool) -> dict[int, dict[str, Any]] | bytes | None: ...

    def _known(self, hand: HandData, stamp: str, raw: bool = False) -> dict[int, dict[str, Any]] | bytes | None:
        """The hand's lines in memory, or in its match's stored rows already
        read: decoded, or with `raw` as stored (JSON bytes: a render worker
        decodes them, 0.6 ms a twin at a million hands the server keeps)."""
        key = (hand.match, hand.hand, stamp)
        with self.lock:
            got = self.memory.get(key)
            if got is not None:
                self.memory.move_to_end(key)
                return got
            rows = self.matches.get(hand.match)
            row = None if rows is None else rows.get(hand.hand)
        if row is None or row[0] != stamp:
            return None
        if raw:
            self.read += 1
            return row[1]
        got = decode_lines(row[1])
        self.read += 1
        self._keep(key, got)
        return got

    def _keep(self, key: tuple[str, int, str], got: dict[int, dict[str, Any]]) -> None:
        with self.lock:
            self.memory[key] = got
            while len(self.memory) > self.keep:
                self.memory.popitem(last=False)

    def _stored(self, match: str, cur: Any) -> dict[int, tuple[str, bytes]]:
        """The match's stored rows, read once for all its hands (a reviewer
        steps through them) and kept for the last 32 matches."""
        with self.lock:
            rows = self.matches.get(match)
            if rows is not None:
                self.matches.move_to_end(match)
                return rows
        if cur is None:
            with closing(self.store.cursor()) as own:
                rows = stored_lines(own, match)
        else:
            rows = stored_lines(cur, match)
        with self.lock:
            self.matches[match] = rows
            while len(self.matches) > 32:
                self.matches.popitem(last=False)
        return rows

    def _store(self, hand: HandData, stamp: str, got: dict[int, dict[str, Any]]) -> None:
        """Keep a hand's lines in the store now if no load or sampling holds
        it; else on the book's writer thread once they are done (the request
        does not wait: a hand left unstored is searched again after a restart,
        60 ms of the server's CPU, and a load held the store 2% of the time
        at a million hands, its player rows refreshed every 2 s)."""
        body = encode_lines(got)
        if self._write(hand.match, hand.hand, stamp, body, wait=False):
            return
        with self.lock:
            self.pending[(hand.match, hand.hand)] = (stamp, body)
            if self.writer is not None:
                return
            writer = self.writer = Thread(target=self._write_pending, name="line-writer", daemon=True)
        writer.start()

    def _write_pending(self) -> None:
        """The writer thread: the hands left by `_store`, each once the store is free."""
        while True:
            with self.lock:
                if not self.pending:  # with the lock: a hand left now starts another writer
                    self.writer = None
                    return
                (match, hand), (stamp, body) = self.pending.popitem()
            try:
                self._write(match, hand, stamp, body, wait=True)
            except Exception:  # noqa: BLE001 - the thread goes on; the hand is stored on a later view
                log.warning("could not store the lines of hand %d of %r", hand, match, exc_info=True)

    def _write(self, match: str, hand: int, stamp: str, body: bytes, wait: bool) -> bool:
        """Store one hand's row; False if `wait` is off and the store is held."""
        load = self.store.load_lock
        with self.writing:
            if not load.acquire(blocking=wait):  # a load or the sampling is writing: not now
                return False
            try:
                with closing(self.store.cursor()) as cur:
                    if not self.pruned:
                        self.pruned = True
                        gone = prune_lines(cur)
                        if gone:
                            log.info("dropped the stored lines of %d hands of matches no longer stored", gone)
                    put_lines(cur, match, hand, stamp, body)
                    self.written += 1
                with self.lock:
                    rows = self.matches.get(match)
                    if rows is not None:
                        rows[hand] = (stamp, body)
            except duckdb.Error:  # kept in memory; stored on a later view
                log.warning("could not store the lines of hand %d of %r", hand, match, exc_info=True)
            finally:
                load.release()
        return True


_BOOKS = Lock()


def line_book(state: Any) -> LineBook:
    """The app's line book (one per app, made on first use)."""
    with _BOOKS:
        got: LineBook | None = getattr(state, "line_book", None)
        if got is None or got.store is not state.store:
            got = state.line_book = LineBook(state.store)
        return got


def alternative_lines(hand: HandData, ply: int, move: str) -> dict[str, Any] | None:
    """The lines after the move played at `ply` and after `move` (any legal
    alternative), with the reasons; None if the hand has no such decision."""
    a, inp = hand.analysis, hand.review
    if a is None or inp is None or not hand.finished:
        return None
    p = next((x for x in a["plies"] if x["ply"] == ply), None)
    if p is None or p["forced"] or move not in {x["move"] for x in p["alternatives"]}:
        return None
    pl = hand_lines(inp, {ply: move}).get(ply)
    if pl is None:
        return None
    return {"ply": ply, "move": move, "played": p["played"], "line_played": pl.played.moves,
            "line": pl.best.moves, "value_played": pl.played.value, "value": pl.best.value,
            "why": [c.text for c in explain(inp.rules, pl, "alternative")]}


def scoring_of(hand: HandData) -> str:
    if hand.scoring is not None:
        return hand.scoring
    return hand.review.rules.scoring if hand.review is not None else "pips"


def for_drawing(hand: HandData) -> HandData:
    """The hand as the JSON twin is drawn from once its lines are attached
    (`LineBook.attach`): without the solver's replay of it, of which the
    twin needs only the scoring (a render worker took 0.5 ms a twin to
    unpickle it)."""
    if hand.review is None or (hand.lines is None and _worth_lines(hand)):
        return hand  # no lines yet: lines_of would search them, with the replay
    return dataclasses.replace(hand, review=None, scoring=hand.review.rules.scoring)


def review_json(hand: HandData, viewer: int | None) -> list[dict[str, Any]]:
    """The JSON twin's review: one entry per graded ply (a seat's own only, in
    its view, with no line), with mark, loss, best move and, in the whole
    view, `line_played`, `line_best` and `why`."""
    if hand.analysis is None or not hand.finished:
        return []
    graded = marks(hand.analysis, scoring_of(hand), viewer)
    lines = lines_of(hand) if viewer is None else {}
    out = []
    for k, g in sorted(graded.items()):
        row: dict[str, Any] = {"ply": k, **g}
        if viewer is None:
            ln = lines.get(k)
            row["line_played"] = ln["line_played"] if ln else None
            row["line_best"] = ln["line_best"] if ln else None
            row["why"] = ln["why"] if ln else []
            # who made each move of a line and the ends after it (the page steps them)
            row["steps_played"] = ln["steps_played"] if ln else None
            row["steps_best"] = ln["steps_best"] if ln else None
        out.append(row)
    return out


def _line_html(moves: list[str], steps: list[list[int]], which: str) -> str:
    items = "".join(
        f'<li data-step="{i}"><span class="who">{s}</span> {escape(tile_words(m))}'
        f' <small class="muted">{"" if lft < 0 else f"ends {lft}·{rgt}"}</small></li>'
        for i, (m, (s, lft, rgt)) in enumerate(zip(moves, steps, strict=True))
    )
    return (f'<div class="pline" data-line="{which}"><h4>{"Played" if which == "played" else "Best"} line '
            f'<button type="button" class="btn small" data-lstep="-1" aria-label="back one move">◀</button>'
            f'<button type="button" class="btn small" data-lstep="1" aria-label="on one move">▶</button></h4>'
            f"<ol>{items}</ol></div>")


def why_panel(g: dict[str, Any] | None, ln: dict[str, Any] | None, pending: bool = False) -> str:
    """A decision's best move, its principal lines (steppable) and the reasons
    (HTML); `pending`: the lines are not drawn here, the page's script fetches
    them (the JSON twin's `review`) when the ply is shown."""
    if g is None or g["best"] is None:
        return ""
    same = g["best"] == g["played"]
    head = ("the move played is the best" if same else
            f'best: <b class="bestmv">{escape(tile_words(g["best"]))}</b>')
    wait = ' data-pending=""' if pending else ""
    out = [f'<div class="why"{wait}><h3>Why <small>{head}</small></h3>']
    if ln is not None:
        if ln["why"]:
            out.append('<ul class="reasons">' + "".join(f"<li>{escape(t)}</li>" for t in ln["why"]) + "</ul>")
        out.append('<div class="plines">')
        out.append(_line_html(ln["line_played"], ln["steps_played"], "played"))
        if not same:
            out.append(_line_html(ln["line_best"], ln["steps_best"], "best"))
        out.append("</div>")
    out.append("</div>")
    return "".join(out)
