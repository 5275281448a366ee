"""Reads for the pages and their JSON twins: plain SQL over the store's tables.

Every function takes a cursor (one per request) and returns JSON-ready
values. Nothing here writes. Hidden information (the
dealt tiles, pips, legal alternatives of an unfinished hand) never leaves
`hand_of` for a hand without a result.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

import duckdb
import orjson

from api.analysis_view import hand_analysis
from api.replay_model import FindingRow, HandData, MoveRow, SeatLabel
from replay.moves import name as move_name
from replay.store.replay_blob import TS, unpack_replay
from replay.tiles import tile_name

Cursor = duckdb.DuckDBPyConnection

_TS = TS  # as the packed replays hold them


def _ts(col: str) -> str:
    # TIMESTAMPTZ shown in UTC whatever the session's zone
    return f"strftime(timezone('UTC', {col}), '{_TS}')"


def _rows(cur: Cursor, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
    res = cur.execute(sql, params or [])
    cols = [d[0] for d in res.description]
    return [dict(zip(cols, r, strict=True)) for r in res.fetchall()]


def _scalar(cur: Cursor, sql: str, params: list[Any] | None = None) -> int:
    # fetchall, not fetchone: DuckDB 2 keeps a half-read result open on the cursor
    rows = cur.execute(sql, params or []).fetchall()
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def _one(cur: Cursor, sql: str, params: list[Any] | dict[str, Any] | None = None) -> dict[str, Any] | None:
    rows = _rows(cur, sql, params)
    return rows[0] if rows else None


# --- home ---------------------------------------------------------------------

_MATCH_COLS = f"""
    m.match, m.table_id, m.profile, m.verdict, m.result, m.winner, m.score, m.players,
    m.hands, m.errors, m.warnings, {_ts("m.started")} AS started, {_ts("m.ended")} AS ended
