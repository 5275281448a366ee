"""The stored hands as the analysis reads them (from each match's packed replay),
with who held each seat in each hand (the ``seats`` table's ranges)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import orjson

from replay.analysis.grades import HandInput, held_by, inputs_from_replay
from replay.store.replay_blob import unpack_replay

__all__ = ["stored_inputs"]


def stored_inputs(conn: Any, matches: Sequence[str]) -> Iterator[tuple[str, list[HandInput]]]:
    """Each match's hands as the analysis reads them, from its packed replay."""
    for i in range(0, len(matches), 256):
        chunk = list(matches[i : i + 256])
        rows = conn.execute(
            "SELECT match, rules, rematch_of, replay FROM matches WHERE list_contains(?, match)", [chunk]
        ).fetchall()
        stocks: dict[tuple[str, int], Any] = {
            (m, h): st
            for m, h, st in conn.execute(
                "SELECT match, hand, stock FROM hands WHERE list_contains(?, match)", [chunk]
            ).fetchall()
        }
        seats: dict[str, list[tuple[int, int, str]]] = {}
        for m, seat, player, from_hand in conn.execute(
            "SELECT match, seat, player, from_hand FROM seats WHERE list_contains(?, match) ORDER BY match, from_hand, seq",
            [chunk],
        ).fetchall():  # fmt: skip
            seats.setdefault(m, []).append((int(seat), int(from_hand), str(player)))
        for m, rules, rematch_of, body in rows:
            if rules is None or body is None:
                continue
            got = unpack_replay(body)
            if got is None:
                continue
            _, hands, moves = got
            mine = {k: stocks.get((m, k)) for k in hands}
            inputs = inputs_from_replay(m, orjson.loads(rules), rematch_of, hands, moves, mine)
            yield m, [replace(inp, players=held_by(seats.get(m, ()), inp.hand, inp.rules.players)) for inp in inputs]

