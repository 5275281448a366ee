"""Player ids and names as a person reads them: nothing invisible, nothing
reordered, look-alikes told apart.

Ids and names come from logs, so a player can pass as another: `p-jose`
with a zero-width space after it, `p-jоse` with a Cyrillic `о`, a name
written with a right-to-left override that turns a table cell around.
`shown` writes every invisible or direction-changing character as its code
point (`p-jose⟨U+200B⟩`) and marks a text whose letters come from more than
one script; every page goes through it (api.pages, the templates' finalize).
`fold` is what search compares (NFKC, case and accents folded, invisibles
dropped), and `same_names` finds distinct players whose names fold alike.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from markupsafe import Markup, escape

from reports.search import fold, hidden

__all__ = ["as_value", "fold", "same_names", "scripts", "shown"]

def scripts(text: str) -> list[str]:
    """The scripts of the letters of `text`, by the first word of each
    letter's Unicode name, in order of appearance.

    >>> scripts("p-jоse"), scripts("José Núñez"), scripts("12-3")
    (['LATIN', 'CYRILLIC'], ['LATIN'], [])
    """
    seen: dict[str, None] = {}
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            seen.setdefault(name.split(" ", 1)[0] if name else "UNKNOWN", None)
    return list(seen)


@lru_cache(maxsize=65_536)
def shown(text: str) -> str:
    """`text` as a page shows it: invisible and direction characters as their
    code points, and a mark after it when its letters mix scripts.

    >>> shown("p-jose\\u200b"), shown("a\\u202eb")
    ('p-jose⟨U+200B⟩', 'a⟨U+202E⟩b')
    >>> shown("p-j\\u043ese")
    'p-jоse ⟨mixed scripts: Latin, Cyrillic⟩'
    >>> shown("José Núñez") == "José Núñez"
    True
    """
    if text.isascii() and text.isprintable():
        return text
    out = "".join(f"⟨U+{ord(ch):04X}⟩" if hidden(ch) else ch for ch in text)
    mixed = scripts(text)
    if len(mixed) > 1:
        out += f" ⟨mixed scripts: {', '.join(s.title() for s in mixed)}⟩"
    return out


def as_value(value: object) -> Markup:
    """`value` for a form field's value, exactly as it is (submitted again it
    finds the same rows), HTML-escaped, its invisible and direction
    characters written as character references so that none is in the page.

    >>> as_value("p-jose\u200b <b>"), as_value(None), as_value(__import__("datetime").date(2026, 11, 4))
    (Markup('p-jose&#8203; &lt;b&gt;'), Markup(''), Markup('2026-11-04'))
    """
    text = "" if value is None else str(value)
    return Markup("".join(f"&#{ord(ch)};" if hidden(ch) else str(escape(ch)) for ch in text))


def same_names(players: Iterable[tuple[str, str | None]]) -> list[dict[str, object]]:
    """Groups of distinct players (id, name) whose names (or, without one,
    ids) are one and the same after `fold`, largest first.

    >>> same_names([("p-1", "José Núñez"), ("p-2", "Jose\\u0301 Nu\\u0301n\\u0303ez"), ("p-3", "JOSE NUNEZ"), ("p-4", "Ana")])
    [{'folded': 'jose nunez', 'players': ['p-1', 'p-2', 'p-3']}]
    """
    groups: dict[str, list[str]] = {}
    for player, name in players:
        key = fold(name or player)
        if key:
            groups.setdefault(key, [])
            if player not in groups[key]:
                groups[key].append(player)
    found = [{"folded": k, "players": sorted(v)} for k, v in groups.items() if len(v) > 1]
    return sorted(found, key=lambda g: (-len(g["players"]), g["folded"]))  # type: ignore[arg-type]
