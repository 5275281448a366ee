"""Text search as people type it: case, accents, compatibility forms and
invisible characters aside ("jose" finds "José", "JOSÉ", "Jose" + U+0301
and "p-jose" + U+200B), in Python and in the store's SQL alike."""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["INVISIBLE_SQL", "contains", "fold", "folded_sql", "hidden", "players_matching", "players_matching_sql"]

#: Unicode categories nobody sees: formats (zero-width and direction marks,
#: the byte-order mark, soft hyphens, tags), controls, and the line and
#: paragraph separators.
_HIDDEN: Final = frozenset({"Cf", "Cc", "Zl", "Zp"})
#: Characters that are fine as they are, though in the categories above.
_PLAIN: Final = frozenset("\t\n\r")

#: SQL: the invisible characters `folded_sql` drops (a regular expression class).
INVISIBLE_SQL: Final = "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]"


def hidden(ch: str) -> bool:
    """Whether `ch` is invisible or changes direction (a page spells it out)."""
    return ch not in _PLAIN and unicodedata.category(ch) in _HIDDEN


def fold(text: str) -> str:
    """What search compares: NFKC, case folded, accents and invisible
    characters dropped.

    >>> fold("JOSÉ Núñez") == fold("jose\\u0301 nun\\u0303ez\\u200b") == "jose nunez"
    True
    >>> fold("Ｊｏｓｅ")
    'jose'
    """
    t = unicodedata.normalize("NFKC", text).casefold()
    t = "".join(ch for ch in unicodedata.normalize("NFD", t) if unicodedata.category(ch) != "Mn" and not hidden(ch))
    return unicodedata.normalize("NFC", t)


def folded_sql(col: str) -> str:
    """SQL folding column `col` as :func:`fold` folds a query (NFC rather
    than NFKC: DuckDB has no NFKC; the query side is folded in full)."""
    return f"strip_accents(lower(nfc_normalize(regexp_replace(coalesce({col}, ''), '{INVISIBLE_SQL}', '', 'g'))))"


def contains(query: str) -> str:
    """A LIKE pattern (with ``ESCAPE '\\'``) for text holding `query` anywhere,
    folded: what is typed is matched as typed, ``%`` and ``_`` included.

    >>> contains("Zoé_1")
    '%zoe\\\\_1%'
    """
    body = fold(query).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{body}%"


def players_matching(query: str) -> tuple[str, list[str]]:
    """SQL selecting the ids of the players `query` names (and its parameters):
    the player of that exact id alone if there is one (a link to a player's
    matches must not take in p-00010 for p-0001), else every player with the
    query in any part of the id or the name, case, accents and invisible
    characters aside ("martin" finds Martín)."""
    like = contains(query)
    return players_matching_sql("?", "?", "?", "?"), [query, query, like, like]


def players_matching_sql(exact: str, exact_again: str, like: str, like_again: str) -> str:
    """:func:`players_matching`'s SQL with the given placeholders (``$player``
    style ones may repeat: ``"$p", "$p", "$like", "$like"``): `exact` is the
    query as typed, `like` its :func:`contains` pattern."""
    return f"""SELECT player FROM players
              WHERE CASE WHEN EXISTS (SELECT 1 FROM players WHERE player = {exact}) THEN player = {exact_again}
                         ELSE {folded_sql("player")} LIKE {like} ESCAPE '\\'
                              OR {folded_sql("name")} LIKE {like_again} ESCAPE '\\' END"""
