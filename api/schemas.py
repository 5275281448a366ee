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
    "Accepted", "Alerts", "Alternative", "AnalysisHand", "AnalysisPly", "Calibration", "CertificateKey",
    "CertificateRow", "Certificates", "CodeCount", "CostlyMove", "DESCRIPTION", "DOWNLOAD", "DealLuck",
    "Deleted", "Error", "Fairness", "FindingRow", "Findings", "Graded", "Grading", "Hand", "HandAnalysis", "HandInfo",
    "HandRow", "Hands", "HistoryRow", "Leaderboard", "MatchDetail", "MatchFinding", "MatchHand", "MatchInfo",
    "MatchRow", "Matches", "MoveRow", "Moves", "Pair", "Partner", "PlayerMatchRow", "PlayerReport",
    "PlayerRow", "Players", "Ply", "ProfilePlayed", "RatingRow", "Seat", "SeatAccuracy", "Signal",
    "SignalRow", "Summary", "Suspect", "Suspicious", "TAGS", "TrendPoint", "Upload", "UploadCounts",
    "UploadedMatch", "WRITE_ERRORS", "errors",
]  # fmt: skip


class Shape(BaseModel):
    """A JSON object of the API: its named fields, and maybe more."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Error(Shape):
    """An error: what went wrong, in words (a 422 of a bad parameter may hold a list)."""

    detail: str | list[Any]


class Grading(Shape):
    """How far the grade on what each player could know has got, over the
    whole store (api.grading): the server adds it in the background after
    ingest graded every move under perfect information."""

    graded: int = Field(description="decisions graded on what the mover could know")
    total: int = Field(description="decisions analysed (graded under perfect information)")
    left: int = Field(description="total - graded")
    state: str = Field(description="`done`; `grading` (a pace and a time left); `measuring` (the background "
                                   "grading has no pace yet: no time left is given); `off` (this server does "
                                   "not grade in the background)")
    per_second: float | None = Field(description="decisions graded a second over the last ten minutes of grading")
    seconds_left: int | None = Field(description="left / per_second, rounded; null when no pace is known")
    first: int | None = Field(None, description="on a player's report and cheat signals: how many of the "
                                                "player's newest matches without the grade were asked to be "
                                                "graded before the rest of the store (at most 8 at a time)")


class MatchGrading(Shape):
    """How far one match's grade on what each player could know has got
    (api.grading.match_progress): a match opened without it is graded
    before anything else."""

    state: str = Field(description="`done` (every analysed hand has it); `grading` (being graded now); `next` "
                                   "(begins within seconds); `off` (this server does not grade in the background)")
    hands: int = Field(description="the match's analysed hands")
    sampled_hands: int = Field(description="of those, graded on what each player could know")
    seconds: float | None = Field(description="seconds since its grading began (`grading` only)")
    seconds_left: int | None = Field(description="seconds its grading should still take, from the CPU time its "
                                                 "hands are predicted to cost (good to a factor of two; `grading` "
                                                 "only)")


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


class MatchInfo(MatchRow):
    """The match row with its rules and the log's claims."""

    notes: list[Any] | None = None
    claimed_result: str | None = Field(None, description="what the log claimed (the desk recomputes it)")
    claimed_winner: int | None = None
    claimed_score: list[int] | None = None
    rules: dict[str, Any] | None = Field(None, description="the profile's options as applied (docs/rules.md)")
    teams: str | None = Field(None, description="`pairs` (partners across the table) or `individual`")
    events: int | None = Field(None, description="log lines of the match")


class SeatAccuracy(Shape):
    """A seat's accuracy over the match's analysed hands (0-100: points kept of those at stake)."""

    seat: int
    hands: int | None = Field(description="hands analysed")
    sampled_hands: int | None = Field(description="of those, graded on what the seat could know")
    decisions: int | None = Field(description="moves that were a choice (not forced)")
    accuracy: float | None = Field(description="on what the seat could know (page: Accuracy)")
    accuracy_dd: float | None = Field(description="under perfect information (page: Accuracy (perfect information))")
    inaccuracies: int | None
    mistakes: int | None
    blunders: int | None
    players: list[str] = Field(description="who held the seat")
    holders: list[dict[str, Any]] | None = Field(None, description="the same, each as `player` (id), `name`, `bot`")


