"""What validation produces: findings, replayed moves, hand and match reports.

These frozen values are the validator's output, the store's input and the
JSON contract of `replay validate --json` (`ValidationReport.to_json()`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Severity = Literal["error", "warning"]

#: Every finding code of the table-log spec with its severity.
CODES: dict[str, Severity] = {
    "MALFORMED_LINE": "error",
    "SCHEMA_ERROR": "error",
    "UNKNOWN_EVENT": "error",
    "RULES_UNKNOWN": "error",
    "SEQ_GAP": "error",
    "SEQ_DUPLICATE": "error",
    "SEQ_REPEATED": "warning",
    "TIME_ORDER": "warning",
    "MATCH_INCOMPLETE": "warning",
    "HAND_INCOMPLETE": "error",
    "COMMIT_MISSING": "error",
    "REVEAL_MISSING": "error",
    "REVEAL_EARLY": "error",
    "COMMIT_MISMATCH": "error",
    "SEED_REUSED": "error",
    "DEAL_MISMATCH": "error",
    "DRAW_MISMATCH": "error",
    "LEAD_DRAW_MISMATCH": "error",
    "WRONG_LEADER": "error",
    "WRONG_OPENING": "error",
    "NOT_YOUR_TURN": "error",
    "TILE_NOT_IN_HAND": "error",
    "TILE_DOES_NOT_FIT": "error",
    "FALSE_PASS": "error",
    "ILLEGAL_DRAW": "error",
    "DRAWN_TILE_NOT_PLAYED": "error",
    "LEAD_YIELD_INVALID": "error",
    "REDEAL_INVALID": "error",
    "EVENT_AFTER_END": "error",
    "HAND_NOT_OVER": "error",
    "RESULT_MISMATCH": "error",
    "POINTS_MISMATCH": "error",
    "SCORE_MISMATCH": "error",
    "MATCH_END_MISMATCH": "error",
    "NOTE_MISMATCH": "warning",
    "REMATCH_UNKNOWN": "warning",
}

#: Codes about the server's claims; an error in play silences them for the hand.
CLAIM_CODES = frozenset(
    {"RESULT_MISMATCH", "POINTS_MISMATCH", "SCORE_MISMATCH", "HAND_NOT_OVER", "NOTE_MISMATCH"}
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
