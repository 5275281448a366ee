"""The JSON the API serves, as pydantic models: what /openapi.json documents.

The routes build their JSON themselves (orjson over the queries' rows) and
name one of these as their `response_model`: FastAPI then documents the
shape without touching the bytes served, and the tests hold the two
together (tests/test_schemathesis.py checks every response against its
schema). A field's name is the JSON's; docs/api.md maps them to the words
of the pages.

Every model allows fields it does not name (`additionalProperties`): a
client should ignore a field it does not know, and a new one may appear.
Nested reports whose shape is documented elsewhere (docs/fairness.md,
docs/insights.md) are typed as objects here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Accepted", "Alerts", "AnalysisHand", "Calibration", "CertificateKey", "CertificateRow", "Certificates",
    "Deleted", "Error", "Fairness", "FindingRow", "Findings", "Hand", "HandRow", "Hands", "HistoryRow",
    "Leaderboard", "MatchDetail", "Pair", "MatchRow", "Matches", "MoveRow", "Moves", "PlayerMatchRow", "PlayerReport",
    "PlayerRow", "Players", "Suspect", "Suspicious", "Summary", "Upload",
]  # fmt: skip


class Shape(BaseModel):
    """A JSON object of the API: its named fields, and maybe more."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Error(Shape):
    """An error: what went wrong, in words (a 422 of a bad parameter may hold a list)."""

    detail: str | list[Any]


# --- lists ------------------------------------------------------------------------------


class Paged(Shape):
    total: int = Field(description="rows the filters select, over every page")
    page: int = Field(description="this page, from 1")
    pages: int = Field(description="pages of `per_page` rows (at least 1)")
    per_page: int


class Sorted(Paged):
    sort: str | None = Field(description="the column sorted by; null: the list's own order")
    order: str | None = Field(description="`asc` or `desc`; null with no `sort`")


class MatchRow(Shape):
    """A match as the lists show it."""

    match: str = Field(description="the match id")
    table_id: str | None = Field(description="the table (page: Table)")
    profile: str | None = Field(description="the rules profile, e.g. `international`")
    verdict: str = Field(description="`valid`, `invalid` (a finding of severity error) or `unreadable`")
    result: str | None = Field(description="how the match ended (`win`, `tie`, `cancelled`); null while on")
    winner: int | None = Field(description="the winning side, from 0 (page: the side's seats)")
    score: list[int] | None = Field(description="final points by side")
    players: int | None = Field(description="seats at the table")
    hands: int | None
    errors: int | None = Field(description="findings of severity error")
    warnings: int | None = Field(description="findings of severity warning")
    started: str | None = Field(description="UTC, `YYYY-MM-DD HH:MM`")
    ended: str | None


class PlayerMatchRow(MatchRow):
    """A match of the list filtered by `player`, with how that player did in it
    (the first player the filter names who sat there; the player's last hand)."""

    player: str | None = Field(description="the player id the row is seen from")
    player_name: str | None
    seat: int | None = Field(description="the player's seat in their last hand of the match")
    outcome: str | None = Field(description="`won`, `lost`, or the match's result when no side won "
                                            "(`abandoned`); null while the match is on")
    partner: str | None = Field(description="the partner's player id; null in a game of no pairs")
    partner_name: str | None


class Matches(Sorted):
    matches: list[PlayerMatchRow | MatchRow] = Field(
        description="with the `player` filter, each row also says how that player did")


class CodeCount(Shape):
    code: str
    severity: str
    n: int


class Summary(Shape):
    """The home page: the store's counts and the matches worth a look."""

    counts: dict[str, int] = Field(description="matches, valid, invalid, unreadable, unfinished, hands, "
                                               "findings, errors, players, log_files")
    invalid: list[MatchRow] = Field(description="the latest 20 matches that are not valid")
    recent: list[MatchRow] = Field(description="the latest 20 matches")
    codes: list[CodeCount] = Field(description="the most frequent finding codes")
    refused: list[str] | None = Field(None, description="to the token holder only: spool batches refused")


class FindingRow(Shape):
    """A finding: something a log got wrong, with where."""

    match: str | None = Field(description="null for a line that names no match")
    hand: int | None
    seq: int | None = Field(description="the log line's `seq`")
    ply: int | None = Field(None, description="the replay step the finding is shown at")
    code: str = Field(description="e.g. `COMMIT_MISMATCH` (docs/table-log.md lists them)")
    severity: str = Field(description="`error` or `warning`")
    message: str
    file: str | None = Field(description="the log file, as it was given to ingest")
    line: int | None = Field(description="the line of `file`, from 1")