class CostlyMove(Shape):
    """One of the moves that lost the most points (page: costliest moves)."""

    hand: int
    ply: int = Field(description="the replay step")
    seat: int
    played: str = Field(description="the move, `62 left`")
    best: str | None = Field(description="the best move of the grade")
    loss: float = Field(description="points lost, on what the mover could know where sampled")
    dd_loss: int | None = Field(description="points lost under perfect information")
    pimc_loss: float | None = Field(description="points lost on what the mover could know (null: not sampled)")
    class_: str | None = Field(alias="class", description="`inaccuracy`, `mistake` or `blunder`")
    graded: str = Field(description="`could know` or `perfect information`")
    player: str | None = Field(description="who held the seat: the name, else the id")
    player_id: str | None = Field(None, description="the id of who held the seat")


class MatchFinding(Shape):
    """A finding of the match, with the replay step it is shown at."""

    code: str
    severity: str
    hand: int | None
    seq: int | None
    ply: int | None = None
    message: str
    file: str | None
    line: int | None


class MatchDetail(Shape):
    """A match's score sheet: its rules, seats, hands, findings and grades."""

    match: MatchInfo
    accuracy: list[SeatAccuracy] = Field(description="each seat's accuracy over the analysed hands")
    costliest: list[CostlyMove] = Field(description="the moves that lost the most points, worst first")
    seats: list[Seat]
    seat_changes: list[Any]
    hands: list[MatchHand]
    findings: list[MatchFinding]
    sides: list[str] = Field(description="each side's seats, e.g. `seats 0+2`")
    grading: Grading | None = Field(None, description="the store's grading on what each player could know")
    match_grading: MatchGrading | None = Field(None, description="this match's grading on what each player "
                                                                 "could know")


class Alternative(Shape):
    """A legal move and its values, points from the mover's side."""

    move: str = Field(description="`62 left`, `pass`, `draw`")
    dd: int | None = Field(description="exact value under perfect information (page: exact)")
    pimc: float | None = Field(description="mean over the deals the mover could face (page: known)")
    pimc_ci: list[float] | None = Field(description="its 95% interval")


class AnalysisPly(Shape):
    """A move graded (replay.analysis; docs/analysis.md)."""

    ply: int
    seat: int
    played: str
    forced: bool
    alternatives: list[Alternative]
    dd: int | None = Field(description="the played move's exact value")
    dd_best: int | None
    dd_loss: int | None = Field(description="points lost under perfect information")
    pimc: float | None = Field(description="the played move's value on what the mover could know")
    pimc_loss: float | None = Field(description="points lost on what the mover could know")
    class_: str | None = Field(alias="class", description="`inaccuracy`, `mistake`, `blunder`, or null")
    samples: int = Field(description="deals sampled (0: perfect information only)")
    exact: bool = Field(description="every deal the mover could face was weighed, not a sample")


class HandAnalysis(AnalysisHand):
    version: int | None = None
    samples: int | None = Field(None, description="deals sampled a decision (0: perfect information only)")
    plies: list[AnalysisPly] = []


class Ply(Shape):
    """A step of the replay: the move, then the board after it. Step 0 is the deal."""

    ply: int
    seq: int | None = Field(None, description="the log line's `seq`")
    seat: int | None = None
    kind: str = Field(description="`deal`, `play`, `pass`, `draw`, ...")
    tile: str | None = Field(None, description="`62` for [6|2]")
    end: str | None = None
    title: str = Field(description="the move in words")
    line: list[str] = Field(description="the tiles on the line, left to right")
    ends: list[int] | None = Field(None, description="the open ends' pips")
    hands: list[list[str] | None] | None = Field(None, description="each seat's tiles (null: hidden from this view)")
    counts: list[int] | None = Field(None, description="tiles each seat holds")
    pips: list[int | None] | None = None
    stock: int | None = Field(None, description="tiles left to draw")
    alternatives: list[dict[str, Any]] | None = None
    forced: bool | None = None
    notes: list[dict[str, Any]] | None = None


