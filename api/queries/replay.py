"""The match page and the replay: one match with its hands, findings and
analysis, and the bundle a hand's replay is drawn from.

Every function takes a cursor (one per request) and returns JSON-ready
values. Nothing here writes. Hidden information (the
dealt tiles, pips, legal alternatives of an unfinished hand) never leaves
`hand_of` for a hand without a result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from api.deal_evidence import deal_evidence
from api.queries.sql import (
    MATCH_COLS,
    WITHHELD,
    Cursor,
    dict_rows,
    one_row,
    shown_file,
    shown_message,
    ts_utc,
)
from api.replay_model import FindingRow, HandData, MoveRow, SeatLabel
from replay.analysis.grades import HandInput, inputs_from_replay
from replay.moves import name as move_name
from replay.store.analysis_blob import HAND_COLS, PLY_JSON, shown_analysis, unpack_analysis
from replay.store.replay_blob import unpack_replay

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
    m = one_row(
        cur,
        f"""SELECT {MATCH_COLS}, m.rules::VARCHAR AS rules, m.notes, m.claimed_result,
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
    seats = dict_rows(
        cur,
        "SELECT seat, player, name, bot, from_hand, seq FROM seats WHERE match = ? ORDER BY seq, seat",
        [match],
    )
    hands = dict_rows(
        cur,
        f"""SELECT hand, result, winner, points, score, notes, claimed_result, claimed_winner,
                   claimed_points, claimed_score, claimed_notes, leader, opener, blocker,
                   seed_ok, deal_ok, play_ok, plies, {ts_utc("started")} AS started
            FROM hands WHERE match = ? ORDER BY hand""",
        [match],
    )
    plies = cur.execute(
        "SELECT hand, ply, seq FROM moves WHERE match = ? ORDER BY hand, ply", [match]
    ).fetchall()
    findings = dict_rows(
        cur,
        f"""SELECT code, severity, hand, seq, {shown_message("message", "file")} AS message,
                   {shown_file("file")} AS file, line FROM findings
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
    analysed = {r["hand"]: r for r in dict_rows(
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
        held = {s.player: s for h in hands for s in _seats_at(seats, h["hand"], players) if s.seat == row["seat"]}
        row["players"] = sorted({s.label for s in held.values()})
        # the same people by id too: the page links each name and marks a flagged one
        row["holders"] = [{"player": s.player, "name": s.name, "bot": s.bot}
                          for s in sorted(held.values(), key=lambda s: (s.label, s.player)) if s.player != "?"]
    costliest = costliest_moves(cur, match) if analysed else []
    for row in costliest:
        who = next((s for s in _seats_at(seats, row["hand"], players) if s.seat == row["seat"]), None)
        row["player"] = None if who is None else who.label
        row["player_id"] = None if who is None or who.player == "?" else who.player
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


def _withheld(f: dict[str, Any]) -> str:
    return WITHHELD


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
    analysis: Mapping[int, dict[str, Any]] = field(default_factory=dict)  # by hand (api.analysis_view)
    deals: dict[int, dict[str, Any]] = field(default_factory=dict)  # DEAL_MISMATCH evidence by hand
    rules_json: str | None = None  # the match's rules, and the match it is a rematch of (hand_input)
    rematch_of: str | None = None
    # where the hands and moves were read from (hand_input reads the packed replay's), and
    # what hand_input made of them: not the match's content, so not compared
    packed: bool = field(default=False, compare=False)
    inputs: dict[int, HandInput] = field(default_factory=dict, compare=False)
    mno: int | None = field(default=None, compare=False)  # the match's number (None: stored before 006)


_B_MATCH = """SELECT profile, players, verdict, rules->>'teams' AS teams, rules->>'stock' AS stock,
                     estimates, hands AS hand_count, mno, errors + warnings AS found, replay, analysis,
                     analysis_body, rules::VARCHAR AS rules_json, rematch_of
              FROM matches WHERE match = $m"""
# {of}: the match's rows by its number where it has one (migration 006: min/max
# of mno prunes all but a row group or two), else by id. A number belongs to
# one stored match and every row of it (the loader's invariant, tested), so
# the id is not compared as well: that comparison decodes a row group of ids,
# a third of each read's cost at 1M hands.
_B_SEATS = "SELECT seat, player, name, bot, from_hand FROM seats WHERE {of} ORDER BY seq, seat"
_B_HANDS = f"""SELECT hand, result, winner, points, score, notes, leader, blocker, dealt,
                      len(stock) AS boneyard, {ts_utc("started")} AS started, deal_ok, seed_ok, play_ok
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
    head = one_row(cur, _B_MATCH, par)
    if head is None:
        return None
    mno, found, packed, analysed = head.pop("mno"), head.pop("found"), head.pop("replay"), head.pop("analysis")
    body = head.pop("analysis_body")
    rules_json, rematch_of = head.pop("rules_json"), head.pop("rematch_of")
    of = _BY_ID if mno is None else _BY_NUMBER
    if mno is not None:
        par = {"n": mno}
    rows = unpack_replay(packed) if packed is not None else None
    if rows is not None:  # in the match's row (migration 008)
        seats, hands, moves = rows
    else:  # stored before it: three reads
        seats = dict_rows(cur, _B_SEATS.format(of=of), par)
        hands = {r["hand"]: r for r in dict_rows(cur, _B_HANDS.format(of=of), par)}
        moves = {}
        for row in cur.execute(_B_MOVES.format(of=of), par).fetchall():
            moves.setdefault(row[0], []).append(row[1:])
    findings: dict[int, list[tuple[Any, ...]]] = {}
    # errors + warnings count the match's findings (the loader's and SEED_REUSED's
    # refresh keep them so, tested): most matches have none to read
    for row in cur.execute(_B_FINDINGS.format(of=of), par).fetchall() if found != 0 else ():
        findings.setdefault(row[2], []).append(row)
    shown = unpack_analysis(body) if body is not None and analysed is not None else None
    if shown is not None:  # in the match's row (migration 022)
        analysis: Mapping[int, dict[str, Any]] = HandAnalyses.packed(shown)
    else:
        analysis = match_analysis(cur, match, mno) if analysed is not None else {}
    bad = [h for h, rows in findings.items() if any(r[0] == "DEAL_MISMATCH" for r in rows)]
    deals = _deal_evidence(cur, match, bad, head) if bad else {}
    return MatchBundle(head, seats, hands, moves, findings, analysis, deals, rules_json, rematch_of, rows is not None,
                       mno=mno)


def hand_input(cur: Cursor, b: MatchBundle, match: str, hand: int) -> HandInput | None:
    """An analysed hand of `b` as the solver replays it (its principal lines,
    api.review), read on demand: the replay page itself does not need it."""
    if hand not in b.inputs and b.analysis and b.packed:
        b.inputs.update(_inputs(cur, match, b.mno, b.rules_json, b.rematch_of, b.hands, b.moves))
    return b.inputs.get(hand)


def _inputs(cur: Cursor, match: str, mno: int | None, rules_json: str | None, rematch_of: str | None,
            hands: dict[int, dict[str, Any]], moves: dict[int, list[Any]]) -> dict[int, HandInput]:  # fmt: skip
    """The finished hands of a match as the solver replays them (their principal lines, api.review)."""
    if not rules_json:
        return {}
    of, par = _of(match, mno)
    rules = orjson.loads(rules_json)
    # the boneyards' orders (not in the packed replay) matter where the seats draw
    # from them alone: a read of about 1 ms a match saved for the rest
    drawn = rules.get("stock") not in ("none", "doubles_aside")
    stocks = dict(cur.execute(f"SELECT hand, stock FROM hands WHERE {of}", par).fetchall()) if drawn else {}
    got = inputs_from_replay(match, rules, rematch_of, hands, moves, stocks)
    return {i.hand: i for i in got if i.skip is None}


def _deal_evidence(cur: Cursor, match: str, bad: list[int], head: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The derived deal beside the logged one for the hands with a DEAL_MISMATCH (rare: one small read)."""
    out = {}
    for hand, dealt, server_seed, client_seeds, table, beacon in cur.execute(
        "SELECT h.hand, h.dealt, h.server_seed, h.client_seeds, m.table_id, m.beacon FROM hands h "
        "JOIN matches m USING (match) WHERE h.match = $m AND list_contains($h, h.hand)", {"m": match, "h": bad},
    ).fetchall():  # fmt: skip
        got = deal_evidence(table=table, match=match, hand=hand, players=int(head["players"] or 4),
                            stock=head["stock"], beacon=beacon, dealt=dealt, server_seed=server_seed,
                            client_seeds=client_seeds)  # fmt: skip
        if got is not None:
            out[hand] = got
    return out


def match_version(cur: Cursor, match: str) -> str | None:
    """The batch that stored the match and the run that analysed it (None if
    it is not stored)."""
    rows = cur.execute(
        "SELECT batch || '|' || coalesce(analysis, '') FROM matches WHERE match = ?", [match]
    ).fetchall()
    return rows[0][0] if rows else None


# A match's analysis stored before migration 022 (or by a writer that does
# not pack it): its hands' rows as they are (a row a hand: few objects), its
# moves' as JSON (replay.store.analysis_blob.PLY_JSON). (The hands' rows as
# JSON cost 3.2 ms a match at 1M hands, as they are 1.4.)
_A_HANDS = f"SELECT hand, {', '.join(HAND_COLS)} FROM hand_analysis WHERE {{of}}"
# A row's JSON each, grouped by hand here: DuckDB's list() aggregate over a
# GROUP BY ran in parallel and cost 11 ms a match at 1M hands on 2 busy cores,
# against 4 for the rows (hand_analysis puts the plies in order)
_A_PLIES = "SELECT hand, " + PLY_JSON.replace("{", "{{").replace("}", "}}") + " FROM move_analysis WHERE {of}"


def _of(match: str, mno: int | None) -> tuple[str, dict[str, Any]]:
    """A match's rows by its number where it has one (pruned to a row group
    or two: migrations 006, 021), else by id."""
    return (_BY_ID, {"m": match}) if mno is None else (_BY_NUMBER, {"n": mno})


class HandAnalyses(Mapping[int, dict[str, Any]]):
    """A match's analysed hands (replay.store.analysis_blob.shown_analysis) by
    hand, each made on first use from the match's body or from the store's
    rows: a reviewer's first view of a match waits for its own hand's only.

    >>> from replay.store.analysis_blob import HAND_COLS
    >>> row = {**dict.fromkeys(HAND_COLS), "skip": "cancelled"}
    >>> a = HandAnalyses({1: row}, {})
    >>> sorted(a), a[1]["skipped"], a[1]["plies"], 2 in a
    ([1], 'cancelled', [], False)
    >>> b = HandAnalyses.packed({1: memoryview(orjson.dumps(a[1]))})
    >>> b == a, 2 in b
    (True, False)
    """

    __slots__ = ("_hands", "_plies", "_shown", "_made")

    def __init__(self, hands: dict[int, dict[str, Any]], plies: dict[int, list[str]]) -> None:
        self._hands, self._plies = hands, plies  # plies: each move row's JSON, by hand
        self._shown: dict[int, memoryview] | None = None
        self._made: dict[int, dict[str, Any]] = {}

    @classmethod
    def packed(cls, shown: dict[int, memoryview]) -> HandAnalyses:
        """From a match's body (replay.store.analysis_blob.unpack_analysis):
        each hand's JSON as the pages show it."""
        got = cls({}, {})
        got._shown = shown
        return got

    def __getitem__(self, hand: int) -> dict[str, Any]:
        got = self._made.get(hand)
        if got is None:  # two threads may both make it: the same value
            if self._shown is not None:
                got = orjson.loads(self._shown[hand])
            else:
                rows = self._plies.get(hand)
                got = shown_analysis(self._hands[hand], orjson.loads("[" + ",".join(rows) + "]") if rows else [])
            self._made[hand] = got
        return got

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._shown if self._shown is not None else self._hands))

    def __len__(self) -> int:
        return len(self._shown if self._shown is not None else self._hands)


def match_analysis(cur: Cursor, match: str, mno: int | None = None) -> HandAnalyses:
    """Each analysed hand of a match (api.analysis_view.hand_analysis), by hand;
    read by the match's number `mno` where it has one."""
    of, par = _of(match, mno)
    hands = {r[0]: dict(zip(HAND_COLS, r[1:], strict=True)) for r in cur.execute(_A_HANDS.format(of=of), par).fetchall()}
    plies: dict[int, list[str]] = {}
    for hand, row in cur.execute(_A_PLIES.format(of=of), par).fetchall():
        plies.setdefault(hand, []).append(row)
    return HandAnalyses(hands, plies)


#: The costliest moves a match page lists.
COSTLIEST = 10


def costliest_moves(cur: Cursor, match: str, limit: int = COSTLIEST) -> list[dict[str, Any]]:
    """The match's moves that lost the most points, worst first: the grade on
    what the mover could know where the hand is sampled, else under perfect
    information (`graded` says which), with the best move of that grade.
    Analysis rows exist for finished hands only: nothing hidden leaks."""
    return dict_rows(cur, """
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
        "deal_evidence": b.deals.get(hand) if finished else None,  # api.deal_evidence
    }
    return data, info