class Findings(Sorted):
    findings: list[FindingRow]
    codes: list[CodeCount] = Field(description="every code stored, with its count")


class PlayerRow(Shape):
    player: str = Field(description="the player id")
    name: str | None = Field(description="the name last seen")
    bot: bool | None
    matches: int | None
    first_seen: str | None
    last_seen: str | None


class Players(Sorted):
    players: list[PlayerRow]


class HandRow(Shape):
    """A hand of the downloads. While a hand is on, its deal stays null."""

    match: str
    hand: int
    started: str | None = Field(description="UTC, ISO 8601 to the millisecond")
    ended: str | None
    result: str | None = Field(description="`domino` (a seat went out), `block`, `cancelled`; null while on")
    winner: int | None = Field(description="the winning side")
    points: list[int] | None = Field(description="points the hand gave each side")
    score: list[int] | None = Field(description="the match score by side after the hand")
    notes: list[Any] | None
    claimed_result: str | None = Field(description="what the log claimed (the desk recomputes it)")
    claimed_winner: int | None
    claimed_points: list[int] | None
    claimed_score: list[int] | None
    claimed_notes: list[Any] | None
    leader: int | None = Field(description="the seat to lead")
    opener: int | None = Field(description="the seat that played first")
    blocker: int | None = Field(description="the seat whose move blocked the game (page: tranque)")
    plies: int | None
    seed_ok: bool | None
    deal_ok: bool | None
    play_ok: bool | None
    dealt: list[list[str]] | None = Field(description="each seat's tiles, `62` for [6|2]")
    boneyard: list[str] | None = Field(description="the tiles left to draw")
    pips_left: list[int] | None


class Hands(Paged):
    hands: list[HandRow]


class MoveRow(Shape):
    """A move of the downloads, with its grade once the hand is analysed.

    Values are points from the mover's side. `graded` says on what: `could
    know` (the mean over the deals the mover could face) or `perfect
    information` (the exact value, the hidden tiles known). The analysis
    columns are null for a move not graded (not analysed, or forced has no
    class)."""

    match: str
    hand: int
    ply: int = Field(description="the replay step, from 1")
    seq: int | None
    ts: str | None
    seat: int | None
    kind: str = Field(description="`play`, `draw`, `pass`, ...")
    tile: str | None = Field(description="`62` for [6|2]; a drawn tile is null while the hand is on")
    end: str | None = Field(description="the end played on: `left` or `right`")
    left_end: int | None = Field(description="the line's left end after the move (pips)")
    right_end: int | None
    stock: int | None = Field(description="tiles left to draw")
    legal: int | None = Field(description="legal moves the seat had")
    forced: bool | None = Field(description="the only legal move")
    legal_moves: list[str] | None = Field(description="`62:left`, `PASS`, `DRAW`")
    pips_left: list[int] | None
    error: str | None
    value: float | None = Field(None, description="the played move's value (page: value), mover's side")
    best: str | None = Field(None, description="the best move, `62:left` (page: best move)")
    lost: float | None = Field(None, description="points lost against the best move (page: lost)")
    class_: str | None = Field(None, alias="class",
                               description="`inaccuracy`, `mistake` or `blunder`; null for a good or forced move")
    graded: str | None = Field(None, description="`could know` or `perfect information`")


class Moves(Paged):
    moves: list[MoveRow]


# --- a match, a hand ------------------------------------------------------------------


class Seat(Shape):
    seat: int
    player: str | None
    name: str | None
    bot: bool | None


class AnalysisHand(Shape):
    skipped: str | None = Field(None, description="why a hand has no grades (cancelled, an illegal move)")
    first_seat: int | None = None
    par: list[int] | None = Field(None, description="each seat's value at the start")
    result: list[int] | None = None
    accuracy: list[float | None] | None = Field(None, description="on what each seat could know, 0-100")
    accuracy_dd: list[float | None] | None = Field(None, description="under perfect information, 0-100")


class MatchHand(Shape):
    hand: int
    result: str | None
    winner: int | None
    points: list[int] | None
    score: list[int] | None
    seats: list[Seat] = Field(description="who sat where in this hand")
    findings: list[Any]
    claims_differ: bool | None = Field(None, description="the log's claimed result is not the recomputed one")
    analysis: AnalysisHand | None = None