class HandInfo(Shape):
    match: str
    hand: int
    profile: str | None = None
    verdict: str | None = None
    started: str | None = None
    finished: bool = Field(description="the hand is over (while on, what no seat may see stays hidden)")
    result: str | None = None
    winner: int | None = None
    points: list[int] | None = None
    score: list[int] | None = None
    prev: int | None = Field(None, description="the previous hand's number")
    next: int | None = Field(None, description="the next hand's number")
    sides: list[str] | None = None
    players: int | None = None
    teams: str | None = None
    analysis: HandAnalysis | None = Field(None, description="the hand's grades (docs/analysis.md)")


class Hand(Shape):
    """A hand's replay, step by step (`view=seatN`: only what seat N knew)."""

    info: HandInfo
    seats: list[Seat]
    view: str = Field(description="`all`, or `seatN`")
    places: dict[str, str] = Field(description="where each seat sits on the drawn table")
    plies: list[Ply]


class Deleted(Shape):
    deleted: str = Field(description="the match id deleted")


# --- players --------------------------------------------------------------------------


class Partner(Shape):
    partner: str
    name: str | None
    bot: bool | None
    hands: int
    wins: int
    losses: int
    pts_for: int | None = Field(description="points for, in hands together")
    pts_against: int | None
    ppf: float | None = Field(description="points for per hand together")


class ProfilePlayed(Shape):
    profile: str | None
    matches: int
    hands: int
    wins: int
    pts_for: int | None


class DealLuck(Shape):
    """Were the player's deals as good as chance deals? Mean pips and doubles
    dealt against what fair deals give, as z-scores."""

    hands: int
    pips_mean: float | None
    pips_expected: float | None
    pips_z: float | None
    doubles_hands: int | None
    doubles_mean: float | None
    doubles_expected: float | None
    doubles_z: float | None


class TrendPoint(Shape):
    bucket: str = Field(description="a stretch of the player's hands")
    hands: int
    points_per_hand: float | None
    win_rate: float | None
    date_from: str | None = Field(None, description="the bucket's first day (UTC), YYYY-MM-DD")
    date_to: str | None = Field(None, description="the bucket's last day (UTC), YYYY-MM-DD")


class PlayerReport(Shape):
    """A player's report (docs/insights.md): results, partners, deal luck, trend,
    ratings and skill. Filters (profile, dates, partner) narrow it."""

    player: str
    name: str | None
    bot: bool | None
    matches: int
    match_wins: int = Field(description="matches won (page: won)")
    match_losses: int
    hands: int
    wins: int = Field(description="hands won")
    losses: int
    ties: int
    points_for: int | None
    points_against: int | None
    points_per_hand: float | None
    points_against_per_hand: float | None
    partners: list[Partner]
    profiles: list[ProfilePlayed]
    deal_luck: DealLuck | None
    trend: list[TrendPoint]
    cumulative: dict[str, Any] = Field(description="running totals by hand, for the chart")
    ratings: dict[str, Any] = Field(description="standings in each pool, the rating's history, the pairs")
    skill: dict[str, Any] = Field(description="accuracy, points lost and luck (docs/insights.md)")
    grading: Grading | None = Field(None, description="the store's grading on what each player could know")


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


class RatingRow(Shape):
    """A player's (or a pair's) rating in a pool."""

    pool: str = Field(description="`*` (every profile) or a profile")
    player: str
    name: str | None
    partner: str | None = Field(description="the partner, in the pairs' board")
    partner_name: str | None
    bot: bool | None
    rating: float = Field(description="Rating: mu - 3 sigma")
    mu: float = Field(description="the skill estimate (page: μ)")
    sigma: float = Field(description="its uncertainty (page: σ)")
    matches: int
    wins: int
    ties: int
    losses: int
    win_rate: float | None
    hands: int | None
    points_per_hand: float | None
    points_against_per_hand: float | None
    first_played: str | None
    last_played: str | None
    place: int | None = None


