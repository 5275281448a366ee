"""Throughput of deal-v1 derivations (seed chain excluded).

    python bench/deal.py            # 20,000 deals
    python bench/deal.py --full     # 200,000 deals

Each deal is a fresh HMAC_DRBG instantiation plus a 28-tile shuffle, with
the hand number, seat count and client seeds varying as in real logs.
"""

from __future__ import annotations

import argparse
import hashlib
import time

from replay.deal import derive_deal, derive_lead_deck


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20_000, help="deals to derive (default 20,000)")
    ap.add_argument("--full", action="store_true", help="derive 200,000 deals")
    args = ap.parse_args()
    n = 200_000 if args.full else args.n

    seeds = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(n)]
    checksum = 0
    t0 = time.perf_counter()
    for i, seed in enumerate(seeds):
        players = 2 + i % 3
        deal = derive_deal(
            seed,
            table=f"t-{i % 97}",
            match=f"m-{i // 50:06d}",
            hand=1 + i % 50,
            players=players,
            client_seeds=["" if (i + s) % 3 else f"c{i:x}{s}" for s in range(players)],
            beacon=None if i % 2 else "drand:quicknet:1234567",
            doubles_aside=players == 3 and i % 2 == 0,
        )
        checksum ^= deal.hands[0][0] << (i % 20)
    dt = time.perf_counter() - t0

    m = max(1, n // 10)
    t1 = time.perf_counter()
    for seed in seeds[:m]:
        derive_lead_deck(
            seed, table="t", match="m", players=4, client_seeds=["", "", "", ""], beacon=None
        )
    dt_lead = time.perf_counter() - t1

    print(f"deals: {n}  seconds: {dt:.3f}  checksum: {checksum}")
    print(f"us_per_deal: {dt / n * 1e6:.1f}")
    print(f"lead_decks_per_s: {m / dt_lead:,.0f}")
    print(f"deal_derivations_per_s: {n / dt:,.0f} deals/s")


if __name__ == "__main__":
    main()
