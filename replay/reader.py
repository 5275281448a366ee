"""Streaming reader of table logs: files and folders of JSON Lines, gzip or not.

Each line becomes a record: an :class:`EventLine` (a valid event) or a
:class:`BadLine` (``MALFORMED_LINE``, ``SCHEMA_ERROR`` or ``UNKNOWN_EVENT``,
with the ``match``/``seq``/``hand`` that could still be read, so that the
finding lands in that match). Reading never raises for bad content: an
unreadable file or a broken gzip is one ``MALFORMED_LINE`` where it broke,
and everything read before is kept. Memory is bounded by the chunk size
and the longest line, not by the file size.

>>> rec = parse_line('{"type":"pass","match":"m-1","seq":7,"ts":"2026-11-02T18:04:05Z",'
...                  '"hand":1,"seat":"2"}', "log.jsonl", 12)
>>> rec.code, rec.match, rec.seq, rec.hand
('SCHEMA_ERROR', 'm-1', 7, 1)
>>> rec.message
'line 12: field \\'seat\\': input should be a valid integer, got "2"'
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeAlias

import orjson
from pydantic import ValidationError

from replay.events import EVENT_ADAPTER, EVENT_MODELS, EVENT_TYPES, INT32_MAX, Event

__all__ = [
    "BOM",
    "LOG_SUFFIXES",
    "MAX_LINE_BYTES",
    "NOT_A_LOG",
    "BadLine",
    "BrokenFile",
    "EventLine",
    "FileStats",
    "LogReader",
    "Record",
    "UsageError",
    "display_names",
    "iter_paths",
    "not_utf8",
    "parse_line",
    "read_chunks",
    "read_lines",
    "split_lines",
    "whole_lines",
]

MALFORMED_LINE: Final = "MALFORMED_LINE"
SCHEMA_ERROR: Final = "SCHEMA_ERROR"
UNKNOWN_EVENT: Final = "UNKNOWN_EVENT"

#: Names of the files a folder is searched for (explicitly named files are
#: read whatever their name).
LOG_SUFFIXES: Final = (".jsonl", ".jsonl.gz")

#: A longer line is not parsed (MALFORMED_LINE); it keeps memory bounded.
MAX_LINE_BYTES: Final = 16 * 1024 * 1024

_CHUNK: Final = 256 * 1024
_GZIP_MAGIC: Final = b"\x1f\x8b"
#: The UTF-8 byte-order mark: skipped at the start of a file (only there).
BOM: Final = b"\xef\xbb\xbf"


class UsageError(Exception):
    """A path given to read does not exist, or is a folder with no log in it
    (the command line exits with 2)."""

    def __init__(self, path: str | os.PathLike[str], message: str | None = None) -> None:
        super().__init__(message or f"no such file or directory: {os.fspath(path)}")
        self.path = os.fspath(path)


@dataclass(frozen=True, slots=True)
class EventLine:
    """A line read as a valid event."""

    file: str
    line: int
    event: Event
    raw: str


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that could not be read as an event.

    ``match``, ``seq`` and ``hand`` are filled when they could be read from
    the line anyway; a line without a readable ``match`` is a top-level
    finding of the report.
    """

    file: str
    line: int
    code: str
    message: str
    match: str | None
    seq: int | None
    hand: int | None
    raw: str


Record: TypeAlias = EventLine | BadLine

# An EventLine built without the frozen dataclass's __init__ (Python code
# making four object.__setattr__ calls): the same object, its four slots set
# through their descriptors. A quarter of a microsecond less per line, about
# 7% of reading (bench/parse.py, reader_plain); LogReader.records inlines it.
_new_object: Final = object.__new__
_SET_FILE: Final = EventLine.__dict__["file"].__set__
_SET_LINE: Final = EventLine.__dict__["line"].__set__
_SET_EVENT: Final = EventLine.__dict__["event"].__set__
_SET_RAW: Final = EventLine.__dict__["raw"].__set__


