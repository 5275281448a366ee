"""Principal lines and the sentences made of them, checked by replaying every line.

Every graded ply of the sample logs (and, with REPLAY_LINES_HANDS set, of
that many more simulated hands): the line after the played move and after
the best one reach exactly those moves' perfect-information values, and
every claim of the explanation holds in the line replayed through the
engine (not through the code that made it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.analysis.explain import explain
from replay.analysis.grades import Analyzer, HandInput, engine_move, inputs_from_report
from replay.analysis.line import PlyLines, hand_lines
from replay.engine import HandState, apply, legal_moves, new_hand
from replay.moves import label
from replay.simulate.config import SimConfig
from replay.simulate.run import simulate
from replay.solver import final_points
from replay.tiles import BIT, SUIT_MASK
from replay.validate.run import validate_paths

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = [ROOT / "sample_logs" / f for f in ("international.jsonl", "domena_2p.jsonl", "pr_3p.jsonl",
                                                "dominican.jsonl", "milo.jsonl")]


def _inputs(paths: list[Path]) -> Iterator[HandInput]:
    rep = validate_paths(paths, keep_moves=True)
    for m in rep.matches:
        yield from inputs_from_report(m)


def _simulated(tmp: Path, hands: int) -> list[Path]:
    cfg = SimConfig(profiles=("international", "domena_2p", "pr_3p", "dominican"), hands=hands, seed=7)
    path = tmp / "sim.jsonl"
    with path.open("wb") as f:
        for line in simulate(cfg):
            f.write(line if line.endswith(b"\n") else line + b"\n")
    return [path]


def _replay(start: HandState, moves: list[str], first_laid: Any) -> list[HandState]:
    """The states after each move of a line, the moves read back by name."""
    states = []
    s = start
    for i, name in enumerate(moves):
        legal = {label(m): m for m in legal_moves(s)}
        assert name in legal, (name, sorted(legal))
        s = apply(s, first_laid if i == 0 and first_laid is not None else legal[name])
        states.append(s)
    return states


def _points(s: HandState, inp: HandInput) -> list[int]:
    return list(final_points(s, inp.context))


def check(inp: HandInput, before: HandState, laid: Any, pl: PlyLines, history: list[tuple[int, int, str, int, int]],
          other: str = "best") -> int:
    """Every claim of the ply's explanation against its lines replayed; the number checked."""
    runs = {
        "played": _replay(before, pl.played.moves, laid),
        # the other move is the played one: the same line (the first tile laid as the log laid it)
        other: _replay(before, pl.best.moves, laid if pl.best is pl.played else None),
    }
    lines = {"played": pl.played, other: pl.best}
    n = 0
    for c in explain(inp.rules, pl, other):
        f = c.fact
        n += 1
        if f["kind"] == "end":
            states = runs[f["line"]]
            last = states[-1]
            assert last.result == f["result"] and len(states) == f["step"], c.text
            assert all(s.result is None for s in states[:-1]), c.text
            mover = lines[f["line"]].steps[-1].seat
            assert (mover if f["result"] == "domino" else last.blocker) == f["by"], c.text
            if f["result"] == "domino":
                assert last.hands[f["by"]] == 0, c.text
            assert _points(last, inp) == f["points"], c.text
        elif f["kind"] == "gap":
            assert f["points"] == pl.best.value - pl.played.value != 0
            assert f["points"] > 0 or other != "best"
        elif f["kind"] == "dead":
            states = runs[f["line"]]
            k = f["step"] - 1
            s = states[k]
            num = f["number"]
            assert num in (s.left, s.right), c.text
            held = 0
            for h in s.hands:
                held |= h
            for t in s.stock:
                held |= BIT[t]
            assert not held & SUIT_MASK[num], c.text
            if k > 0:  # dead from that move, not before
                p = states[k - 1]
                held_p = 0
                for h in p.hands:
                    held_p |= h
                for t in p.stock:
                    held_p |= BIT[t]
                assert num not in (p.left, p.right) or held_p & SUIT_MASK[num], c.text
        elif f["kind"] == "pass":
            states = runs[f["line"]]
            k = f["step"] - 1
            prev = states[k - 1]
            assert lines[f["line"]].steps[k].move == "pass" and lines[f["line"]].steps[k].seat == f["seat"], c.text
            assert prev.turn == f["seat"] and sorted({prev.left, prev.right}) == f["ends"], c.text
            assert not prev.hands[f["seat"]] & (SUIT_MASK[prev.left] | SUIT_MASK[prev.right]), c.text
        elif f["kind"] == "shown":
            got = [h for h in history if h[0] == f["ply"]]
            assert got and got[0][1] == f["seat"] and got[0][2] == f["what"], c.text
            assert sorted({got[0][3], got[0][4]}) == f["ends"], c.text
            assert set(f["numbers"]) <= set(f["ends"]), c.text
        else:  # pragma: no cover
            raise AssertionError(f"an unknown claim: {f}")
    return n


def _check_hands(inputs: list[HandInput]) -> tuple[int, int, int]:
    an = Analyzer(samples=0)
    hands = plies = claims = 0
    for inp in inputs:
        a = an.hand(inp)
        if a.skip is not None:
            continue
        hands += 1
        best = {p.ply: max(p.alternatives, key=lambda x: x.dd).move for p in a.plies if not p.forced}
        got = hand_lines(inp, best)
        by_ply = {p.ply: p for p in a.plies}
        state = new_hand(inp.rules, [list(h) for h in inp.dealt], leader=inp.leader, opening=inp.opening,
                         stock=inp.stock)
        history: list[tuple[int, int, str, int, int]] = []
        for k, (seat, kind, tile, end) in enumerate(inp.moves, 1):
            move, laid = engine_move(state, kind, tile, end)
            if k in got:
                pl = got[k]
                assert pl.played.value == by_ply[k].dd and pl.best.value == by_ply[k].dd_best
                assert pl.played.moves[0] == by_ply[k].played and pl.best.moves[0] == best[k]
                claims += check(inp, state, laid, pl, history)
                plies += 1
                # every third decision: a move neither played nor best, asked about
                others = [x.move for x in by_ply[k].alternatives if x.move not in (best[k], by_ply[k].played)]
                if others and k % 3 == 0:
                    alt = hand_lines(inp, {k: others[0]}, plies=[k])[k]
                    assert alt.best.value == next(x.dd for x in by_ply[k].alternatives if x.move == others[0])
                    claims += check(inp, state, laid, alt, history, "alternative")
            if kind in ("pass", "draw") and state.left >= 0 and state.result is None:
                history.append((k, seat, kind, state.left, state.right))
            state = apply(state, laid)
        # every decision of the hand has its lines, but the closing passes of a block
        assert set(got) <= set(best) and len(got) >= len(best) - inp.rules.players
    return hands, plies, claims


def test_every_claim_holds_in_the_replayed_lines_of_the_samples() -> None:
    hands, plies, claims = _check_hands(list(_inputs(SAMPLES)))
    assert hands > 100 and plies > 1000 and claims > 3 * plies


@pytest.mark.skipif(not os.environ.get("REPLAY_LINES_HANDS"), reason="set REPLAY_LINES_HANDS=N for N more simulated hands")
def test_every_claim_holds_on_simulated_hands(tmp_path: Path) -> None:
    n = int(os.environ["REPLAY_LINES_HANDS"])
    inputs = list(_inputs(_simulated(tmp_path, n)))
    hands, plies, claims = _check_hands(inputs)
    print(f"lines checked: {hands} hands, {plies} decisions, {claims} claims")  # noqa: T201
    assert hands >= n // 2
