"""What validation produces: findings, replayed moves, hand and match reports.

These frozen values are the validator's output, the store's input and the
JSON contract of `replay validate --json` (`ValidationReport.to_json()`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Literal, NamedTuple

Severity = Literal["error", "warning"]


class FindingCode(StrEnum):
    """Every finding code of the table-log spec, in the spec's order.

    A code is its own name as a string: it prints, compares and serialises as one.

    >>> FindingCode.SEQ_GAP == "SEQ_GAP", f"{FindingCode.SEQ_GAP}", CODES["SEQ_GAP"]
    (True, 'SEQ_GAP', 'error')
    """

    MALFORMED_LINE = "MALFORMED_LINE"
    SCHEMA_ERROR = "SCHEMA_ERROR"
    UNKNOWN_EVENT = "UNKNOWN_EVENT"
    RULES_UNKNOWN = "RULES_UNKNOWN"
    SEQ_GAP = "SEQ_GAP"
    SEQ_DUPLICATE = "SEQ_DUPLICATE"
    SEQ_REPEATED = "SEQ_REPEATED"
    TIME_ORDER = "TIME_ORDER"
    MATCH_INCOMPLETE = "MATCH_INCOMPLETE"
    HAND_INCOMPLETE = "HAND_INCOMPLETE"
    COMMIT_MISSING = "COMMIT_MISSING"
    REVEAL_MISSING = "REVEAL_MISSING"
    REVEAL_EARLY = "REVEAL_EARLY"
    COMMIT_MISMATCH = "COMMIT_MISMATCH"
    SEED_REUSED = "SEED_REUSED"
    DEAL_MISMATCH = "DEAL_MISMATCH"
    DRAW_MISMATCH = "DRAW_MISMATCH"
    LEAD_DRAW_MISMATCH = "LEAD_DRAW_MISMATCH"
    WRONG_LEADER = "WRONG_LEADER"
    WRONG_OPENING = "WRONG_OPENING"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    TILE_NOT_IN_HAND = "TILE_NOT_IN_HAND"
    TILE_DOES_NOT_FIT = "TILE_DOES_NOT_FIT"
    FALSE_PASS = "FALSE_PASS"
    ILLEGAL_DRAW = "ILLEGAL_DRAW"
    DRAWN_TILE_NOT_PLAYED = "DRAWN_TILE_NOT_PLAYED"
    LEAD_YIELD_INVALID = "LEAD_YIELD_INVALID"
    REDEAL_INVALID = "REDEAL_INVALID"
    EVENT_AFTER_END = "EVENT_AFTER_END"
    HAND_NOT_OVER = "HAND_NOT_OVER"
    RESULT_MISMATCH = "RESULT_MISMATCH"
    POINTS_MISMATCH = "POINTS_MISMATCH"
    SCORE_MISMATCH = "SCORE_MISMATCH"
    MATCH_END_MISMATCH = "MATCH_END_MISMATCH"
    NOTE_MISMATCH = "NOTE_MISMATCH"
    REMATCH_UNKNOWN = "REMATCH_UNKNOWN"
    INTERNAL_ERROR = "INTERNAL_ERROR"


#: Every finding code with its severity.
CODES: Final[dict[str, Severity]] = {
    FindingCode.MALFORMED_LINE: "error",
    FindingCode.SCHEMA_ERROR: "error",
    FindingCode.UNKNOWN_EVENT: "error",
    FindingCode.RULES_UNKNOWN: "error",
    FindingCode.SEQ_GAP: "error",
    FindingCode.SEQ_DUPLICATE: "error",
    FindingCode.SEQ_REPEATED: "warning",
    FindingCode.TIME_ORDER: "warning",
    FindingCode.MATCH_INCOMPLETE: "warning",
    FindingCode.HAND_INCOMPLETE: "error",
    FindingCode.COMMIT_MISSING: "error",
    FindingCode.REVEAL_MISSING: "error",
    FindingCode.REVEAL_EARLY: "error",
    FindingCode.COMMIT_MISMATCH: "error",
    FindingCode.SEED_REUSED: "error",
    FindingCode.DEAL_MISMATCH: "error",
    FindingCode.DRAW_MISMATCH: "error",
    FindingCode.LEAD_DRAW_MISMATCH: "error",
    FindingCode.WRONG_LEADER: "error",
    FindingCode.WRONG_OPENING: "error",
    FindingCode.NOT_YOUR_TURN: "error",
    FindingCode.TILE_NOT_IN_HAND: "error",
    FindingCode.TILE_DOES_NOT_FIT: "error",
    FindingCode.FALSE_PASS: "error",
    FindingCode.ILLEGAL_DRAW: "error",
    FindingCode.DRAWN_TILE_NOT_PLAYED: "error",
    FindingCode.LEAD_YIELD_INVALID: "error",
    FindingCode.REDEAL_INVALID: "error",
    FindingCode.EVENT_AFTER_END: "error",
    FindingCode.HAND_NOT_OVER: "error",
    FindingCode.RESULT_MISMATCH: "error",
    FindingCode.POINTS_MISMATCH: "error",
    FindingCode.SCORE_MISMATCH: "error",
    FindingCode.MATCH_END_MISMATCH: "error",
    FindingCode.NOTE_MISMATCH: "warning",
    FindingCode.REMATCH_UNKNOWN: "warning",
    FindingCode.INTERNAL_ERROR: "error",
}

#: Findings of one code a match lists one by one; past them, one more finding
#: of that code counts the rest (a log repeating one line a million times is a
#: million SEQ_REPEATED, which no page could list).
FINDINGS_PER_CODE: Final = 100


def cap_findings(findings: Sequence[Finding], cap: int = FINDINGS_PER_CODE) -> tuple[Finding, ...]:
    """The first `cap` findings of each code, in order, then for each code
    with more one finding that counts them, placed at the first one left out.

    >>> fs = [Finding("SEQ_REPEATED", f"seq 3 appears twice (f:{n})", 1, 3, "f", n) for n in range(5, 10)]
    >>> [f.message for f in cap_findings(fs, 2)][2]
    '3 more SEQ_REPEATED findings of this match are not listed one by one (f, lines 7 to 9)'
    """
    counts: dict[str, int] = {}
    out: list[Finding] = []
    over: dict[str, tuple[Finding, Finding]] = {}
    for f in findings:
        n = counts[f.code] = counts.get(f.code, 0) + 1
        if n <= cap:
            out.append(f)
        else:
            first = over[f.code][0] if f.code in over else f
            over[f.code] = (first, f)
    for code, (first, last) in over.items():
        more = counts[code] - cap
        where = ""
        if first.file is not None and first.line is not None:
            span = f"line {first.line}" if more == 1 else f"lines {first.line} to {last.line}"
            files = first.file if last.file == first.file else f"{first.file} and more"
            where = f" ({files}, {span})"
        hand = first.hand if first.hand == last.hand else None
        out.append(Finding(code, f"{more:,} more {code} findings of this match are not listed one by one{where}",
                           hand, None, first.file, first.line, first.match))
    return tuple(out)


#: Codes about the server's claims; an error in play silences them for the hand.
CLAIM_CODES: Final = frozenset(
    {
        FindingCode.RESULT_MISMATCH,
        FindingCode.POINTS_MISMATCH,
        FindingCode.SCORE_MISMATCH,
        FindingCode.HAND_NOT_OVER,
        FindingCode.NOTE_MISMATCH,
    }
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found, located by match/hand/seq and, where known, file/line."""

    code: str
    message: str
    hand: int | None = None
    seq: int | None = None
    file: str | None = None
    line: int | None = None
    match: str | None = None

    @property
    def severity(self) -> Severity:
        return CODES[self.code]

    def to_json(self, *, top_level: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "hand": self.hand,
            "seq": self.seq,
            "message": self.message,
        }
        if top_level or self.file is not None:
            out["file"] = self.file
            out["line"] = self.line
        return out