class MatchDetail(Shape):
    """A match's score sheet: its rules, seats, hands, findings and grades."""

    match: dict[str, Any] = Field(description="the match row, its rules and its claims")
    accuracy: list[dict[str, Any]] = Field(description="each seat's accuracy over the analysed hands")
    costliest: list[dict[str, Any]] = Field(description="the moves that lost the most points")
    seats: list[Seat]
    seat_changes: list[Any]
    hands: list[MatchHand]
    findings: list[FindingRow]
    sides: list[str] = Field(description="each side's seats, e.g. `seats 0+2`")


class Ply(Shape):
    """A step of the replay: the move, then the board after it."""

    ply: int
    kind: str
    title: str = Field(description="the move in words")
    line: list[str] = Field(description="the tiles on the line, left to right")
    hands: list[list[str] | None] | None = Field(None, description="each seat's tiles (null: hidden from this view)")


class HandInfo(Shape):
    match: str
    hand: int
    finished: bool
    analysis: dict[str, Any] | None = Field(None, description="the hand's grades (docs/analysis.md)")


class Hand(Shape):
    """A hand's replay, step by step (`view=seatN`: only what seat N knew)."""

    info: HandInfo
    seats: list[Seat]
    view: str
    places: dict[str, str]
    plies: list[Ply]


class Deleted(Shape):
    deleted: str = Field(description="the match id deleted")


# --- players --------------------------------------------------------------------------


class PlayerReport(Shape):
    """A player's report (docs/insights.md): results, partners, deal luck, trend,
    ratings and skill. Filters (profile, dates, partner) narrow it."""

    player: str
    name: str | None
    bot: bool | None
    matches: int
    hands: int
    wins: int
    losses: int
    ties: int
    points_per_hand: float | None
    partners: list[dict[str, Any]]
    profiles: list[dict[str, Any]]
    deal_luck: dict[str, Any] | None
    trend: list[dict[str, Any]]
    cumulative: dict[str, Any]
    ratings: dict[str, Any]
    skill: dict[str, Any]


# --- upload ---------------------------------------------------------------------------


class UploadCounts(Shape):
    lines: int
    bad_lines: int
    matches: int
    findings: int
    errors: int


class Graded(Shape):
    finished: int = Field(description="hands over (those that can be graded)")
    graded: int = Field(description="of those, hands whose moves are graded")
    sampled: int = Field(description="of those, hands graded on what each player could know (sampled deals)")


class UploadedMatch(MatchRow):
    url: str = Field(description="the match's page")
    analysis: Graded = Field(description="how far the grading of its moves is")


class Upload(Shape):
    """What an upload stored: the file, its matches and their verdicts."""

    file: str
    size: int = Field(description="bytes received")
    sha256: str
    seconds: float = Field(description="the time to validate and store it")
    already_stored: bool = Field(description="the same file was stored before (nothing new)")
    matches: list[UploadedMatch]
    counts: UploadCounts
    problems: list[dict[str, Any]] = Field(description="lines of no match and what is wrong with them")
    analysis: str = Field(description="when the uploaded matches get their grades, in words")
    warning: str | None = Field(None, description="no match in the file: what was found instead")


# --- certificates ---------------------------------------------------------------------


class CertificateKey(Shape):
    algorithm: str
    key_id: str
    pem: str
    raw_base64: str


class CertificateRow(Shape):
    id: str
    issued: str | None
    date_from: str | None = Field(alias="from")
    date_to: str | None = Field(alias="to")
    table: str | None
    profile: str | None
    matches: int | None
    hands: int | None
    verdict: str | None
    complete: bool | None
    merkle_root: str | None
    files: list[str]
    downloads: dict[str, str] = Field(description="each file's address")


class Certificates(Shape):
    public_key: CertificateKey | None
    certificates: list[CertificateRow]


# --- fairness, ratings, signals ---------------------------------------------------------


class Alerts(Shape):
    alerts: list[dict[str, Any]] = Field(description="tables whose latest deals failed the monitor's test")
    monitor: dict[str, Any] = Field(description="the monitor's window, step and false-alarm rate")


class Fairness(Shape):
    """The fairness audit of the hands the filters select (docs/fairness.md)."""

    filters: dict[str, Any]
    verdict: str
    window: dict[str, Any]
    deterministic: dict[str, Any]
    battery: dict[str, Any] | None
    luck: dict[str, Any] | None
    charts: dict[str, Any] | None
    notes: list[Any]