class Leaderboard(Shape):
    """Ratings (docs/insights.md): `rating` is the conservative estimate (mu - 3 sigma)."""

    kind: str = Field(description="`players` or `pairs`")
    pool: str
    sort: str
    order: str
    bots: bool
    min_matches: int
    q: str | None
    page: int
    total: int
    pages: int
    rows: list[RatingRow]


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
    """A rated match of the player, in the order the matches ended."""

    pos: int
    match: str
    ended: str | None
    profile: str | None = None
    side: int | None = None
    place: int | None = Field(None, description="the side's place in the match, from 1")
    outcome: str | None
    sides: int | None = None
    bot: bool | None = None
    rating_before: float | None
    rating: float | None
    mu: float | None = None
    sigma: float | None = None
    hands: int | None = None
    points_for: int | None = None
    points_against: int | None = None


class Calibration(Shape):
    """How well the ratings foretold held-out matches (log loss and Brier score)."""

    matches: int
    held_out: int | None = None
    holdout: float | None = None
    train: dict[str, Any] | None = None
    groups: dict[str, Any] | None = None
    reliability: Any = None


class Signal(Shape):
    """A cheat signal's test (docs/insights.md)."""

    hands: int | None = None
    decisions: int | None = None
    index: float | None = Field(None, description="the index (page: Omniscience index / Peeking index)")
    t: float | None = None
    p: float | None = None
    p_adjusted: float | None = Field(None, description="p adjusted for testing every player (page: adj. p)")
    flagged: bool | None = None


class SignalRow(Shape):
    player: str
    name: str | None
    bot: bool | None
    matches: int | None
    hands: int | None
    decisions: int | None = Field(description="decisions graded")
    omniscience: Signal | None
    differs: int | None = Field(description="decisions where knowing the hidden tiles changes the best move")
    differs_hit: int | None = Field(description="of those, where it played the perfect-information best")
    differs_rate: float | None
    peeking: Signal | None
    audit: dict[str, Any] | None = Field(description="the latest partner-peeking audit: its state")
    flagged: bool


class Suspicious(Shape):
    """Both cheat signals of every player with analysed hands (docs/insights.md)."""

    alpha: float
    min_hands: int
    players: int
    flagged: int | None = Field(description="players flagged; null while the signals are not computed (no "
                                            "decision graded on what the players could know yet)")
    pool: dict[str, Any]
    graded: dict[str, Any] | None = None
    grading: Grading | None = Field(None, description="the store's grading on what each player could know")
    rows: list[SignalRow]


class Suspect(Shape):
    """One player's cheat signals and the evidence behind them."""

    player: str
    name: str | None
    flagged: bool | None
    omniscience: Signal | None
    peeking: Signal | None
    audit: dict[str, Any] | None
    evidence: list[dict[str, Any]] = Field(description="decisions where it played the perfect-information best "
                                                       "that was no best on what it could know")
    grading: Grading | None = Field(None, description="the store's grading on what each player could know")


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


# --- review ----------------------------------------------------------------------------


class Costliest(Shape):
    """A player's decisions that lost points, worst first, each linked to its replay and to training."""

    moves: list[dict[str, Any]] = Field(description="one a decision: match, hand, ply, played, best, lost, ...")
    page: int
    per_page: int


class TrainingRound(Shape):
    """A player's training: the positions due and new, and the next one as the player saw it (no values)."""

    due: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    next: dict[str, Any] | None = None
    position: dict[str, Any] | None = None


class Revealed(Shape):
    """An answer's reveal: the values, the lines and the explanation (and, for training, the next review)."""


class Lines(Shape):
    """The principal line after one alternative, and the reasons it gives."""


class Puzzles(Shape):
    """Puzzles found in the store, with their themes and solve rates."""

    puzzles: list[dict[str, Any]] = []
    found: int = Field(0, description="puzzles in the store (all counted; the first listed)")


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
    {"name": "review", "description": "Learning from the moves: costliest moves, lines, training, puzzles."},
    {"name": "help", "description": "The game's words."},
]

#: What /docs says above the operations.
DESCRIPTION = """\
Every page of the desk has a JSON twin under `/api/`; every list also
downloads as CSV or Parquet (`/api/<list>.csv`, `.parquet`) with the same
filters. Writes (POST, DELETE) need the server's token: press "Authorize"
and give it (it is sent as `Authorization: Bearer <token>`). Tiles are
written `62` for [6|2]; values are points, from the side the field names.
"""
