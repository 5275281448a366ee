"""Why a move lost points: sentences made only of facts the lines show.

Each sentence comes with its claim (:class:`Claim`): the kind of fact and
its numbers, which anyone can check by replaying the line through the
engine (tests/test_lines.py does, on every graded ply of many hands). No
sentence says anything its claim does not hold. The facts:

- ``end``: how a line ends: who goes out (``domino``) or lays the tile
  that blocks the line (``block``), at which move of the line (the move
  itself is move 1), and the points each side (or seat) ends with;
- ``gap``: how many points the best line ends better than the played one
  for the mover's side (the moves' perfect-information values);
- ``dead``: a number at an end that nobody can play on any more (no hand
  and no boneyard holds a tile carrying it), from which move of a line;
- ``pass``: a seat's first pass in a line, at which move, on which ends;
- ``shown``: a pass or draw of the hand before the decision by that seat,
  on ends carrying a number of that pass (the table had seen it lacked
  that number).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from replay.analysis.line import Line, PlyLines
from replay.rules import Rules

__all__ = ["THEMES", "Claim", "explain", "themes", "tile_words"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One sentence and the fact it states (``fact["kind"]``: end, gap, dead, pass, shown)."""

    text: str
    fact: dict[str, Any]


def tile_words(move: str) -> str:
    """A move as the pages write it: ``"62 left"`` as ``[6|2] left``.

    >>> tile_words("62 left"), tile_words("pass")
    ('[6|2] left', 'pass')
    """
    if len(move) > 3 and move[2] == " " and move[:2].isdigit():
        return f"[{move[0]}|{move[1]}] {move[3:]}"
    return move


def _plural(n: int) -> str:
    return f"{n}s"


def _pts(n: int, unit: str) -> str:
    return f"{n} {unit[:-1] if abs(n) == 1 else unit}"


def _sides(rules: Rules, points: tuple[int, ...], unit: str) -> str:
    if rules.teams == "pairs":
        return ", ".join(f"seats {k} and {k + 2} score {_pts(p, unit)}" for k, p in enumerate(points))
    return ", ".join(f"seat {k} scores {_pts(p, unit)}" for k, p in enumerate(points))


def _end(rules: Rules, line: Line, which: str) -> Claim:
    at = len(line.steps)
    head = f"After {tile_words(line.steps[0].move)} ({which})"
    if line.result == "domino":
        how = f"seat {line.by} goes out at move {at} of the line"
    else:
        how = f"the line blocks at move {at} (seat {line.by} lays the last tile)"
    unit = "points" if rules.scoring != "royal_rumble" else "penalty points"
    text = f"{head}, with best play by everyone {how}: {_sides(rules, line.points, unit)}."
    return Claim(text, {"kind": "end", "line": which, "result": line.result, "by": line.by, "step": at,
                        "points": list(line.points)})


def explain(rules: Rules, lines: PlyLines, other: str = "best") -> list[Claim]:
    """The sentences of one decision: how each line ends, the gap, the first
    number a line kills, the first pass of an opponent of the mover in each
    line and what the table had already seen of that seat. `other` names
    the second line (``best``; ``alternative`` for any other move asked
    about, whose gap may be either way)."""
    played, best = lines.played, lines.best
    seat = played.seat
    out = [_end(rules, played, "played")]
    same = best.steps[0].move == played.steps[0].move
    if not same:
        out.append(_end(rules, best, other))
        gap = best.value - played.value
        if gap > 0:
            out.append(Claim(f"The {other} move ends {_pts(gap, 'points')} better for seat {seat}'s side than the one played.",
                             {"kind": "gap", "points": gap}))
        elif gap < 0 and other != "best":
            out.append(Claim(f"The {other} move ends {_pts(-gap, 'points')} worse for seat {seat}'s side than the one played.",
                             {"kind": "gap", "points": gap}))
    for line, which in ((played, "played"), (best, other)):
        if which == other and same:
            break
        # a number dead before the line's last move (once the hand is over every end is)
        dead = [(n, k) for n, k in line.dead if k < len(line.steps) - 1]
        if dead:
            n, step = dead[0]
            out.append(Claim(
                f"In the {which} line the {_plural(n)} are dead from move {step + 1}: an end shows {n} "
                f"and nobody holds another tile with a {n}.",
                {"kind": "dead", "line": which, "number": n, "step": step + 1}))
        mine = rules.side_of(seat) if rules.sides == 2 else seat
        for i, st in enumerate(line.steps):
            theirs = rules.side_of(st.seat) if rules.sides == 2 else st.seat
            if st.move != "pass" or theirs == mine or i == 0:
                continue
            before = line.steps[i - 1]
            ends = sorted({before.left, before.right})
            words = " and ".join(str(x) for x in ends)
            out.append(Claim(f"In the {which} line seat {st.seat} passes at move {i + 1} (the ends show {words}).",
                             {"kind": "pass", "line": which, "seat": st.seat, "step": i + 1, "ends": ends}))
            seen = next((s for s in lines.shown if s.seat == st.seat and {s.left, s.right} & set(ends)), None)
            if seen is not None:
                nums = sorted({seen.left, seen.right} & set(ends))
                verb = "passed" if seen.kind == "pass" else "drew"
                out.append(Claim(
                    f"The table knew it: seat {st.seat} {verb} at move {seen.ply} of the hand with "
                    f"{' and '.join(str(x) for x in sorted({seen.left, seen.right}))} at the ends "
                    f"(no {' and no '.join(str(x) for x in nums)} then).",
                    {"kind": "shown", "seat": st.seat, "ply": seen.ply, "what": seen.kind,
                     "ends": sorted({seen.left, seen.right}), "numbers": nums}))
            break
    return out


#: The themes a puzzle may carry, as :func:`themes` names them.
THEMES: Final = ("domino", "force a block", "kill a number", "capicua", "block a pass")


def themes(rules: Rules, lines: PlyLines) -> list[str]:
    """What the best line does that names a puzzle (docs/review.md):

    - ``domino`` (in N): the mover's side goes out, N moves of the side counted;
    - ``force a block``: the best line ends in a block the mover's side wins
      on the count, the played one does not end in a block;
    - ``kill a number``: the best move itself leaves a dead number at an end;
    - ``capicua``: the mover's side goes out with a tile that fits both ends;
    - ``block a pass``: an opponent of the mover passes on the move after the best one.
    """
    best, played = lines.best, lines.played
    seat = best.seat

    def side(s: int) -> int:
        return rules.side_of(s) if rules.sides == 2 else s

    mine = side(seat)
    out: list[str] = []
    if best.result == "domino" and side(best.by) == mine:
        n = sum(1 for st in best.steps if side(st.seat) == mine and st.move not in ("pass", "draw"))
        out.append(f"domino in {n}")
        last, before = best.steps[-1], best.steps[-2] if len(best.steps) > 1 else None
        halves = {int(last.move[0]), int(last.move[1])}
        if before is not None and before.left != before.right and halves == {before.left, before.right}:
            out.append("capicua")
    if best.result == "block" and played.result != "block" and best.points[mine] > 0:
        out.append("force a block")
    if best.dead and best.dead[0][1] == 0:
        out.append("kill a number")
    if len(best.steps) > 1 and best.steps[1].move == "pass" and side(best.steps[1].seat) != mine:
        out.append("block a pass")
    return out
