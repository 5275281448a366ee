"""Progress of a long run: a bar on a terminal, a plain line now and then elsewhere.

On a terminal the line is redrawn in place a few times a second. When the
output is a file or a pipe (a service's log, CI, ``nohup``), a run that
printed nothing for minutes looks hung, so a whole line is written every
`every` seconds instead (and once at the end): what is done, the rate and
the time left.

>>> import io
>>> out = io.StringIO()
>>> p = ProgressLine(100, out, "hands graded", every=0.0)
>>> p.show(40, now=p.t0 + 2.0)
>>> p.close(now=p.t0 + 5.0)
>>> print(out.getvalue(), end="")
40/100 hands graded (40%), 20.0/s, 0:03 left
100/100 hands graded (100%), 20.0/s, 0:00 left
"""

from __future__ import annotations

import time
from typing import IO, Final

__all__ = ["EVERY", "ProgressLine"]

#: Seconds between two lines when the output is not a terminal.
EVERY: Final = 10.0


def _clock(seconds: float) -> str:
    s = max(int(seconds), 0)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class ProgressLine:
    """`done` of `total` units, drawn on `out` (nothing when `out` is None)."""

    def __init__(self, total: float, out: IO[str] | None, unit: str, *, every: float | None = None) -> None:
        self.total = max(total, 1)
        self.out = out
        self.tty = out is not None and out.isatty()
        self.unit = unit
        self.every = 0.2 if self.tty else EVERY if every is None else every
        self.t0 = time.monotonic()
        self.last = self.t0
        self.done = 0.0
        self.drawn = False

    def show(self, done: float, *, total: float | None = None, extra: str = "", now: float | None = None) -> None:
        """Record `done` (and a new `total` when it is an estimate); draw if it is time."""
        self.done = done
        if total is not None:
            self.total = max(total, 1)
        now = time.monotonic() if now is None else now
        if self.out is None or now - self.last < self.every:
            return
        self.last = now
        self._draw(now, extra)

    def _draw(self, now: float, extra: str) -> None:
        assert self.out is not None
        frac = min(self.done / self.total, 1.0)
        rate = self.done / max(now - self.t0, 1e-9)
        left = _clock((self.total - self.done) / rate) if rate > 0 else "?"
        if self.tty:
            bar = "#" * int(frac * 30)
            self.out.write(f"\r[{bar:<30}] {frac:6.1%}  {self.done:,.0f}/{self.total:,.0f} {self.unit}  "
                           f"{rate:,.1f}/s  {left} left{extra} ")  # fmt: skip
        else:
            self.out.write(f"{self.done:,.0f}/{self.total:,.0f} {self.unit} ({frac:.0%}), {rate:,.1f}/s, "
                           f"{left} left{extra}\n")  # fmt: skip
        self.out.flush()
        self.drawn = True

    def close(self, *, now: float | None = None) -> None:
        """The last line: everything done (a newline ends the terminal's bar)."""
        if self.out is None:
            return
        if self.tty:
            if self.drawn:
                self.out.write("\n")
                self.out.flush()
            return
        now = time.monotonic() if now is None else now
        if self.drawn or now - self.t0 >= self.every:
            self.done = max(self.done, self.total)
            self._draw(now, "")
