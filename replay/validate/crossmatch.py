"""Checks across matches: seeds used twice, and rematches after their match.

A rematch's first lead follows from the match it rematches (REMATCH_UNKNOWN
when that match is not among the logs), so `validate_in_order` validates a
match before its rematches and hands each the first leaders found so far;
then `seed_reuse` compares every anchor and revealed seed of the run
(SEED_REUSED). The store words SEED_REUSED with the same `reused` over its
``seeds`` rows after each load or delete (``replay.store.derive``).

>>> uses = [SeedUse("ab", "m1", 0, "a.jsonl", 1), SeedUse("ab", "m2", 3, "b.jsonl", 9),
...         SeedUse("cd", "m2", 4, "b.jsonl", 12)]
>>> for f in reused(uses)["m2"]:
...     print(f.hand, f.file, f.line, f.message)
3 b.jsonl 9 the seed of hand 3 is also used by match m1
>>> reused(uses)["m1"][0].message
'the anchor is also used by match m2'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple

from replay.findings import CODES, Finding, FindingCode, MatchReport


class SeedUse(NamedTuple):
    """A seed (lower case) as one match uses it: ``hand`` 0 for the match's
    anchor; the line it was read from, where known."""

    seed: str
    match: str
    hand: int
    file: str | None
    line: int | None


def reused(uses: Iterable[SeedUse], seen: Mapping[str, str] | None = None) -> dict[str, list[Finding]]:
    """SEED_REUSED findings per match: one per match and seed that another match
    uses too (or, with ``seen``, seed -> a match seen elsewhere). A match
    that uses a seed more than once is named by its first use (the anchor,
    else its first hand); the findings of a match come in the order their
    seeds were first used."""
    owners: dict[str, set[str]] = {}
    where: dict[tuple[str, str], SeedUse] = {}
    for u in uses:
        owners.setdefault(u.seed, set()).add(u.match)
        where.setdefault((u.seed, u.match), u)
    out: dict[str, list[Finding]] = {}
    for seed, matches in owners.items():
        others_seen = {seen[seed]} if seen and seed in seen else set()
        everyone = matches | others_seen
        if len(everyone) < 2:
            continue
        for mid in sorted(matches):
            u = where[(seed, mid)]
            what = f"seed of hand {u.hand}" if u.hand else "anchor"
            others = sorted(everyone - {mid})
            out.setdefault(mid, []).append(
                Finding(FindingCode.SEED_REUSED, f"the {what} is also used by match {', '.join(others)}",
                        u.hand or None, None, u.file, u.line, match=mid)
            )  # fmt: skip
    return out


def seed_reuse(
    reports: Sequence[MatchReport], seen: Mapping[str, str] | None = None
) -> dict[str, list[Finding]]:
    """SEED_REUSED findings per match: an anchor or seed used by two matches."""
    # A first pass finds the seeds that could be reused (in two matches here,
    # or already seen); only those become uses, in the same order as if
    # every seed did.
    first: dict[str, str] = {}
    shared: set[str] = set()
    for rep in reports:
        mid = rep.match
        if rep.anchor and first.setdefault(rep.anchor.lower(), mid) != mid:
            shared.add(rep.anchor.lower())
        for h in rep.hands:
            if h.server_seed and first.setdefault(h.server_seed.lower(), mid) != mid:
                shared.add(h.server_seed.lower())
    if seen:
        shared.update(s for s in first if s in seen)
    if not shared:
        return {}
    uses: list[SeedUse] = []
    for rep in reports:
        mine: list[tuple[str, int]] = []
        if rep.anchor and rep.anchor.lower() in shared:
            mine.append((rep.anchor.lower(), 0))
        mine += [(h.server_seed.lower(), h.hand) for h in rep.hands
                 if h.server_seed and h.server_seed.lower() in shared]  # fmt: skip
        if mine:
            lines = {h: (f, n) for h, f, n in rep.seed_lines}  # hand (0 the anchor) -> file, line
            uses += [SeedUse(seed, rep.match, hand, *lines.get(hand, (None, None))) for seed, hand in mine]
    return reused(uses, seen)



def with_findings(report: MatchReport, extra: Sequence[Finding]) -> MatchReport:
    """The report with more findings, and its verdict recomputed."""
    if not extra:
        return report
    findings = report.findings + tuple(extra)
    verdict = report.verdict
    if verdict != "unreadable":
        verdict = "invalid" if any(CODES[f.code] == "error" for f in findings) else "valid"
    return replace(report, findings=findings, verdict=verdict)


def first_leader(rep: MatchReport) -> int | None:
    """Who led the match's first hand that was played (a rematch's lead follows it)."""
    for h in rep.hands:
        if h.result != "cancelled":
            return h.leader
    return rep.hands[0].leader if rep.hands else None


def validate_in_order(
    order: list[str],
    rematch_of: Mapping[str, str],
    validate_one: Callable[[str, Mapping[str, int | None]], MatchReport],
) -> list[MatchReport]:
    """Every match of `order` through `validate_one(match, first leaders so far)`,
    a rematch after the match it follows; then SEED_REUSED across them all."""
    done: dict[str, MatchReport] = {}
    leaders: dict[str, int | None] = {}
    known = set(order)

    def run(mid: str, stack: tuple[str, ...] = ()) -> None:
        if mid in done:
            return
        parent = rematch_of.get(mid)
        if parent and parent in known and parent not in done and parent not in stack:
            run(parent, stack + (mid,))
        rep = validate_one(mid, leaders)
        done[mid] = rep
        leaders[mid] = first_leader(rep)

    for mid in order:
        run(mid)
    reports = [done[mid] for mid in order]
    reuse = seed_reuse(reports)
    return [with_findings(r, reuse.get(r.match, [])) for r in reports]