"""


def summary(cur: Cursor) -> dict[str, Any]:
    counts = _one(
        cur,
        """
        SELECT (SELECT count(*) FROM matches) AS matches,
               (SELECT count(*) FROM matches WHERE verdict = 'valid') AS valid,
               (SELECT count(*) FROM matches WHERE verdict = 'invalid') AS invalid,
               (SELECT count(*) FROM matches WHERE verdict = 'unreadable') AS unreadable,
               (SELECT count(*) FROM matches WHERE result IS NULL) AS unfinished,
               (SELECT coalesce(sum(hands), 0) FROM matches) AS hands,
               (SELECT count(*) FROM findings) AS findings,
               (SELECT count(*) FROM findings WHERE severity = 'error') AS errors,
               (SELECT count(*) FROM players) AS players,
               (SELECT count(*) FROM log_files) AS log_files
        """,
    ) or {}
    invalid = _rows(
        cur,
        f"""SELECT {_MATCH_COLS} FROM matches m WHERE m.verdict <> 'valid'
            ORDER BY m.started DESC NULLS LAST, m.match LIMIT 20""",
    )
    recent = _rows(
        cur,
        f"SELECT {_MATCH_COLS} FROM matches m ORDER BY m.started DESC NULLS LAST, m.match LIMIT 20",
    )
    top_codes = _rows(
        cur,
        """SELECT code, severity, count(*) AS n FROM findings
           GROUP BY code, severity ORDER BY n DESC, code LIMIT 12""",
    )
    return {"counts": counts, "invalid": invalid, "recent": recent, "codes": top_codes}


# --- sorting ----------------------------------------------------------------------

#: What each list may be sorted by: the `sort` key, its SQL, and the order a
#: first click asks for (numbers and times start with the largest).
MATCH_SORTS: dict[str, tuple[str, str]] = {
    "match": ("m.match", "asc"),
    "table": ("m.table_id", "asc"),
    "profile": ("m.profile", "asc"),
    "verdict": ("m.verdict", "asc"),
    "findings": ("m.errors * 1000000 + m.warnings", "desc"),
    "hands": ("m.hands", "desc"),
    "result": ("m.result", "asc"),
    "started": ("m.started", "desc"),
}
FINDING_SORTS: dict[str, tuple[str, str]] = {
    "severity": ("f.severity", "asc"),
    "code": ("f.code", "asc"),
    "match": ("f.match", "asc"),
    "where": ("f.hand", "asc"),
    "message": ("f.message", "asc"),
}
PLAYER_SORTS: dict[str, tuple[str, str]] = {
    "player": ("coalesce(name, player)", "asc"),
    "id": ("player", "asc"),
    "matches": ("matches", "desc"),
    "first_seen": ("first_seen", "desc"),
    "last_seen": ("last_seen", "desc"),
}


def order_by(sorts: dict[str, tuple[str, str]], sort: str | None, order: str | None,
             default: str, tiebreak: str) -> str:
    """The ORDER BY of a list: `sort` (a key of `sorts`, else the list's
    `default` order) in `order` (asc/desc, else the column's first order),
    then `tiebreak` so that pages never overlap.

    >>> order_by(MATCH_SORTS, "hands", None, "m.match", "m.match")
    'm.hands DESC NULLS LAST, m.match'
    >>> order_by(MATCH_SORTS, None, "desc", "m.started DESC", "m.match")
    'm.started DESC, m.match'
    """
    if sort not in sorts:
        return f"{default}, {tiebreak}"
    expr, first = sorts[sort]
    way = (order or first).upper()
    return f"{expr} {'DESC' if way == 'DESC' else 'ASC'} NULLS LAST, {tiebreak}"


def sort_state(sorts: dict[str, tuple[str, str]], sort: str | None, order: str | None) -> dict[str, Any]:
    """The sort a list was given, as its JSON and its column headers show it
    (None: the list's own order)."""
    if sort not in sorts:
        return {"sort": None, "order": None, "first": {k: v[1] for k, v in sorts.items()}}
    return {"sort": sort, "order": order or sorts[sort][1], "first": {k: v[1] for k, v in sorts.items()}}


# --- matches list ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchFilters:
    """Which matches a list, its hands or its moves hold (every given filter holds)."""

    player: str | None = None
    table: str | None = None
    profile: str | None = None
    verdict: str | None = None
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    match: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        """The condition on `matches m` and its parameters."""
        where, params = ["TRUE"], []
        if self.match:
            where.append("m.match = ?")
            params.append(self.match)
        if self.player:
            where.append(
                "m.match IN (SELECT match FROM seats WHERE player = ? OR lower(name) = lower(?))"
            )
            params += [self.player, self.player]
        if self.table:
            where.append("m.table_id = ?")
            params.append(self.table)
        if self.profile:
            where.append("m.profile = ?")
            params.append(self.profile)
        if self.verdict:
            where.append("m.verdict = ?")
            params.append(self.verdict)
        if self.date_from:
            where.append("m.started >= ?::DATE")
            params.append(self.date_from)
        if self.date_to:
            # inclusive: the whole last day
            where.append("m.started < ?::DATE + INTERVAL 1 DAY")
            params.append(self.date_to)
        return " AND ".join(where), params

    def params(self) -> dict[str, str]:
        """The filters given, as query parameters."""
        return {k: str(v) for k, v in (
            ("player", self.player), ("table", self.table), ("profile", self.profile),
            ("verdict", self.verdict), ("date_from", self.date_from), ("date_to", self.date_to),
            ("match", self.match)) if v not in (None, "")}


def matches_sql(filters: MatchFilters, sort: str | None = None, order: str | None = None) -> tuple[str, list[Any]]:
    """The rows of the matches list, every page (the JSON pages it, the downloads don't)."""
    cond, params = filters.where()
    by = order_by(MATCH_SORTS, sort, order, "(m.verdict = 'valid'), m.started DESC NULLS LAST", "m.match")
    return f"SELECT {_MATCH_COLS} FROM matches m WHERE {cond} ORDER BY {by}", params


def list_matches(
    cur: Cursor,
    *,
    player: str | None = None,
    table: str | None = None,
    profile: str | None = None,
    verdict: str | None = None,
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
    page: int = 1,
    per_page: int = 50,
    sort: str | None = None,
    order: str | None = None,
) -> dict[str, Any]:
    filters = MatchFilters(player, table, profile, verdict, date_from, date_to)
    cond, params = filters.where()
    n = _scalar(cur, f"SELECT count(*) FROM matches m WHERE {cond}", params)
    sql, params = matches_sql(filters, sort, order)
    rows = _rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    pages = max(1, math.ceil(n / per_page))
    return {"total": n, "page": page, "pages": pages, "per_page": per_page,
            **_sorted(MATCH_SORTS, sort, order), "matches": rows}


def _sorted(sorts: dict[str, tuple[str, str]], sort: str | None, order: str | None) -> dict[str, Any]:
    st = sort_state(sorts, sort, order)
    return {"sort": st["sort"], "order": st["order"]}


def filter_choices(cur: Cursor) -> dict[str, list[str]]:
    profiles = [r[0] for r in cur.execute(
        "SELECT DISTINCT profile FROM matches WHERE profile IS NOT NULL ORDER BY 1").fetchall()]
    return {"profiles": profiles, "verdicts": ["valid", "invalid", "unreadable"]}


# --- one match --------------------------------------------------------------------


def _seats_at(seats: list[dict[str, Any]], hand: int, players: int) -> list[SeatLabel]:
    """Who held each seat in `hand` (the last change at or before it)."""
    out = []
    for s in range(players):
        rec = None
        for r in seats:
            if r["seat"] == s and r["from_hand"] <= hand:
                rec = r
        if rec is None:
            out.append(SeatLabel(s, "?"))
        else:
            out.append(SeatLabel(s, rec["player"], rec["name"], bool(rec["bot"])))
    return out


def match_detail(cur: Cursor, match: str) -> dict[str, Any] | None:
    m = _one(
        cur,
        f"""SELECT {_MATCH_COLS}, m.rules::VARCHAR AS rules, m.notes, m.claimed_result,
                   m.claimed_winner, m.claimed_score, m.claimed_notes, m.estimates, m.anchor,
                   m.beacon, m.rematch_of, m.events
            FROM matches m WHERE m.match = ?""",
        [match],
    )
    if m is None:
        return None
    rules = orjson.loads(m.pop("rules")) if m.get("rules") else {}
    m["rules"] = rules
    m["teams"] = rules.get("teams", "pairs")
    m["estimate_cells"] = [
        {"option": k, "value": rules.get(k)} for k in (m.get("estimates") or [])
    ]
    seats = _rows(
        cur,
        "SELECT seat, player, name, bot, from_hand, seq FROM seats WHERE match = ? ORDER BY seq, seat",
        [match],
    )
    hands = _rows(
        cur,
        f"""SELECT hand, result, winner, points, score, notes, claimed_result, claimed_winner,
                   claimed_points, claimed_score, claimed_notes, leader, opener, blocker,
                   seed_ok, deal_ok, play_ok, plies, {_ts("started")} AS started
            FROM hands WHERE match = ? ORDER BY hand""",
        [match],
    )
    plies = cur.execute(
        "SELECT hand, ply, seq FROM moves WHERE match = ? ORDER BY hand, ply", [match]
    ).fetchall()
    findings = _rows(
        cur,
        """SELECT code, severity, hand, seq, message, file, line FROM findings
           WHERE match = ? ORDER BY hand NULLS FIRST, seq NULLS LAST, code""",
        [match],
    )
    still_on = {h["hand"] for h in hands if h["result"] is None}
    by_hand: dict[int, list[tuple[int, int]]] = {}
    for hand, ply, seq in plies:
        by_hand.setdefault(hand, []).append((seq, ply))
    for f in findings:
        f["ply"] = ply_of_seq(by_hand.get(f["hand"], []), f["seq"]) if f["hand"] else None
        if f["hand"] in still_on:
            f["message"] = _withheld(f)
    players = int(m["players"] or 0) or (max((s["seat"] for s in seats), default=-1) + 1)
    m["players"] = players
    changes = [s for s in seats if s["from_hand"] > 1 or s["seq"] > 0]
    first = _seats_at(seats, 1, players)
    codes_by_hand: dict[int, list[str]] = {}
    for f in findings:
        if f["hand"] is not None:
            codes_by_hand.setdefault(f["hand"], []).append(f["code"])
    for h in hands:
        h["findings"] = codes_by_hand.get(h["hand"], [])
        h["claims_differ"] = h["result"] is not None and (
            (h["claimed_points"] is not None and list(h["claimed_points"]) != list(h["points"] or []))
            or (h["claimed_score"] is not None and list(h["claimed_score"]) != list(h["score"] or []))
        )
        h["seats"] = [_label_json(s) for s in _seats_at(seats, h["hand"], players)]
    analysed = {r["hand"]: r for r in _rows(
        cur, "SELECT hand, skip, first_seat, par, result, accuracy, accuracy_dd FROM hand_analysis WHERE match = ?",
        [match])}  # fmt: skip
    for h in hands:
        a = analysed.get(h["hand"])
        h["analysis"] = None if a is None else {
            "skipped": a["skip"], "first_seat": a["first_seat"], "par": a["par"], "result": a["result"],
            "accuracy": a["accuracy"], "accuracy_dd": a["accuracy_dd"],
        }  # fmt: skip
    accuracy = match_accuracy(cur, match, players) if analysed else []
    for row in accuracy:
        row["players"] = sorted({s.label for h in hands for s in _seats_at(seats, h["hand"], players) if s.seat == row["seat"]})
    costliest = costliest_moves(cur, match) if analysed else []
    for row in costliest:
        row["player"] = next((s.label for s in _seats_at(seats, row["hand"], players) if s.seat == row["seat"]), None)
    return {
        "match": m,
        "accuracy": accuracy,
        "costliest": costliest,
        "seats": [_label_json(s) for s in first],
        "seat_changes": changes,
        "hands": hands,
        "findings": findings,
        "sides": _sides(m["teams"], players),
    }


def _label_json(s: SeatLabel) -> dict[str, Any]:
    return {"seat": s.seat, "player": s.player, "name": s.name, "bot": s.bot}


def _sides(teams: str, players: int) -> list[str]:
    if teams == "pairs":
        return ["seats 0+2", "seats 1+3"]
    return [f"seat {s}" for s in range(players)]


#: A finding's message while its hand is on: it may name a hidden tile ("holds 63").
_WITHHELD = "details withheld until the hand is over"


def _withheld(f: dict[str, Any]) -> str:
    return _WITHHELD


def ply_of_seq(seq_ply: list[tuple[int, int]], seq: int | None) -> int:
    """The ply a finding at `seq` belongs to: the last move at or before it (0: the deal)."""
    if seq is None:
        return seq_ply[-1][1] if seq_ply else 0
    best = 0
    for s, p in seq_ply:
        if s <= seq:
            best = p
    return best


# --- one hand ------------------------------------------------------------------------


@dataclass(slots=True)
class MatchBundle:
    """Everything the replay needs of one match, read at once.

    Reading a whole match costs about what one hand costs (the scans are
    pruned to the same row groups), so the replay reads and caches matches:
    the hand after this one is then free.
    """

    head: dict[str, Any]
    seats: list[dict[str, Any]]
    hands: dict[int, dict[str, Any]]
    moves: dict[int, list[tuple[Any, ...]]]
    findings: dict[int, list[tuple[Any, ...]]]
    analysis: dict[int, dict[str, Any]] = field(default_factory=dict)  # by hand (api.analysis_view)


_B_MATCH = """SELECT profile, players, verdict, rules->>'teams' AS teams, rules->>'stock' AS stock,
                     estimates, hands AS hand_count, mno, errors + warnings AS found, replay, analysis
              FROM matches WHERE match = $m"""
# {of}: the match's rows by its number where it has one (migration 006: min/max
# of mno prunes all but a row group or two), else by id. A number belongs to
# one stored match and every row of it (the loader's invariant, tested), so
# the id is not compared as well: that comparison decodes a row group of ids,
# a third of each read's cost at 1M hands.
_B_SEATS = "SELECT seat, player, name, bot, from_hand FROM seats WHERE {of} ORDER BY seq, seat"
_B_HANDS = f"""SELECT hand, result, winner, points, score, notes, leader, blocker, dealt,
                      len(stock) AS boneyard, {_ts("started")} AS started, deal_ok, seed_ok, play_ok
               FROM hands WHERE {{of}}"""
_B_MOVES = """SELECT hand, ply, seq, seat, kind, tile, on_end, left_end, right_end, stock,
                     legal_moves, forced, error
              FROM moves WHERE {of} ORDER BY hand, ply"""
_B_FINDINGS = """SELECT code, severity, hand, seq, message FROM findings
                 WHERE {of} AND hand IS NOT NULL ORDER BY seq NULLS LAST"""
_BY_ID = "match = $m"
_BY_NUMBER = "mno = $n"


def match_bundle(cur: Cursor, match: str) -> MatchBundle | None:
    """The replay data of a match, or None if unknown: its row (the packed
    replay, migration 008) and its findings if it has any; a match stored
    before 008 is read from seats, hands and moves as well."""
    par: dict[str, Any] = {"m": match}
    head = _one(cur, _B_MATCH, par)
    if head is None:
        return None
    mno, found, packed, analysed = head.pop("mno"), head.pop("found"), head.pop("replay"), head.pop("analysis")
    of = _BY_ID if mno is None else _BY_NUMBER
    if mno is not None:
        par = {"n": mno}
    rows = unpack_replay(packed) if packed is not None else None
    if rows is not None:  # in the match's row (migration 008)
        seats, hands, moves = rows
    else:  # stored before it: three reads
        seats = _rows(cur, _B_SEATS.format(of=of), par)
        hands = {r["hand"]: r for r in _rows(cur, _B_HANDS.format(of=of), par)}
        moves = {}
        for row in cur.execute(_B_MOVES.format(of=of), par).fetchall():
            moves.setdefault(row[0], []).append(row[1:])
    findings: dict[int, list[tuple[Any, ...]]] = {}
    # errors + warnings count the match's findings (the loader's and SEED_REUSED's
    # refresh keep them so, tested): most matches have none to read
    for row in cur.execute(_B_FINDINGS.format(of=of), par).fetchall() if found != 0 else ():
        findings.setdefault(row[2], []).append(row)
    analysis = match_analysis(cur, match) if analysed is not None else {}
    return MatchBundle(head, seats, hands, moves, findings, analysis)


def match_version(cur: Cursor, match: str) -> str | None:
    """The batch that stored the match and the run that analysed it (None if
    it is not stored)."""
    rows = cur.execute(
        "SELECT batch || '|' || coalesce(analysis, '') FROM matches WHERE match = ?", [match]
    ).fetchall()
    return rows[0][0] if rows else None


_A_HANDS = """SELECT hand, version, samples, seed, skip, first_seat, par, result, accuracy, accuracy_dd,
                     lost, stake, lost_dd, stake_dd
              FROM hand_analysis WHERE match = ? ORDER BY hand"""
_A_PLIES = """SELECT hand, ply, seat, played, forced, alternatives, dd, dd_best, dd_loss, pimc, pimc_loss,
                     class, samples, exact
              FROM move_analysis WHERE match = ? ORDER BY hand, ply"""


def match_analysis(cur: Cursor, match: str) -> dict[int, dict[str, Any]]:
    """Each analysed hand of a match (api.analysis_view.hand_analysis), by hand."""
    hands = {r["hand"]: r for r in _rows(cur, _A_HANDS, [match])}
    plies: dict[int, list[dict[str, Any]]] = {}
    for r in _rows(cur, _A_PLIES, [match]):
        plies.setdefault(r["hand"], []).append(r)
    return {k: hand_analysis(h, plies.get(k, [])) for k, h in hands.items()}


#: The costliest moves a match page lists.
COSTLIEST = 10


def costliest_moves(cur: Cursor, match: str, limit: int = COSTLIEST) -> list[dict[str, Any]]:
    """The match's moves that lost the most points, worst first: the grade on
    what the mover could know where the hand is sampled, else under perfect
    information (`graded` says which), with the best move of that grade.
    Analysis rows exist for finished hands only: nothing hidden leaks."""
    return _rows(cur, """
        SELECT hand, ply, seat, played, class,
               CASE WHEN pimc_loss IS NULL THEN 'perfect information' ELSE 'could know' END AS graded,
               round(coalesce(pimc_loss, dd_loss), 2) AS loss, dd_loss, round(pimc_loss, 2) AS pimc_loss,
               CASE WHEN pimc_loss IS NULL THEN list_filter(alternatives, lambda a: a.dd = dd_best)[1].move
                    ELSE list_filter(alternatives, lambda a: a.pimc = pimc_best)[1].move END AS best
        FROM move_analysis
        WHERE match = ? AND NOT forced AND coalesce(pimc_loss, dd_loss) > 0
        ORDER BY coalesce(pimc_loss, dd_loss) DESC, hand, ply
        LIMIT ?""", [match, limit])  # fmt: skip


def match_accuracy(cur: Cursor, match: str, players: int) -> list[dict[str, Any]]:
    """Each seat's accuracy over the match's analysed hands: points lost over
    points at stake, summed over the hands (docs/analysis.md), with its
    classes of moves."""
    rows = cur.execute(
        """SELECT s.seat, sum(a.lost[s.seat + 1]), sum(a.stake[s.seat + 1]),
                  sum(a.lost_dd[s.seat + 1]), sum(a.stake_dd[s.seat + 1]), count(a.hand),
                  count(a.hand) FILTER (WHERE a.samples > 0)
           FROM hand_analysis a, range(?) s(seat)
           WHERE a.match = ? AND a.skip IS NULL GROUP BY s.seat ORDER BY s.seat""",
        [players, match],
    ).fetchall()
    counts = {
        (seat, cls): n
        for seat, cls, n in cur.execute(
            """SELECT seat, class, count(*) FROM move_analysis WHERE match = ? AND class IS NOT NULL
               GROUP BY seat, class""",
            [match],
        ).fetchall()
    }
    decisions = dict(cur.execute(
        "SELECT seat, count(*) FROM move_analysis WHERE match = ? AND NOT forced GROUP BY seat", [match]
    ).fetchall())  # fmt: skip
    out = []
    for seat, lost, stake, lost_dd, stake_dd, hands, sampled in rows:
        out.append({
            # sampled_hands: hands with the grade on what each seat could know (the
            # others count under perfect information until the store samples them)
            "seat": seat, "hands": hands, "sampled_hands": sampled, "decisions": decisions.get(seat, 0),
            "accuracy": None if not stake else round(max(0.0, 100 * (1 - lost / stake)), 1),
            "accuracy_dd": None if not stake_dd else round(max(0.0, 100 * (1 - lost_dd / stake_dd)), 1),
            "inaccuracies": counts.get((seat, "inaccuracy"), 0), "mistakes": counts.get((seat, "mistake"), 0),
            "blunders": counts.get((seat, "blunder"), 0),
        })  # fmt: skip
    return out


def player_version(cur: Cursor, player: str) -> tuple[int, int] | None:
    """A digest of the player's matches and the batches that stored them."""
    rows = cur.execute(
        """SELECT count(*), coalesce(bit_xor(hash(match || '/' || batch)), 0)
           FROM (SELECT DISTINCT match, batch FROM player_seats WHERE of_player = ?)""",
        [player],
    ).fetchall()
    if not rows or not rows[0][0]:
        return None
    return int(rows[0][0]), int(rows[0][1])


def hand_of(b: MatchBundle, match: str, hand: int) -> tuple[HandData, dict[str, Any]] | None:
    """Hand `hand` of the match read as `b` (`match_bundle`), for the replay,
    with its match's header. None if the match has no such hand.

    Nothing hidden leaves here for a hand without a result: no dealt
    tiles, no drawn tile, no legal alternatives (they show what was held).
    """
    if hand not in b.hands:
        return None
    m, h = b.head, b.hands[hand]
    finished = h["result"] is not None
    players = int(m["players"] or 4)
    rows = []
    for ply, seq, seat, kind, tile, end, left, right, stock, legal, forced, error in b.moves.get(hand, ()):
        rows.append(
            MoveRow(
                ply=ply, seq=seq, seat=seat, kind=kind,
                tile=tile if (finished or kind == "play") else None,
                end=end, left=left, right=right, stock=stock,
                legal_moves=tuple(map(move_name, legal)) if finished else (),
                forced=bool(forced) if finished else False,
                error=error,
            )
        )
    dealt = tuple(tuple(x) for x in (h["dealt"] or ())) if finished else ()
    if m["stock"] == "doubles_aside":
        stock0 = 0
    elif m["stock"] == "draw" and h["boneyard"] is not None:
        stock0 = int(h["boneyard"])
    else:
        stock0 = 28 - 7 * players
    teams = m["teams"] or "pairs"
    data = HandData(
        match=match,
        hand=hand,
        players=players,
        teams=teams,
        result=h["result"],
        winner=h["winner"],
        points=tuple(h["points"] or ()),
        score=tuple(h["score"] or ()),
        notes=tuple(h["notes"] or ()),
        leader=h["leader"],
        blocker=h["blocker"],
        dealt=dealt,
        stock0=stock0,
        seats=tuple(_seats_at(b.seats, hand, players)),
        moves=tuple(rows),
        findings=tuple(FindingRow(*f) for f in b.findings.get(hand, ())),
        aside=7 if m["stock"] == "doubles_aside" else 0,
        # the analysis exists only for finished hands; checked again all the same
        analysis=b.analysis.get(hand) if finished else None,
    )
    info = {
        "match": match,
        "hand": hand,
        "profile": m["profile"],
        "verdict": m["verdict"],
        "started": h["started"],
        "finished": finished,
        "result": h["result"],
        "winner": h["winner"],
        "points": list(h["points"] or []),
        "score": list(h["score"] or []),
        "notes": list(h["notes"] or []),
        "deal_ok": h["deal_ok"],
        "seed_ok": h["seed_ok"],
        "play_ok": h["play_ok"],
        "estimates": list(m["estimates"] or []),
        "prev": max((x for x in b.hands if x < hand), default=None),
        "next": min((x for x in b.hands if x > hand), default=None),
        "sides": _sides(teams, players),
        "players": players,
        "teams": teams,
        "analysis": data.analysis,
    }
    return data, info


# --- findings ----------------------------------------------------------------------------


def _findings_where(code: str | None, severity: str | None, match: str | None) -> tuple[str, list[Any]]:
    where, params = ["TRUE"], []
    if code:
        where.append("f.code = ?")
        params.append(code)
    if severity:
        where.append("f.severity = ?")
        params.append(severity)
    if match:
        where.append("f.match = ?")
        params.append(match)
    return " AND ".join(where), params


def findings_sql(code: str | None = None, severity: str | None = None, match: str | None = None,
                 sort: str | None = None, order: str | None = None) -> tuple[str, list[Any]]:
    """The rows of the findings list, every page. A message of a hand still on
    is withheld here (it may name a hidden tile), for the JSON and the downloads alike."""
    cond, params = _findings_where(code, severity, match)
    by = order_by(FINDING_SORTS, sort, order,
                  "(f.severity = 'error') DESC, f.match NULLS FIRST, f.hand NULLS FIRST",
                  "f.match NULLS FIRST, f.hand NULLS FIRST, f.seq, f.code, f.file, f.line")
    sql = f"""SELECT f.match, f.hand, f.seq,
                   coalesce((SELECT max(mv.ply) FROM moves mv
                     WHERE mv.match = f.match AND mv.hand = f.hand AND mv.seq <= f.seq), 0) AS ply,
                   f.code, f.severity,
                   CASE WHEN h.match IS NOT NULL AND h.result IS NULL THEN '{_WITHHELD}'
                        ELSE f.message END AS message,
                   f.file, f.line
            FROM findings f LEFT JOIN hands h ON h.match = f.match AND h.hand = f.hand
            WHERE {cond}
            ORDER BY {by}"""
    return sql, params


def list_findings(
    cur: Cursor,
    *,
    code: str | None = None,
    severity: str | None = None,
    match: str | None = None,
    page: int = 1,
    per_page: int = 100,
    sort: str | None = None,
    order: str | None = None,
) -> dict[str, Any]:
    cond, cond_params = _findings_where(code, severity, match)
    n = _scalar(cur, f"SELECT count(*) FROM findings f WHERE {cond}", cond_params)
    sql, params = findings_sql(code, severity, match, sort, order)
    rows = _rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    codes = _rows(
        cur, "SELECT code, severity, count(*) AS n FROM findings GROUP BY ALL ORDER BY code"
    )
    return {
        "total": n,
        "page": page,
        "pages": max(1, math.ceil(n / per_page)),
        "per_page": per_page,
        **_sorted(FINDING_SORTS, sort, order),
        "findings": rows,
        "codes": codes,
    }


# --- players ------------------------------------------------------------------------------


def players_sql(q: str | None = None, sort: str | None = None, order: str | None = None) -> tuple[str, list[Any]]:
    """The rows of the players list, every page."""
    where, params = _players_where(q)
    by = order_by(PLAYER_SORTS, sort, order, "matches DESC", "player")
    sql = f"""SELECT player, name, bot, matches, {_ts("first_seen")} AS first_seen,
                     {_ts("last_seen")} AS last_seen
              FROM players WHERE {where} ORDER BY {by}"""
    return sql, params


def _players_where(q: str | None) -> tuple[str, list[Any]]:
    if q:
        return "(player ILIKE ? OR name ILIKE ?)", [f"%{q}%", f"%{q}%"]
    return "TRUE", []


def list_players(cur: Cursor, *, q: str | None = None, page: int = 1, per_page: int = 100,
                 sort: str | None = None, order: str | None = None) -> dict[str, Any]:
    where, params = _players_where(q)
    n = _scalar(cur, f"SELECT count(*) FROM players WHERE {where}", params)
    sql, params = players_sql(q, sort, order)
    rows = _rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    return {"total": n, "page": page, "pages": max(1, math.ceil(n / per_page)), "per_page": per_page,
            **_sorted(PLAYER_SORTS, sort, order), "players": rows}


# --- hands and moves of matches (lists of their own, for the downloads) -------------

#: Tile names by id, for SQL (`_NAMES[t + 1]`): "65" for 6-5.
_NAMES = "[" + ",".join(f"'{tile_name(t)}'" for t in range(28)) + "]"
_MOVE_NAME = (f"CASE WHEN c >= 0 THEN {_NAMES}[c // 2 + 1] || CASE WHEN c % 2 = 0 THEN ':left' ELSE ':right' END "
              "WHEN c = -1 THEN 'PASS' WHEN c = -2 THEN 'DRAW' WHEN c = -3 THEN 'YIELD' ELSE '?' END")


def _iso(col: str) -> str:
    # the downloads' times to the millisecond, in UTC
    return f"strftime(timezone('UTC', {col}), '%Y-%m-%dT%H:%M:%S.%gZ')"


def hands_sql(filters: MatchFilters) -> tuple[str, list[Any]]:
    """Every hand of the matches `filters` selects, in match and hand order.
    The deal and the boneyard of a hand still on stay hidden (NULL)."""
    cond, params = filters.where()
    on = "h.result IS NOT NULL"
    sql = f"""SELECT h.match, h.hand, {_iso("h.started")} AS started, {_iso("h.ended")} AS ended,
                     h.result, h.winner, h.points, h.score, h.notes,
                     h.claimed_result, h.claimed_winner, h.claimed_points, h.claimed_score, h.claimed_notes,
                     h.leader, h.opener, h.blocker, h.plies, h.seed_ok, h.deal_ok, h.play_ok,
                     CASE WHEN {on} THEN list_transform(h.dealt, lambda s: list_transform(s, lambda t: {_NAMES}[t + 1]))
                          END AS dealt,
                     CASE WHEN {on} THEN list_transform(h.stock, lambda t: {_NAMES}[t + 1]) END AS boneyard,
                     CASE WHEN {on} THEN h.pips END AS pips_left
              FROM hands h JOIN matches m ON m.match = h.match
              WHERE {cond}
              ORDER BY h.match, h.hand"""
    return sql, params


def moves_sql(filters: MatchFilters, hand: int | None = None) -> tuple[str, list[Any]]:
    """Every move of the matches `filters` selects (of one hand with `hand`),
    in match, hand and ply order. While a hand is on, what its moves reveal of
    the hands stays hidden: a drawn tile, the legal moves, the pips left."""
    cond, params = filters.where()
    if hand is not None:
        cond += " AND mv.hand = ?"
        params = params + [hand]
    on = "h.result IS NOT NULL"
    sql = f"""SELECT mv.match, mv.hand, mv.ply, mv.seq, {_iso("mv.ts")} AS ts, mv.seat, mv.kind,
                     CASE WHEN mv.kind = 'play' OR {on} THEN {_NAMES}[mv.tile + 1] END AS tile,
                     mv.on_end AS "end",
                     CASE WHEN mv.left_end >= 0 THEN mv.left_end END AS left_end,
                     CASE WHEN mv.right_end >= 0 THEN mv.right_end END AS right_end,
                     mv.stock,
                     CASE WHEN {on} THEN mv.legal END AS legal,
                     CASE WHEN {on} THEN mv.forced END AS forced,
                     CASE WHEN {on} THEN list_transform(mv.legal_moves, lambda c: {_MOVE_NAME}) END AS legal_moves,
                     CASE WHEN {on} THEN mv.pips END AS pips_left,
                     mv.error
              FROM moves mv JOIN matches m ON m.match = mv.match
                   LEFT JOIN hands h ON h.match = mv.match AND h.hand = mv.hand
              WHERE {cond}
              ORDER BY mv.match, mv.hand, mv.ply"""
    return sql, params


def list_hands(cur: Cursor, filters: MatchFilters, *, page: int = 1, per_page: int = 100) -> dict[str, Any]:
    cond, params = filters.where()
    n = _scalar(cur, f"SELECT count(*) FROM hands h JOIN matches m ON m.match = h.match WHERE {cond}", params)
    sql, params = hands_sql(filters)
    rows = _rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    return {"total": n, "page": page, "pages": max(1, math.ceil(n / per_page)), "per_page": per_page,
            "hands": rows}


def list_moves(cur: Cursor, filters: MatchFilters, *, hand: int | None = None, page: int = 1,
               per_page: int = 500) -> dict[str, Any]:
    cond, params = filters.where()
    if hand is not None:
        cond += " AND mv.hand = ?"
        params = params + [hand]
    n = _scalar(cur, f"SELECT count(*) FROM moves mv JOIN matches m ON m.match = mv.match WHERE {cond}", params)
    sql, params = moves_sql(filters, hand)
    rows = _rows(cur, sql + " LIMIT ? OFFSET ?", params + [per_page, (page - 1) * per_page])
    return {"total": n, "page": page, "pages": max(1, math.ceil(n / per_page)), "per_page": per_page,
            "moves": rows}


def matches_by_id(cur: Cursor, ids: list[str]) -> list[dict[str, Any]]:
    """The listed matches (e.g. those of an upload), in the given order."""
    if not ids:
        return []
    rows = _rows(cur, f"SELECT {_MATCH_COLS} FROM matches m WHERE m.match IN (SELECT unnest(?))", [ids])
    order = {mid: i for i, mid in enumerate(ids)}
    return sorted(rows, key=lambda r: order.get(r["match"], len(order)))


def file_counts(cur: Cursor, sha256: str) -> dict[str, Any]:
    """What the store holds of one log file (by its sha256): its lines and bad
    lines, its matches and their findings, and the problems of its lines of
    no match (the first 20). The same whether it was stored now or before."""
    lines = cur.execute("SELECT lines, bad_lines FROM log_files WHERE sha256 = ?", [sha256]).fetchall()
    ids = [r[0] for r in cur.execute(
        "SELECT match FROM match_files WHERE sha256 = ? ORDER BY match", [sha256]).fetchall()]
    found = cur.execute(
        "SELECT count(*), count(*) FILTER (WHERE severity = 'error') FROM findings "
        "WHERE list_contains(?, match) OR (match IS NULL AND sha256 = ?)", [ids, sha256]).fetchall()
    problems = _rows(cur,
        "SELECT line, code, message, file FROM findings WHERE match IS NULL AND sha256 = ? "
        "ORDER BY line LIMIT 20", [sha256])
    for p in problems:  # ingest words a line of no match "FILE: line N: ..."
        p["message"] = p["message"].removeprefix(f"{p.pop('file')}: ")
    n_lines, n_bad = lines[0] if lines else (0, 0)
    return {
        "ids": ids,
        "counts": {"lines": n_lines, "bad_lines": n_bad, "matches": len(ids),
                   "findings": found[0][0], "errors": found[0][1]},
        "problems": problems,
    }  # fmt: skip