def _event_line(file: str, line: int, event: Event, raw: str) -> EventLine:
    """``EventLine(file, line, event, raw)``, faster (equal, same hash and repr)."""
    rec: EventLine = _new_object(EventLine)
    _SET_FILE(rec, file)
    _SET_LINE(rec, line)
    _SET_EVENT(rec, event)
    _SET_RAW(rec, raw)
    return rec


@dataclass(frozen=True, slots=True)
class FileStats:
    """Per-file accounting of table-log.md: every line counts in ``lines``
    (blank ones too; a final newline does not start another line), and
    ``bad_lines`` counts the lines that are not events. Where reading broke
    (unreadable file, broken gzip) counts as one more line, a bad one."""

    path: str
    lines: int
    bad_lines: int


# -- one line ----------------------------------------------------------------

_PEEK: Final = '{"type":"'
_VALIDATE_JSON: Final = {
    name: model.__pydantic_validator__.validate_json for name, model in EVENT_MODELS.items()
}


def parse_line(text: str, file: str = "", line: int = 0) -> Record:
    """Read one non-blank line (without its line end) as a record.

    >>> parse_line('[1, 2]', "f", 3).message
    'line 3: not a JSON object (got an array)'
    >>> parse_line('{"type":"nap","match":"m","seq":1}', "f", 4).code
    'UNKNOWN_EVENT'
    """
    # Fast path: the server writes "type" first, so peek at it and run the
    # one model's validator instead of the union's (a few percent faster,
    # see bench/parse.py). The model's Literal `type` guarantees the same
    # result as the union.
    if text.startswith(_PEEK):
        validate = _VALIDATE_JSON.get(text[9 : text.find('"', 9)])
        if validate is not None:
            try:
                return _event_line(file, line, validate(text), text)
            except ValidationError:
                pass  # the union below gives the canonical answer
    try:
        return _event_line(file, line, EVENT_ADAPTER.validate_json(text), text)
    except ValidationError as exc:
        return _bad_line(text, file, line, exc)


def _cr_hint(text: str) -> str:
    """A word on bare CR characters, which end no line (only LF does).

    >>> _cr_hint('{"a":1}\\r{"b":2}')
    '; the line holds 1 bare CR (carriage return): lines end in LF or CR LF, never in CR alone'
    """
    n = text.count("\r")
    if not n:
        return ""
    return f"; the line holds {n:,} bare CR (carriage return): lines end in LF or CR LF, never in CR alone"


def _bad_line(text: str, file: str, line: int, exc: ValidationError) -> Record:
    def bad(code: str, what: str, obj: dict[str, Any] | None = None) -> BadLine:
        match, seq, hand = _ids(obj)
        return BadLine(file, line, code, f"line {line}: {what}", match, seq, hand, text)

    first = exc.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        return bad(MALFORMED_LINE, f"not JSON ({first['ctx']['error']}){_cr_hint(text)}")
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:  # what orjson refuses (e.g. integers beyond 64 bits)
            obj = json.loads(text)
        except ValueError as err:
            return bad(MALFORMED_LINE, f"not JSON ({err}){_cr_hint(text)}")
    if not isinstance(obj, dict):
        return bad(MALFORMED_LINE, f"not a JSON object (got {_json_kind(obj)})")
    if "type" not in obj:
        return bad(SCHEMA_ERROR, "field 'type': missing", obj)
    kind = obj["type"]
    if not isinstance(kind, str):
        return bad(SCHEMA_ERROR, f"field 'type': expected a string, got {_show(kind)}", obj)
    if kind not in EVENT_TYPES:
        return bad(UNKNOWN_EVENT, f"unknown event type {kind!r}", obj)
    # Validate again with the one model: its error locations carry no tag.
    try:
        event = EVENT_MODELS[kind].model_validate(obj)
    except ValidationError as err:
        return bad(SCHEMA_ERROR, _describe(err), obj)
    return EventLine(file, line, event, text)  # type: ignore[arg-type]  # pragma: no cover