class MoveRecord(NamedTuple):
    """One replayed play, pass, draw or lead yield, with what it meant.

    A NamedTuple rather than a dataclass: a log has tens of millions of
    moves, and a tuple is made five times faster.
    """

    hand: int
    ply: int  # 1-based within the hand
    seq: int
    seat: int
    kind: Literal["play", "pass", "draw", "yield"]
    tile: int | None  # tile id for play and draw
    end: str | None  # "left" / "right" for a play on the line, None for the first tile
    left: int  # ends after the move (-1 before the first tile)
    right: int
    pips: tuple[int, ...]  # pips left per seat after the move
    stock: int  # boneyard tiles left after the move
    legal: int  # distinct legal moves the seat had (the alternatives)
    forced: bool  # only one legal move
    legal_moves: tuple[str, ...] = ()  # e.g. ("63:left", "PASS")
    error: str | None = None  # the finding code of this move, if it was bad
    ts: str = ""


@dataclass(frozen=True, slots=True)
class HandReport:
    """A hand as recomputed, with the server's claims beside it."""

    hand: int
    result: Literal["domino", "block", "cancelled"] | None  # None: never finished
    winner: int | None
    points: tuple[int, ...]
    score: tuple[int, ...]
    notes: tuple[str, ...] = ()
    leader: int | None = None
    opener: int | None = None
    blocker: int | None = None
    hands: tuple[tuple[int, ...], ...] = ()  # dealt tiles per seat
    stock: tuple[int, ...] = ()  # boneyard in order (derived)
    pips: tuple[int, ...] = ()  # pips left per seat at the end
    client_seeds: tuple[str, ...] = ()
    server_seed: str | None = None
    seed_ok: bool | None = None  # chain verified (None: not revealed)
    deal_ok: bool | None = None  # logged deal equals the derivation (None: not checkable)
    play_ok: bool = True  # no error in play
    claimed_result: str | None = None
    claimed_winner: int | None = None
    claimed_points: tuple[int, ...] | None = None
    claimed_score: tuple[int, ...] | None = None
    claimed_notes: tuple[str, ...] | None = None
    started: str = ""  # ts of the deal
    ended: str = ""  # ts of hand_end / hand_cancelled
    moves: tuple[MoveRecord, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "hand": self.hand,
            "result": self.result,
            "winner": self.winner,
            "points": list(self.points),
            "score": list(self.score),
        }


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """Who sat where from which hand on."""

    seat: int
    player: str
    name: str | None = None
    bot: bool = False
    from_hand: int = 1
    seq: int = 0


