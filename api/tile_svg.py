"""The pieces the replay board is drawn with: tile symbols, and the classes that
show an element over a run of plies (one drawing for the whole hand, `ply_style`
picks the ply shown)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["U", "clip", "ply_style", "runs", "shown_over", "span", "tile_defs"]

U = 22  # half a tile, in px
_PIP_AT = {
    0: (),
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.22), (0.75, 0.22), (0.25, 0.5), (0.75, 0.5), (0.25, 0.78), (0.75, 0.78)),
}


def _face(n: int) -> str:
    dots = "".join(f'<circle cx="{x * 20:g}" cy="{y * 20:g}" r="2.2" fill="#1d1d1b"/>' for x, y in _PIP_AT[n])
    return f'<symbol id="f{n}" viewBox="0 0 20 20">{dots}</symbol>'


_BODY = (
    '<symbol id="bh" viewBox="0 0 40 20"><rect x=".5" y=".5" width="39" height="19" rx="3" fill="#fffdf4" '
    'stroke="#3a3a36"/><line x1="20" y1="3" x2="20" y2="17" stroke="#8a877c"/></symbol>'
    '<symbol id="bv" viewBox="0 0 20 40"><rect x=".5" y=".5" width="19" height="39" rx="3" fill="#fffdf4" '
    'stroke="#3a3a36"/><line x1="3" y1="20" x2="17" y2="20" stroke="#8a877c"/></symbol>'
)


def _tile_h(a: int, b: int) -> str:
    return (
        f'<symbol id="h{a}{b}" viewBox="0 0 40 20"><use href="#bh" width="40" height="20"/>'
        f'<use href="#f{a}" width="20" height="20"/><use href="#f{b}" x="20" width="20" height="20"/></symbol>'
    )


def _tile_v(a: int, b: int) -> str:
    return (
        f'<symbol id="v{a}{b}" viewBox="0 0 20 40"><use href="#bv" width="20" height="40"/>'
        f'<use href="#f{a}" width="20" height="20"/><use href="#f{b}" y="20" width="20" height="20"/></symbol>'
    )


_SYMBOLS = {f"{k}{a}{b}": f(a, b) for k, f in (("h", _tile_h), ("v", _tile_v)) for a in range(7) for b in range(7)}
_DEFS_HEAD = "<defs>" + "".join(_face(n) for n in range(7)) + _BODY


def tile_defs(symbols: set[str]) -> str:
    """The `<defs>` of a drawing that uses the tile `symbols` (hAB, vAB): those,
    the pip faces f0..f6 and the tile bodies bh and bv they are made of.

    A board carries only its own tiles: all 98 took 28 KB of a 62 KB page.

    >>> d = tile_defs({"h52", "v33"})
    >>> d.count("<symbol id="), 'id="h52"' in d, 'id="h25"' in d
    (11, True, False)
    """
    return _DEFS_HEAD + "".join(_SYMBOLS[k] for k in sorted(symbols)) + "</defs>"


def runs(values: list[Any]) -> list[tuple[int, int, Any]]:
    """(first ply, stop ply, value) of each run of equal values.

    >>> runs(["a", "a", "b", "a"])
    [(0, 2, 'a'), (2, 3, 'b'), (3, 4, 'a')]
    """
    out: list[tuple[int, int, Any]] = []
    for k, v in enumerate(values):
        if out and out[-1][2] == v:
            out[-1] = (out[-1][0], k + 1, v)
        else:
            out.append((k, k + 1, v))
    return out


@lru_cache(maxsize=65536)
def span(on: int, off: int, last: int) -> str:
    """The classes that show an element from ply `on` up to, not including, `off`
    (see `ply_style`): none for an element shown throughout."""
    cls = []
    if on > 0:
        cls.append(f"on{on}")
    if off <= last:
        cls.append(f"off{off}")
    return " ".join(cls)


def shown_over(el: str, span: str) -> str:
    """`el` shown over `span` (a group only when it has one)."""
    return f'<g class="{span}">{el}</g>' if span else el


def ply_style(n: int, last: int) -> str:
    """The rule that shows ply `n` of a board drawn by `board_svg`: it hides
    what appears later (`on{k}`, k > n) and what is gone by then (`off{k}`, k <= n).

    >>> ply_style(1, 3)
    '<style id="ply-style">svg.board .on2,svg.board .on3,svg.board .off1{display:none}</style>'
    """
    hide = [f"svg.board .on{k}" for k in range(n + 1, last + 1)]
    hide += [f"svg.board .off{k}" for k in range(1, n + 1)]
    rule = ",".join(hide) + "{display:none}" if hide else ""
    return f'<style id="ply-style">{rule}</style>'


def clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"