def _ids(obj: object) -> tuple[str | None, int | None, int | None]:
    """The ``match``, ``seq`` and ``hand`` of a bad line, where readable."""
    if not isinstance(obj, dict):
        return None, None, None
    m, s, h = obj.get("match"), obj.get("seq"), obj.get("hand")
    return (
        m if isinstance(m, str) and m and "\ufffd" not in m else None,
        s if type(s) is int and 0 <= s <= INT32_MAX else None,
        h if type(h) is int and 1 <= h <= INT32_MAX else None,
    )


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _show(value: object, limit: int = 40) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(exc: ValidationError, most: int = 3) -> str:
    """Name the field of each error: ``field 'hands[0][3]': not a tile: '7x'``."""
    parts = []
    errors = []
    seen = set()
    for err in exc.errors(include_url=False):
        # Play.face reads "tile" again: one message per place is enough.
        if err["loc"] not in seen:
            seen.add(err["loc"])
            errors.append(err)
    for err in errors[:most]:
        path = ""
        for item in err["loc"]:
            path += f"[{item}]" if isinstance(item, int) else (f".{item}" if path else str(item))
        kind = err["type"]
        if kind == "missing":
            what = "missing"
        elif kind == "tile":
            what = err["msg"]
        elif kind == "string_pattern_mismatch" and path == "ts":
            what = f"not an RFC 3339 time, got {_show(err['input'])}"
        else:
            msg = err["msg"]
            what = f"{msg[:1].lower()}{msg[1:]}, got {_show(err['input'])}"
        parts.append(f"field '{path or 'event'}': {what}")
    if len(errors) > most:
        parts.append(f"and {len(errors) - most} more")
    return "; ".join(parts)


# -- one file ----------------------------------------------------------------


class BrokenFile(Exception):
    """Reading stopped: the file could not be opened or decompressed."""

    partial: bytes = b""  # the unfinished line where it broke


#: How the message of a file that is no table log starts (see not_a_log).
NOT_A_LOG: Final = "not a table log"

#: Lines of text (none a JSON object) that make a file no table log.
_TEXT_LINES: Final = 10

#: How much of a file's start (decompressed) is looked at to tell a table
#: log from another file (a database, an image, a README).
_SNIFF: Final = 64 * 1024


def not_a_log(head: bytes, complete: bool) -> str | None:
    """Why a file that starts with ``head`` is no table log (NOT_A_LOG: ...),
    or None if it may be one.

    A table log is UTF-8 JSON Lines: a file is taken for one if any
    non-blank line of its start is a JSON object (or the start is one line
    that may still become one). Else, if it is binary (a NUL byte, not
    UTF-8) or has at least ``_TEXT_LINES`` lines of text, reading it line by
    line would give a MALFORMED_LINE for each of up to thousands of lines:
    it gets one error instead. A few lines of text are read as lines.
    ``complete``: ``head`` is the whole file.

    >>> not_a_log(b'{"type":"match_start"}\\n', True) is None
    True
    >>> not_a_log(b'DUCK\\x00\\x00\\x01', True)
    'not a table log: binary content (a NUL byte at byte 4); a table log is UTF-8 JSON Lines'
    >>> not_a_log(b'# Title\\n' + b'some text\\n' * 11, True)
    'not a table log: none of its first 12 lines is a JSON object; a table log is UTF-8 JSON Lines'
    >>> not_a_log(b'# Title\\nsome text\\n', True) is None  # two bad lines, each reported
    True
    """
    lines = head.split(b"\n")
    last = b"" if complete else lines.pop()  # may be cut short: judged only if alone
    seen = 0
    for raw in lines:
        text = raw.strip(b" \t\r").removeprefix(b"\xef\xbb\xbf")  # a BOM is no reason to refuse
        if not text:
            continue
        seen += 1
        if text[:1] == b"{":
            try:
                if isinstance(orjson.loads(text), dict):
                    return None
            except orjson.JSONDecodeError:
                pass
    if not seen and (not last.strip() or last.lstrip()[:1] == b"{"):
        return None  # empty, blank, or one long line still being read
    why = ""
    nul = head.find(b"\x00")
    if nul >= 0:
        why = f"binary content (a NUL byte at byte {nul})"
    else:
        try:
            head.decode()
        except UnicodeDecodeError as exc:
            if complete or exc.start < len(head) - 3:  # not a character cut at the end
                why = f"binary content (not UTF-8 at byte {exc.start})"
    if not why:
        if seen < _TEXT_LINES:
            return None
        why = f"none of its first {seen:,} lines is a JSON object"
    return f"{NOT_A_LOG}: {why}; a table log is UTF-8 JSON Lines"