class Leaderboard(Shape):
    """Ratings (docs/insights.md): `rating` is the conservative estimate (mu - 3 sigma)."""

    kind: str
    pool: str
    sort: str
    order: str
    bots: bool
    min_matches: int
    q: str | None
    page: int
    total: int
    pages: int
    rows: list[dict[str, Any]]


class Pair(Shape):
    """Two players as partners: hands together, their pair rating and history,
    the opponents they met, their matches and their skill together."""

    players: list[dict[str, Any]]
    together: dict[str, Any]
    rated: dict[str, Any] | None
    standings: list[dict[str, Any]]
    history: list[dict[str, Any]]
    opponents: list[dict[str, Any]]
    matches: list[dict[str, Any]]
    skill: dict[str, Any] | None


class HistoryRow(Shape):
    pos: int
    match: str
    ended: str | None
    outcome: str | None
    rating_before: float | None
    rating: float | None


class Calibration(Shape):
    """How well the ratings foretold held-out matches (log loss and Brier score)."""

    matches: int
    held_out: int | None = None
    holdout: float | None = None
    train: dict[str, Any] | None = None
    groups: dict[str, Any] | None = None
    reliability: Any = None


class Suspicious(Shape):
    """Both cheat signals of every player with analysed hands (docs/insights.md)."""

    alpha: float
    min_hands: int
    players: int
    flagged: int | None
    pool: dict[str, Any]
    graded: dict[str, Any] | None = None
    rows: list[dict[str, Any]]


class Suspect(Shape):
    """One player's cheat signals and the evidence behind them."""

    player: str
    name: str | None
    flagged: bool | None
    omniscience: dict[str, Any] | None
    peeking: dict[str, Any] | None
    audit: dict[str, Any] | None
    evidence: list[dict[str, Any]]


class Accepted(Shape):
    """An audit started in the background; `status` is where to follow it."""

    player: str
    state: str
    hands: int
    samples: int
    status: str


# --- what the routes name besides a model -------------------------------------------------

_ERRORS = {
    400: "the body cannot be read (broken JSON, multipart or gzip)",
    401: "no token, or the wrong one (a write needs `Authorization: Bearer <token>`)",
    403: "writes are off: the server was started without a token",
    404: "nothing by that id",
    409: "not now: a hand is still on, or another audit is running",
    413: "the upload is too large",
    415: "not a .jsonl or .jsonl.gz file",
    422: "a parameter is wrong: `detail` says which (a list for a malformed one, words for one out of place)",
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The error answers an operation may give, for its `responses`."""
    return {code: {"model": Error, "description": _ERRORS[code]} for code in codes}


#: A write's errors: the token's, then the body's size.
WRITE_ERRORS = errors(401, 403, 413)

#: The answer of a download route: CSV (text) or Parquet (binary), by `fmt`.
DOWNLOAD: dict[int | str, dict[str, Any]] = {200: {
    "description": "every row, as CSV (UTF-8, a header line) or Parquet, by the extension asked for",
    "content": {"text/csv": {"schema": {"type": "string"}},
                "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}}},
}}

#: The API's groups, in the order /docs lists them.
TAGS: list[dict[str, str]] = [
    {"name": "summary", "description": "The store at a glance (the home page)."},
    {"name": "matches", "description": "Matches: the list, a score sheet, the log, deleting one."},
    {"name": "hands", "description": "Hands: the list, and a hand's replay step by step."},
    {"name": "moves", "description": "Every move, with its grade once its hand is analysed."},
    {"name": "players", "description": "Players: the list and search, a player's report."},
    {"name": "findings", "description": "What the logs got wrong, and where."},
    {"name": "upload", "description": "Storing a table log (needs the write token)."},
    {"name": "fairness", "description": "Are the deals fair: the audit and the monitor's alerts."},
    {"name": "ratings", "description": "Ratings of players and pairs, their history and calibration."},
    {"name": "skill", "description": "How well a player plays, by phase, profile and month."},
    {"name": "suspicious", "description": "Cheat signals, the evidence, and partner-peeking audits."},
    {"name": "certificates", "description": "Signed fairness certificates of a period."},
]

#: What /docs says above the operations.
DESCRIPTION = """\
Every page of the desk has a JSON twin under `/api/`; every list also
downloads as CSV or Parquet (`/api/<list>.csv`, `.parquet`) with the same
filters. Writes (POST, DELETE) need the server's token: press "Authorize"
and give it (it is sent as `Authorization: Bearer <token>`). Tiles are
written `62` for [6|2]; values are points, from the side the field names.
"""
