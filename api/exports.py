"""Downloads: every list of the API as CSV or Parquet, and a match's own log.

The scheme (docs/exports.md): a list at `/api/<list>` (JSON, paged) has two
downloads, `/api/<list>.csv` and `/api/<list>.parquet`. They take the same
filter and sort parameters as the JSON, hold every row those select (no
paging), in the same order, with the JSON rows' keys as columns. In CSV a
list value (a score, a hand's tiles) is written as its JSON text; Parquet
keeps it a list. What a list hides while a hand is on, its downloads hide
too: both run the very SQL the JSON runs (api.queries).

The rows stream from DuckDB in record batches: a CSV goes out batch by
batch, a Parquet file is written to a temporary file first (its footer
comes last) and then sent; memory stays at a batch either way.

`/api/matches/{match}/log.jsonl` sends the match's own lines from the kept
log files (`data/logs/`), in file order.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import io
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import FileResponse, Response, StreamingResponse
from starlette.background import BackgroundTask

from api import queries as q
from api import schemas as s
from replay.reader import BOM
from replay.store import layout

router = APIRouter()

Format = Literal["csv", "parquet"]
Text = Annotated[str | None, Query(max_length=200)]
Verdict = Literal["valid", "invalid", "unreadable"]
Severity = Literal["error", "warning"]
Order = Literal["asc", "desc"]
PageNo = Annotated[int, Query(alias="page", ge=1, le=100_000)]
BATCH = 65_536  # rows a record batch holds
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")

MEDIA = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}

#: What the API documents of a match's log download.
_LOG: dict[int | str, dict[str, Any]] = {200: {
    "description": "the match's lines, one JSON object a line, in the order they were logged",
    "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
}}


def filename(stem: str, fmt: str) -> str:
    """A download's file name: `stem` with anything unsafe in a header replaced.

    >>> filename("matches of p/1", "csv")
    'matches_of_p_1.csv'
    """
    return f"{_SAFE.sub('_', stem).strip('_')[:120] or 'export'}.{fmt}"


def _disposition(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}"'}


# --- tables to bytes -----------------------------------------------------------------


def _nested(t: pa.DataType) -> bool:
    return bool(pa.types.is_nested(t))


def flat_schema(schema: pa.Schema) -> pa.Schema:
    """The schema a CSV holds: every list or struct column becomes text (its JSON)."""
    return pa.schema([pa.field(f.name, pa.string()) if _nested(f.type) else f for f in schema])


def flat_batch(batch: pa.RecordBatch | pa.Table) -> pa.Table:
    """`batch` with every list or struct column as JSON text (CSV has no lists).

    >>> t = flat_batch(pa.table({"a": [1], "s": [[3, 4]]}))
    >>> t.column("s").to_pylist()
    ['[3,4]']
    """
    cols = []
    for col in batch.columns:
        if _nested(col.type):
            col = pa.array([None if v is None else orjson.dumps(v).decode() for v in col.to_pylist()],
                           type=pa.string())
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=flat_schema(batch.schema))


def csv_bytes(table: pa.Table | pa.RecordBatch, header: bool = True) -> bytes:
    """`table` as CSV (UTF-8, a header line unless `header` is False)."""
    sink = io.BytesIO()
    pacsv.write_csv(flat_batch(table), sink, write_options=pacsv.WriteOptions(include_header=header))
    return sink.getvalue()


def parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def table_response(table: pa.Table, fmt: str, stem: str) -> Response:
    """A small table (already in memory) as a download."""
    body = csv_bytes(table) if fmt == "csv" else parquet_bytes(table)
    return Response(body, media_type=MEDIA[fmt], headers=_disposition(filename(stem, fmt)))


def rows_table(rows: list[dict[str, Any]], columns: list[tuple[str, pa.DataType]]) -> pa.Table:
    """JSON rows as a table with the given columns (typed even with no row)."""
    schema = pa.schema(columns)
    return pa.Table.from_pylist([{k: r.get(k) for k in schema.names} for r in rows], schema=schema)


def query_download(request: Request, sql: str, params: list[Any], fmt: str, stem: str) -> Response:
    """The rows of `sql` as a download, read in record batches on a cursor of its own
    (a route's cursor closes before a streamed body is sent)."""
    cur = request.app.state.store.cursor()
    try:
        reader = cur.sql(sql, params=params).to_arrow_reader(BATCH)
    except Exception:
        cur.close()
        raise
    name = filename(stem, fmt)
    if fmt == "csv":
        return StreamingResponse(_csv_stream(cur, reader), media_type=MEDIA["csv"], headers=_disposition(name))
    fd, path = tempfile.mkstemp(prefix="replay-export-", suffix=".parquet")
    os.close(fd)
    try:
        with cur, pq.ParquetWriter(path, reader.schema, compression="zstd") as writer:
            for batch in reader:
                writer.write_batch(batch)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return FileResponse(path, media_type=MEDIA["parquet"], filename=name,
                        background=BackgroundTask(os.unlink, path))


def _csv_stream(cur: Any, reader: pa.RecordBatchReader) -> Iterator[bytes]:
    try:
        first = True
        for batch in reader:
            yield csv_bytes(batch, header=first)
            first = False
        if first:  # no row: the header alone
            yield csv_bytes(reader.schema.empty_table())
    finally:
        cur.close()


# --- the parameters, as the JSON lists take them ---------------------------------------


#: a rating pool: "*" for every profile together, else a profile
Rated = Annotated[str | None, Query(max_length=200, description='the matches rated in a pool: "*" or a profile')]
#: with `rated`, the rated matches won, tied or lost (by `player` when given)
RatedOutcome = Literal["win", "tie", "loss"]


def match_filters(
    player: Text = None, table: Text = None, profile: Text = None, verdict: Verdict | None = None,
    date_from: dt.date | None = None, date_to: dt.date | None = None, match: Text = None,
    rated: Rated = None, rated_outcome: RatedOutcome | None = None,
) -> q.MatchFilters:
    return q.MatchFilters(player or None, table or None, profile or None, verdict, date_from, date_to,
                          match or None, rated or None, rated_outcome)


Matches = Annotated[q.MatchFilters, Depends(match_filters)]
MatchSort = Literal["match", "table", "profile", "verdict", "findings", "hands", "result", "started"]
FindingSort = Literal["severity", "code", "match", "where", "message"]
PlayerSort = Literal["player", "id", "matches", "first_seen", "last_seen"]
HandFilter = Annotated[int | None, Query(ge=0, le=1_000_000)]


def _json(data: Any) -> Response:
    return Response(orjson.dumps(data), media_type="application/json")


# --- routes ------------------------------------------------------------------------------


@router.get("/api/matches.{fmt}", tags=["matches"], summary="Download the matches", operation_id="download_matches",
            response_class=Response, responses=s.DOWNLOAD)
def export_matches(request: Request, fmt: Format, filters: Matches, sort: MatchSort | None = None,
                   order: Order | None = None) -> Response:
    """Every match of /api/matches with these filters and sort, as CSV or Parquet."""
    sql, params = q.matches_sql(filters, sort, order)
    return query_download(request, sql, params, fmt, "matches")


@router.get("/api/findings.{fmt}", tags=["findings"], summary="Download the findings", operation_id="download_findings",
            response_class=Response, responses=s.DOWNLOAD)
def export_findings(request: Request, fmt: Format, code: Text = None, severity: Severity | None = None,
                    match: Text = None, sort: FindingSort | None = None, order: Order | None = None) -> Response:
    """Every finding of /api/findings with these filters and sort, as CSV or Parquet."""
    sql, params = q.findings_sql(code or None, severity, match or None, sort, order)
    return query_download(request, sql, params, fmt, "findings")


@router.get("/api/players.{fmt}", tags=["players"], summary="Download the players", operation_id="download_players",
            response_class=Response, responses=s.DOWNLOAD)
def export_players(request: Request, fmt: Format,
                   q_: Annotated[str | None, Query(alias="q", max_length=200)] = None,
                   sort: PlayerSort | None = None, order: Order | None = None) -> Response:
    """Every player of /api/players with this search and sort, as CSV or Parquet."""
    sql, params = q.players_sql(q_ or None, sort, order)
    return query_download(request, sql, params, fmt, "players")


@router.get("/api/hands", tags=["hands"], summary="List hands", operation_id="list_hands", response_model=s.Hands)
def api_hands(request: Request, filters: Matches, page_no: PageNo = 1,
              per_page: Annotated[int, Query(ge=1, le=1000)] = 100) -> Response:
    """The hands of the matches these filters select (the match list's filters,
    or `match`), in match and hand order. A hand still on keeps its deal hidden."""
    cur = request.app.state.store.cursor()
    try:
        return _json(q.list_hands(cur, filters, page=page_no, per_page=per_page))
    finally:
        cur.close()


@router.get("/api/hands.{fmt}", tags=["hands"], summary="Download the hands", operation_id="download_hands",
            response_class=Response, responses=s.DOWNLOAD)
def export_hands(request: Request, fmt: Format, filters: Matches) -> Response:
    """Every hand of /api/hands with these filters, as CSV or Parquet."""
    sql, params = q.hands_sql(filters)
    return query_download(request, sql, params, fmt, _stem("hands", filters))


@router.get("/api/moves", tags=["moves"], summary="List moves", operation_id="list_moves", response_model=s.Moves)
def api_moves(request: Request, filters: Matches, hand: HandFilter = None, page_no: PageNo = 1,
              per_page: Annotated[int, Query(ge=1, le=5000)] = 500) -> Response:
    """The moves of the matches these filters select (of one hand with `hand`),
    in match, hand and ply order. While a hand is on, a drawn tile, the legal
    moves and the pips left stay hidden."""
    cur = request.app.state.store.cursor()
    try:
        return _json(q.list_moves(cur, filters, hand=hand, page=page_no, per_page=per_page))
    finally:
        cur.close()


@router.get("/api/moves.{fmt}", tags=["moves"], summary="Download the moves", operation_id="download_moves",
            response_class=Response, responses=s.DOWNLOAD)
def export_moves(request: Request, fmt: Format, filters: Matches, hand: HandFilter = None) -> Response:
    """Every move of /api/moves with these filters, as CSV or Parquet."""
    sql, params = q.moves_sql(filters, hand)
    stem = _stem("moves", filters) + (f"-hand{hand}" if hand is not None and filters.match else "")
    return query_download(request, sql, params, fmt, stem)


def _stem(what: str, filters: q.MatchFilters) -> str:
    return f"{what}-{filters.match}" if filters.match else what


@router.get("/api/matches/{match_id:path}/log.jsonl", tags=["matches"], summary="Download a match's log lines",
            operation_id="download_match_log", response_class=Response, responses={**_LOG, **s.errors(404, 409)})
def match_log(request: Request, match_id: str) -> Response:
    """The match's own lines from the kept log files, as read (JSON Lines).

    Served once every hand of the match is over: the lines of a hand still
    on hold the hidden hands (409 until then). A match not closed yet whose
    lines name a hand the store holds no finished row of (its deal line
    could not be read, say) waits too: that hand may be on."""
    cur = request.app.state.store.cursor()
    try:
        head = cur.execute("SELECT result FROM matches WHERE match = ?", [match_id]).fetchall()
        if not head:
            raise HTTPException(404, f"no match {match_id!r}")
        on = cur.execute("SELECT min(hand) FROM hands WHERE match = ? AND result IS NULL", [match_id]).fetchall()
        if on and on[0][0] is not None:
            raise HTTPException(409, _WAIT.format(match=match_id, hand=on[0][0]))
        over = None
        if head[0][0] is None:  # not closed: only lines of hands that are over may go out
            over = {h for (h,) in cur.execute(
                "SELECT hand FROM hands WHERE match = ? AND result IS NOT NULL", [match_id]).fetchall()}
        files = cur.execute(
            """SELECT lf.stored, lf.path FROM match_files mf JOIN log_files lf ON lf.sha256 = mf.sha256
               WHERE mf.match = ? ORDER BY lf.read_at, lf.sha256""", [match_id]).fetchall()
    finally:
        cur.close()
    data = layout(request.app.state.store.db_path).data
    try:
        lines = match_lines([(data / kept, p) for kept, p in files], match_id, over=over)
    except HandOn as exc:
        raise HTTPException(409, _WAIT.format(match=match_id, hand=exc.hand)) from None
    body = b"".join(line + b"\n" for line in lines)
    return Response(body, media_type="application/x-ndjson",
                    headers=_disposition(filename(match_id, "jsonl")))


_WAIT = ("match {match!r}: hand {hand} is not over, and its lines hold the hidden hands; "
         "the log is served once every hand is over")

#: Events that belong to no hand, whatever `hand` they carry.
_MATCH_EVENTS = frozenset({"match_start", "match_end"})


class HandOn(Exception):
    """A line of a hand that is not over (`hand`: its number as logged)."""

    def __init__(self, hand: object) -> None:
        super().__init__(hand)
        self.hand = hand


def match_lines(files: list[tuple[Path, str]], match: str, over: set[int] | None = None) -> list[bytes]:
    """The lines of `match` in the kept `files` (path, the path it was read
    from), each file's in file order, the files in the order of the match's
    events (the first `seq` of it each holds). A line is the match's when it is
    a JSON object whose `match` is it (a line that is not JSON belongs to none).

    With `over` (the hands that are over), a line of any other hand raises
    `HandOn`: a line with a `hand`, or a deal, draw or play line, unless it
    belongs to one of `over`."""
    needle = orjson.dumps(match)[1:-1]  # as a log writes the id, escapes and all
    found: list[tuple[float, int, list[bytes]]] = []
    for i, (path, shown) in enumerate(files):
        mine: list[bytes] = []
        first = float("inf")
        try:
            opener = gzip.open if path.name.endswith(".gz") else open
            with opener(path, "rb") as fh:
                for n, raw in enumerate(fh):
                    if needle not in raw:
                        continue
                    line = raw.rstrip(b"\r\n")
                    if n == 0:
                        line = line.removeprefix(BOM)  # as the reader skips it
                    try:
                        obj = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        continue
                    if isinstance(obj, dict) and obj.get("match") == match:
                        if over is not None and _of_a_hand_on(obj, over):
                            raise HandOn(obj.get("hand"))
                        mine.append(line)
                        seq = obj.get("seq")
                        if type(seq) is int and not mine[:-1]:
                            first = seq
        except (OSError, EOFError) as exc:
            raise HTTPException(500, f"the kept copy of {Path(shown).name} ({path.name}) cannot be read: {exc}") from None
        if mine:
            found.append((first, i, mine))
    return [line for _, _, lines in sorted(found) for line in lines]


def _of_a_hand_on(obj: dict[str, Any], over: set[int]) -> bool:
    """Whether a line may hold tiles of a hand that is not over.

    >>> _of_a_hand_on({"type": "play", "hand": 2}, {1, 2}), _of_a_hand_on({"type": "deal", "hand": "3"}, {1, 2})
    (False, True)
    >>> _of_a_hand_on({"type": "seat_change", "seat": 1}, set()), _of_a_hand_on({"hands": [["66"]]}, {1})
    (False, True)
    """
    if obj.get("type") in _MATCH_EVENTS:
        return False
    hand = obj.get("hand")
    if type(hand) is int and hand in over:
        return False
    return "hand" in obj or any(k in obj for k in ("hands", "tile", "draws")) or obj.get("type") in (
        "deal", "play", "draw", "pass", "hand_end", "redeal_claim", "lead_yield")