def read_chunks(path: Path) -> Iterator[bytes]:
    """The bytes of a log file (gzip or not) in pieces; :class:`BrokenFile`
    where reading breaks, or at once for a file that is no table log."""
    try:
        f: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise BrokenFile(f"cannot open file: {exc.strerror or exc}") from exc
    what = "file"
    with f:
        try:
            head = f.peek(2)[:2]  # type: ignore[attr-defined]  # a BufferedReader
            if head == _GZIP_MAGIC:
                stream: Any = gzip.GzipFile(fileobj=f, mode="rb")
                what = "gzip"
            elif path.name.endswith(".gz") and head:
                raise BrokenFile("not a gzip file (named .gz but no gzip header)")
            else:
                stream, what = f, "file"
            # the start is looked at before any line is given out (see not_a_log)
            first: list[bytes] = []
            got = 0
            broke: Exception | None = None
            try:
                while got < _SNIFF and (chunk := stream.read1(_CHUNK)):
                    first.append(chunk)
                    got += len(chunk)
            except (EOFError, OSError, zlib.error) as exc:  # what was read before is kept
                broke = exc
            head = b"".join(first)
            if head.startswith(BOM):  # what Windows editors write first: not part of line 1
                head = head[len(BOM) :]
            why = not_a_log(head[: _SNIFF * 2], complete=got < _SNIFF and broke is None)
            if why is not None:
                raise BrokenFile(why)
            # in pieces of the chunk size still: a line too long is told by them
            yield from (head[i : i + _CHUNK] for i in range(0, len(head), _CHUNK))
            if broke is not None:
                raise broke
            while chunk := stream.read1(_CHUNK):
                yield chunk
        except EOFError as exc:
            raise BrokenFile(f"truncated {what}: {exc}") from exc
        except (OSError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise BrokenFile(f"corrupt or unreadable {what}: {exc}") from exc


def split_lines(chunks: Iterator[bytes]) -> Iterator[bytes | None]:
    """Lines of a byte stream without their ``\\n``; None for a line too long.

    An unfinished last line (no final newline) is a line too. If reading
    breaks, the unfinished line goes with the exception (``partial``).
    """
    pending: list[bytes] = []  # pieces of a line spread over chunks
    size = 0
    too_long = False
    try:
        for chunk in chunks:
            if b"\n" not in chunk:
                if not too_long:
                    pending.append(chunk)
                    size += len(chunk)
                    if size > MAX_LINE_BYTES:
                        too_long, pending, size = True, [], 0
                continue
            parts = chunk.split(b"\n")
            if too_long or pending:
                first = parts[0]
                del parts[0]  # rare: once per chunk at most
                if too_long:
                    yield None
                else:
                    pending.append(first)
                    whole = b"".join(pending)
                    yield whole if len(whole) <= MAX_LINE_BYTES else None
            tail = parts.pop()
            pending, size, too_long = ([tail], len(tail), False) if tail else ([], 0, False)
            yield from parts
    except BrokenFile as exc:
        exc.partial = b"".join(pending)
        raise
    if too_long:
        yield None
    elif pending:
        yield b"".join(pending)


def whole_lines(chunks: Iterator[bytes], size: int) -> Iterator[bytes]:
    """The chunks regrouped into pieces of whole lines of about ``size`` bytes
    (the last may lack its newline). If reading breaks, the unfinished line
    goes with the exception (``partial``) after the whole lines before it."""
    pending: list[bytes] = []
    got = 0
    try:
        for chunk in chunks:
            pending.append(chunk)
            got += len(chunk)
            if got >= size:
                cut = chunk.rfind(b"\n") + 1  # in the last chunk: one copy of the rest
                if cut:
                    pending[-1] = chunk[:cut]
                    yield b"".join(pending)
                    rest = chunk[cut:]
                    pending, got = ([rest], len(rest)) if rest else ([], 0)
    except BrokenFile as exc:
        data = b"".join(pending)
        cut = data.rfind(b"\n") + 1
        if cut:
            yield data[:cut]
        exc.partial = data[cut:]
        raise
    if pending:
        yield b"".join(pending)


def not_utf8(raw: bytes, exc: UnicodeDecodeError, file: str, line: int) -> BadLine:
    """The bad line of ``raw``, which is not UTF-8 (``exc``)."""
    text = raw.decode(errors="replace")
    try:  # the match may still be readable: then the finding goes there
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        obj = None
    match, seq, hand = _ids(obj)
    what = f"line {line}: not UTF-8 ({exc.reason} at byte {exc.start})"
    return BadLine(file, line, MALFORMED_LINE, what, match, seq, hand, text)


class LogReader:
    """Reads one log file as records; :attr:`stats` counts as it goes.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.jsonl"
    >>> _ = p.write_bytes(b'\\n{"type":"nap","match":"m","seq":1}\\n')
    >>> reader = LogReader(p)
    >>> [(r.line, r.code) for r in reader.records()]
    [(2, 'UNKNOWN_EVENT')]
    >>> reader.stats  # doctest: +ELLIPSIS
    FileStats(path='...a.jsonl', lines=2, bad_lines=1)
    """

    __slots__ = ("_bad_lines", "_lines", "_started", "file", "path")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.file = os.fspath(path)
        self._lines = 0
        self._bad_lines = 0
        self._started = False

    @property
    def stats(self) -> FileStats:
        """Lines and bad lines of the file: final once :meth:`records` is exhausted
        (or closed, when stopped early)."""
        return FileStats(self.file, self._lines, self._bad_lines)

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def records(self) -> Iterator[Record]:
        """The records of the file, in order; blank lines give none. Single use."""
        if self._started:
            raise RuntimeError(f"{self.file}: records() can be iterated only once")
        self._started = True
        file = self.file
        validators = _VALIDATE_JSON
        new, set_file, set_line = _new_object, _SET_FILE, _SET_LINE
        set_event, set_raw = _SET_EVENT, _SET_RAW
        n = bad = 0
        try:
            for raw in split_lines(read_chunks(self.path)):
                n += 1
                if raw == b"":  # an empty line: counted, not read (a million of them must be quick)
                    continue
                # Fast path, inlined (it is most of the time per line): an
                # event line as the server writes it, valid for its type.
                if raw is not None and raw.startswith(b'{"type":"'):
                    try:
                        text = raw.decode()
                    except UnicodeDecodeError:
                        text = ""
                    if text:
                        if text[-1] == "\r":
                            text = text[:-1]
                        validate = validators.get(text[9 : text.find('"', 9)])
                        if validate is not None:
                            try:
                                event = validate(text)
                            except ValidationError:
                                event = None
                            if event is not None:
                                good = new(EventLine)  # = EventLine(file, n, event, text)
                                set_file(good, file)
                                set_line(good, n)
                                set_event(good, event)
                                set_raw(good, text)
                                yield good
                                continue
                rec = any_line(raw, file, n)
                if rec is None:
                    continue
                if rec.__class__ is BadLine:
                    bad += 1
                yield rec
        except BrokenFile as exc:
            n += 1
            bad += 1
            raw_text = exc.partial.decode(errors="replace")
            yield BadLine(file, n, MALFORMED_LINE, f"line {n}: {exc}", None, None, None, raw_text)
        finally:
            # Also when the consumer stops early and the generator is closed.
            self._lines, self._bad_lines = n, bad


def any_line(raw: bytes | None, file: str, n: int) -> Record | None:
    """A line as read from the file (without ``\\n``); None if it is blank."""
    if raw is None:
        what = f"line {n}: longer than {MAX_LINE_BYTES} bytes"
        return BadLine(file, n, MALFORMED_LINE, what, None, None, None, "")
    if raw[-1:] == b"\r":
        raw = raw[:-1]
    if not raw.strip(b" \t"):
        return None  # blank: counted, not read
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        return not_utf8(raw, exc, file, n)
    return parse_line(text, file, n)


def read_lines(path: str | os.PathLike[str]) -> Iterator[Record]:
    """The records of one file (see :class:`LogReader` for its stats)."""
    return LogReader(path).records()


# -- paths -------------------------------------------------------------------

_log = logging.getLogger(__name__)
_KINDS: Final = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _regular(path: Path) -> bool:
    """Whether a file found in a folder is a regular file (links followed);
    a note says why another is skipped."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        _log.warning("skipped %s: %s", path, exc.strerror or exc)
        return False
    if stat.S_ISREG(mode):
        return True
    what = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    _log.warning("skipped %s: %s, not a regular file", path, what)
    return False


def iter_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The log files named by ``paths``: files as given, folders searched
    recursively for ``*.jsonl`` and ``*.jsonl.gz`` (hidden entries skipped,
    symlinked folders not followed), each folder's files sorted by path.
    A file reached twice is read once. In a folder only regular files are
    taken: a named pipe, a device or a socket (reading one may never end)
    is skipped with a note on stderr (the ``replay.reader`` logger).

    Raises :class:`UsageError` at once if a path does not exist, and when
    the walk reaches a folder with no log in it.
    """
    given = [Path(p) for p in paths]
    for p in given:
        if not p.exists():
            raise UsageError(p)
    return _expand(given)


def display_names(paths: Iterable[str | os.PathLike[str]], found: Iterable[Path]) -> dict[str, str]:
    """The name each file `found` under `paths` is shown by (findings, pages):
    its path from the folder given, that folder's own name first, or a
    file's own name; never the server's path to it. A name two files would
    share keeps more of their folders.

    >>> display_names(["/srv/logs", "/tmp/up/x.jsonl"], [Path("/srv/logs/2026/a.jsonl"), Path("/tmp/up/x.jsonl")])
    {'/srv/logs/2026/a.jsonl': 'logs/2026/a.jsonl', '/tmp/up/x.jsonl': 'x.jsonl'}
    """
    tops = [Path(os.path.abspath(p)) for p in paths]
    out: dict[str, str] = {}
    taken: dict[str, str] = {}
    for f in found:
        full = Path(os.path.abspath(f))
        top = next((t for t in tops if t != full and t in full.parents), None)
        parts = full.relative_to(top.parent).parts if top is not None and top.parent != top else (full.name,)
        name = "/".join(parts)
        lead = full.parts[: len(full.parts) - len(parts)]
        while name in taken and taken[name] != str(full) and lead:
            *rest, last = lead
            lead = tuple(rest)
            name = f"{last.strip('/') or '/'}/{name}" if last != "/" else f"/{name}"
        taken[name] = str(full)
        out[os.fspath(f)] = name
    return out


def _expand(given: list[Path]) -> Iterator[Path]:
    seen: set[str] = set()
    for top in given:
        if top.is_dir():
            found: list[Path] = []
            for folder, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                base = Path(folder)
                found.extend(
                    base / name
                    for name in files
                    if not name.startswith(".") and name.endswith(LOG_SUFFIXES) and _regular(base / name)
                )
            if not found:  # a typo'd or empty folder must not pass as "all valid"
                raise UsageError(top, f"no table logs (*.jsonl, *.jsonl.gz) in {os.fspath(top)}")
            found.sort(key=lambda p: p.parts)
        else:
            found = [top]
        for p in found:
            key = os.path.realpath(p)
            if key not in seen:
                seen.add(key)
                yield p
