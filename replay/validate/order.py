"""Reading order: lines into matches, a match's events into seq order.

The findings about lines and order come from here: unreadable lines,
repeated and duplicated seqs (SEQ_REPEATED, SEQ_DUPLICATE), gaps
(SEQ_GAP), times that run backwards (TIME_ORDER), and `locate`, which
names the file and line of each finding's event.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace

from replay import events as ev
from replay.findings import Finding, FindingCode
from replay.reader import BadLine, EventLine

Record = EventLine | BadLine


# --- grouping lines into matches ------------------------------------------------


def group_records(records: Iterable[Record]) -> tuple[dict[str, list[Record]], list[Finding]]:
    """Lines by match id, in read order; findings for lines that belong to no match."""
    by_match: dict[str, list[Record]] = {}
    top: list[Finding] = []
    for rec in records:
        if isinstance(rec, EventLine):
            by_match.setdefault(rec.event.match, []).append(rec)
        elif rec.match is not None:
            by_match.setdefault(rec.match, []).append(rec)
        else:
            top.append(line_finding(rec))
    return by_match, top


def line_finding(rec: BadLine) -> Finding:
    """An unreadable line as a finding, where the reader found it."""
    return Finding(
        rec.code, rec.message, rec.hand, rec.seq, rec.file, rec.line, rec.match
    )


# --- one match's events in seq order --------------------------------------------


@dataclass(slots=True)
class BySeq:
    """A match's lines by seq: what the first pass over them finds."""

    events: dict[int, ev.Event] = field(default_factory=dict)
    match: str = ""  # the first event line's match id (else the first bad line's)
    files: list[str] = field(default_factory=list)  # in order of first appearance
    findings: list[Finding] = field(default_factory=list)  # bad lines, repeated seqs
    bad_seqs: set[int] = field(default_factory=set)
    bad_hands: set[int] = field(default_factory=set)  # hands with an unreadable line: their gaps are not news


def by_seq(records: Sequence[Record]) -> BySeq:
    """Events by seq (the first of a repeated seq wins); bad lines and
    repeated or duplicated seqs as findings, in line order."""
    out = BySeq(files=list(dict.fromkeys([rec.file for rec in records])))
    events = out.events
    match = ""  # what is known of the match id at each line
    for rec in records:
        if rec.__class__ is BadLine:
            assert isinstance(rec, BadLine)
            match = match or (rec.match or "")
            out.findings.append(line_finding(rec))
            if rec.seq is not None:
                out.bad_seqs.add(rec.seq)
            if rec.hand is not None:
                out.bad_hands.add(rec.hand)
            continue
        e = rec.event  # type: ignore[union-attr]
        old = events.get(e.seq)
        if old is None:
            events[e.seq] = e
        elif old == e:
            out.findings.append(Finding(FindingCode.SEQ_REPEATED, f"seq {e.seq} appears twice ({rec.file}:{rec.line})",
                                        getattr(e, "hand", None), e.seq, rec.file, rec.line, match=match))  # fmt: skip
        else:
            out.findings.append(Finding(
                FindingCode.SEQ_DUPLICATE,
                f"seq {e.seq} is used by two different events ({old.type} and {e.type}); "
                f"the second, at {rec.file}:{rec.line}, is ignored",
                getattr(e, "hand", None),
                e.seq,
                rec.file,
                rec.line,
                match=match,
            ))  # fmt: skip
    for rec in records:
        if rec.__class__ is EventLine:
            match = rec.event.match
            break
    out.match = match
    return out


def seq_gaps(seqs: Sequence[int], bad_seqs: Collection[int], match: str) -> list[Finding]:
    """SEQ_GAP findings for `seqs` (sorted; a bad line's seq counts as there).

    >>> [f.message for f in seq_gaps([0, 1, 4, 6], {5}, "m")]
    ['seq 2..3 missing before seq 4']
    """
    out: list[Finding] = []
    if not bad_seqs and seqs[-1] == len(seqs) - 1:  # seq 0..n-1 has no gap
        return out
    expected = 0
    for s in sorted(set(seqs) | set(bad_seqs)):
        if s > expected:
            missing = f"{expected}" if s == expected + 1 else f"{expected}..{s - 1}"
            out.append(Finding(FindingCode.SEQ_GAP, f"seq {missing} missing before seq {s}", None, s, match=match))
        expected = s + 1
    return out


