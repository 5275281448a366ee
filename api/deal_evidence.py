"""The evidence of a DEAL_MISMATCH: the deal derived from the revealed seeds beside the logged one.

A hand whose logged deal differs from its deal-v1 derivation shows, on its
replay page and in its JSON twin, both deals seat by seat (tiles in the
order dealt), the tiles that differ marked, and the seeds used: the server
seed the match revealed, each seat's client seed, the table, match and hand
that make the nonce, and the beacon. A reader can derive the deal again
from these (docs/deal-commitment.md).
"""

from __future__ import annotations

import binascii
from typing import Any

from replay.deal import DealError, derive_deal
from replay.tiles import tile_name

__all__ = ["deal_evidence"]


def deal_evidence(
    *, table: str | None, match: str, hand: int, players: int, stock: str | None, beacon: str | None,
    dealt: list[list[int]] | None, server_seed: str | None, client_seeds: list[str] | None,
) -> dict[str, Any] | None:
    """Both deals and the seeds, or None when there is nothing to derive from (no revealed seed).

    Each seat's row lists the logged tiles and the derived ones, with
    ``differs``: the tiles of one hand missing from the other.
    """
    if server_seed is None or dealt is None or client_seeds is None or table is None:
        return None
    try:
        derived = derive_deal(
            binascii.unhexlify(server_seed), table=table, match=match, hand=hand, players=players,
            client_seeds=client_seeds, beacon=beacon, doubles_aside=stock == "doubles_aside",
        )  # fmt: skip
    except (DealError, ValueError, binascii.Error):
        return None
    seats: list[dict[str, Any]] = []
    for s in range(players):
        logged = list(dealt[s]) if s < len(dealt) else []
        want = list(derived.hands[s])
        seats.append({
            "seat": s,
            "logged": [{"tile": tile_name(t), "differs": t not in want} for t in logged],
            "derived": [{"tile": tile_name(t), "differs": t not in logged} for t in want],
        })  # fmt: skip
    return {
        "seeds": {"server_seed": server_seed, "client_seeds": list(client_seeds), "table": table,
                  "match": match, "hand": hand, "beacon": beacon, "scheme": "deal-v1"},
        "seats": seats,
        "stock": [tile_name(t) for t in derived.stock],
        "differing_seats": [r["seat"] for r in seats if any(t["differs"] for t in r["logged"] + r["derived"])],
    }  # fmt: skip
