"""Writing a run's lines to a file or a stream, gzipped or not."""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from pathlib import Path
from typing import IO


def write_lines(lines: Iterable[bytes], out: str | Path | IO[bytes], *, gz: bool = False) -> int:
    """Write lines with a newline each; gzip (mtime 0: same bytes every time) if asked
    or if the name ends in .gz. Returns the number of lines."""
    count = 0
    if isinstance(out, str | Path):
        path = Path(out)
        gz = gz or path.name.endswith(".gz")
        with open(path, "wb") as f:
            return write_lines(lines, f, gz=gz)
    sink: IO[bytes] = out
    z: gzip.GzipFile | None = None
    if gz:
        z = gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0)
        sink = z  # type: ignore[assignment]
    buf: list[bytes] = []
    for line in lines:
        buf.append(line)
        count += 1
        if len(buf) >= 4096:
            buf.append(b"")
            sink.write(b"\n".join(buf))
            buf = []
    if buf:
        buf.append(b"")
        sink.write(b"\n".join(buf))
    if z is not None:
        z.close()
    return count