@dataclass(slots=True)
class Ahead:
    """What one pass over a match's events knows before the replay: a hand's
    deal and draws are checked against its seed while it is replayed."""

    findings: list[Finding] = field(default_factory=list)  # TIME_ORDER
    reveals: dict[int, tuple[str, int, str]] = field(default_factory=dict)  # hand -> (seed, seq, ts)
    end_seqs: dict[int, int] = field(default_factory=dict)  # hand -> seq of its first hand_end/hand_cancelled
    dealt: set[int] = field(default_factory=set)  # hands that have a deal
    draws: dict[int, list[int]] = field(default_factory=dict)  # hand -> drawn tiles in seq order


def read_ahead(start: ev.MatchStart, ordered: Sequence[ev.Event], match: str) -> Ahead:
    """Time order (TIME_ORDER findings) and what is known up front, in one pass
    over the events after `start`, in seq order."""
    # Same-format UTC times compare as strings; only one that looks
    # earlier is converted, so the common case costs one comparison.
    out = Ahead()
    last: ev.Event = start
    reveals, end_seqs, dealt, draws = out.reveals, out.end_seqs, out.dealt, out.draws
    before = start.ts
    for e in ordered:
        ts = e.ts
        if ts >= before and len(ts) == len(before) and ts[-1] == "Z" == before[-1]:
            last, before = e, ts
        elif e.ts_ms < last.ts_ms:
            out.findings.append(Finding(FindingCode.TIME_ORDER, f"ts {ts} is earlier than the event before it ({before})",
                                        getattr(e, "hand", None), e.seq, match=match))  # fmt: skip
        else:
            last, before = e, ts
        kind = e.type
        if kind == "play" or kind == "pass":
            continue
        hand: int = getattr(e, "hand", 0)
        if kind == "draw":
            draws.setdefault(hand, []).append(e.tile)  # type: ignore[union-attr]
        elif kind == "reveal":
            if hand not in reveals:
                reveals[hand] = (e.server_seed, e.seq, e.ts)  # type: ignore[union-attr]
        elif kind == "hand_end" or kind == "hand_cancelled":
            end_seqs.setdefault(hand, e.seq)
        elif kind == "deal":
            dealt.add(hand)
    return out


# --- where a finding is --------------------------------------------------------


def locate(
    findings: Sequence[Finding], records: Sequence[Record], seqs: Collection[int] = ()
) -> tuple[tuple[Finding, ...], dict[int, tuple[str, int]]]:
    """The findings, each naming the file and line of its event, and the
    (file, line) of the events at `seqs`.

    A finding with a seq names the line of that seq (the first line that
    has it); one of a hand without a seq (HAND_INCOMPLETE), the hand's last
    event; one of neither (MATCH_INCOMPLETE), the match's last event. A
    finding that already names its line keeps it. One pass over the
    records, and none if there is nothing to place.

    >>> from replay.reader import parse_line
    >>> recs = [parse_line('{"type":"pass","match":"m","seq":%d,"ts":"2026-11-02T18:04:05Z",'
    ...                    '"hand":1,"seat":0}' % q, "a.jsonl", q + 1) for q in (5, 6)]
    >>> fs, _ = locate([Finding("FALSE_PASS", "x", 1, 6), Finding("HAND_INCOMPLETE", "y", 1)], recs)
    >>> [(f.file, f.line) for f in fs]
    [('a.jsonl', 7), ('a.jsonl', 7)]
    """
    loose = [f for f in findings if f.file is None]
    if not loose and not seqs:
        return tuple(findings), {}
    want = set(seqs) | {f.seq for f in loose if f.seq is not None}
    hands = {f.hand for f in loose if f.seq is None and f.hand is not None}
    at: dict[int, tuple[str, int]] = {}
    last_of: dict[int | None, tuple[int, str, int]] = {}  # hand (None: any) -> (seq, file, line)
    for rec in records:
        seq: int | None
        if isinstance(rec, EventLine):
            seq, hand = rec.event.seq, getattr(rec.event, "hand", None)
        else:
            seq, hand = rec.seq, rec.hand
        if seq is None:
            continue
        if seq in want and seq not in at:
            at[seq] = (rec.file, rec.line)
        for key in (None, hand) if hand in hands else (None,):
            got = last_of.get(key)
            if got is None or seq > got[0]:
                last_of[key] = (seq, rec.file, rec.line)
    out = []
    for f in findings:
        if f.file is None:
            place = at.get(f.seq) if f.seq is not None else None
            if place is None:
                got = last_of.get(f.hand if f.seq is None else None) or last_of.get(None)
                place = got[1:] if got is not None else None
            if place is not None:
                f = replace(f, file=place[0], line=place[1])
        out.append(f)
    return tuple(out), at