@dataclass(frozen=True, slots=True)
class MatchReport:
    """One match: verdict, recomputed hands and outcome, findings."""

    match: str
    verdict: Literal["valid", "invalid", "unreadable"]
    profile: str | None = None
    table: str | None = None
    rules: dict[str, Any] | None = None  # resolved options, JSON values
    players: int | None = None
    hands: tuple[HandReport, ...] = ()
    result: str | None = None  # "win" / "tie" / "abandoned"; None while unfinished
    winner: int | None = None
    score: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    claimed_result: str | None = None
    claimed_winner: int | None = None
    claimed_score: tuple[int, ...] | None = None
    claimed_notes: tuple[str, ...] | None = None
    findings: tuple[Finding, ...] = ()
    seats: tuple[SeatRecord, ...] = ()
    anchor: str | None = None
    beacon: str | None = None
    rematch_of: str | None = None
    started: str = ""
    ended: str = ""
    files: tuple[str, ...] = ()
    events: int = 0
    lead_draw: tuple[tuple[int, int], ...] = ()
    estimates: tuple[str, ...] = ()  # options of the profile the rules page marks (estimate)
    # where each seed was read: (hand, file, line), hand 0 the anchor (match_start),
    # else the hand's reveal; a SEED_REUSED finding names that line
    seed_lines: tuple[tuple[int, str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "match": self.match,
            "profile": self.profile,
            "verdict": self.verdict,
            # a hand that never finished has no result to report (it stays in the store)
            "hands": [h.to_json() for h in self.hands if h.result is not None],
            "result": self.result,
            "winner": self.winner,
            "score": list(self.score),
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass(frozen=True, slots=True)
class FileReport:
    path: str
    lines: int
    bad_lines: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "lines": self.lines, "bad_lines": self.bad_lines}


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """The whole answer of `replay validate`."""

    files: tuple[FileReport, ...] = ()
    findings: tuple[Finding, ...] = ()  # lines that belong to no match
    matches: tuple[MatchReport, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(m.verdict == "valid" for m in self.matches) and not any(
            f.severity == "error" for f in self.findings
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "files": [f.to_json() for f in self.files],
            "findings": [f.to_json(top_level=True) for f in self.findings],
            "matches": [m.to_json() for m in self.matches],
        }
