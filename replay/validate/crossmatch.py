"""Checks across matches: seeds used twice, and rematches after their match.

A rematch's first lead follows from the match it rematches (REMATCH_UNKNOWN
when that match is not among the logs), so `validate_in_order` validates a
match before its rematches and hands each the first leaders found so far;
then `seed_reuse` compares every anchor and revealed seed of the run
(SEED_REUSED).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from replay.report import CODES, Finding, FindingCode, MatchReport


def seed_reuse(
    reports: Sequence[MatchReport], seen: Mapping[str, str] | None = None
) -> dict[str, list[Finding]]:
    """SEED_REUSED findings per match: an anchor or seed used by two matches."""
    # A first pass finds the seeds that could be reused (in two matches here,
    # or already seen); only those get the bookkeeping below, in the same
    # order as if every seed had it.
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
    owners: dict[str, set[str]] = {}
    where: dict[tuple[str, str], tuple[int | None, str]] = {}
    lines: dict[tuple[str, int], tuple[str, int]] = {}  # (match, hand; 0 the anchor) -> file, line
    for rep in reports:
        lines.update(((rep.match, h), (f, n)) for h, f, n in rep.seed_lines)
        seeds: list[tuple[str, int | None, str]] = []
        if rep.anchor and rep.anchor.lower() in shared:
            seeds.append((rep.anchor.lower(), None, "anchor"))
        for h in rep.hands:
            if h.server_seed and h.server_seed.lower() in shared:
                seeds.append((h.server_seed.lower(), h.hand, f"seed of hand {h.hand}"))
        for seed, hand, what in seeds:
            owners.setdefault(seed, set()).add(rep.match)
            where.setdefault((seed, rep.match), (hand, what))
    out: dict[str, list[Finding]] = {}
    for seed, matches in owners.items():
        others_seen = {seen[seed]} if seen and seed in seen else set()
        everyone = matches | others_seen
        if len(everyone) < 2:
            continue
        for mid in sorted(matches):
            hand, what = where[(seed, mid)]
            others = sorted(everyone - {mid})
            file, line = lines.get((mid, hand or 0), (None, None))
            out.setdefault(mid, []).append(
                Finding(FindingCode.SEED_REUSED, f"the {what} is also used by match {', '.join(others)}",
                        hand, None, file, line, match=mid)
            )  # fmt: skip
    return out


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

