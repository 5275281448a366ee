"""The game's own words, as the pages use them: one entry a word, in English
with the Spanish term the tables say, spelled with its accents.

The pages link every use of a word here (`term` in the templates: a link to
its entry on /glossary, with the definition as a tooltip); /glossary lists
them all and /api/glossary is its JSON twin. The meanings follow the rules
the desk checks (docs/rules.md); where a table's custom differs, the entry
says which way the desk reads it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import asdict, dataclass
from typing import Any

from markupsafe import Markup, escape

__all__ = ["TERMS", "Term", "as_json", "find", "term_link"]


@dataclass(frozen=True, slots=True)
class Term:
    key: str  # the anchor on /glossary: ascii, lower case
    english: str
    spanish: str  # as the tables say it, accents included ("" where the game has no Spanish word of its own)
    meaning: str
    also: tuple[str, ...] = ()  # other spellings and words a page or a log may use for it


TERMS: tuple[Term, ...] = (
    Term("tile", "tile", "ficha",
         "One of the 28 pieces of a double-six set. The pages write a tile as its two halves in "
         "brackets, [6|2]; the JSON and the downloads write the same tile as the text 62 (higher "
         "half first).", ("bone", "domino")),
    Term("double", "double", "doble",
         "A tile with the same number on both halves, such as [5|5].", ("doble",)),
    Term("line", "line of play", "la mesa",
         "The tiles laid so far, end to end. Its two open numbers are the ends: the next tile must "
         "match one of them.", ("layout", "board")),
    Term("boneyard", "boneyard", "el pozo",
         "The tiles nobody was dealt. In a draw game a player who cannot play draws from it.",
         ("stock", "pozo")),
    Term("pase", "pass", "pase",
         "A turn where the player has no tile that fits either end and lays nothing (the table "
         "hears \"paso\"). Some tables pay a bonus to the passer's opponents.", ("pass", "paso")),
    Term("domino", "domino", "dominó",
         "Going out: the hand ends because a player laid their last tile, and their side wins "
         "the hand.", ("went out",)),
    Term("tranque", "block", "tranque",
         "The hand ends because nobody can lay a tile: both ends show the same number and all "
         "seven tiles of it are on the line. The tile that closed it is also called the tranque; "
         "the hand itself is a trancado. The side with the fewest pips left usually wins it.",
         ("block", "blocked", "trancado", "tranca")),
    Term("capicua", "capicúa", "capicúa",
         "Going out with a tile that is not a double and fitted both ends, which showed two "
         "different numbers. Some tables pay a bonus for it.", ("capicú",)),
    Term("chuchazo", "chuchazo", "chuchazo",
         "Going out with the double blank [0|0] (la chucha). Some tables pay a bonus for it; never "
         "for a block.", ("chucha",)),
    Term("dominao", "dominao", "dominao",
         "Going out with a double that fitted both ends (a capicúa of doubles). No bonus.",
         ("dominado",)),
    Term("puerta", "the last tile of a number", "puerta",
         "The last unplayed tile carrying a number that an end shows: whoever holds it holds "
         "\"la puerta\" of that number.", ()),
    Term("ahorcado", "hanged double", "ahorcado",
         "A double that can no longer be played, because the other six tiles of its number are "
         "already on the line.", ("hanged", "hanged double", "hanged doubles")),
    Term("mano", "hand", "mano",
         "One deal played out, from the first tile to a domino or a block. A match is several "
         "hands.", ("hand",)),
    Term("chiva", "shutout", "chiva / zapato",
         "A match (or game) won while the other side scored nothing. Puerto Rico says chiva, "
         "Venezuela zapato; the desk records it as a note on the result.", ("zapato", "shutout")),
    Term("pips", "pips", "puntos",
         "The dots on a tile: a tile is worth the sum of its halves, the whole set 168. A hand's "
         "winners usually score the pips left in the other hands.", ("pip",)),
    Term("par", "par", "",
         "What a deal is worth under best play by every seat with every hand known, before the "
         "first move; the hand's result set against it shows what play added or lost.", ()),
    Term("side", "side", "pareja / lado",
         "Who scores together: a pair of partners in a four-player partnership game, else each "
         "player alone. Every value the pages draw is counted from a side named on the chart.",
         ("team", "pair")),
)

_BY_WORD: dict[str, Term] = {}


def _fold(text: str) -> str:
    """Lower case, accents off: how a page's word is looked up.

    >>> _fold("Capicúa")
    'capicua'
    """
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


for _t in TERMS:
    for _w in (_t.key, _t.english, _t.spanish, *_t.also):
        if _w:
            _BY_WORD.setdefault(_fold(_w), _t)


def find(word: str) -> Term | None:
    """The entry for `word`, however it is spelled (accents and case aside).

    >>> find("TRANQUE").english
    'block'
    >>> find("nonsense") is None
    True
    >>> term_link("pips").endswith(">pips</a>")  # an English word stays English
    True
    """
    return _BY_WORD.get(_fold(word))


def term_link(word: str, shown: str | None = None) -> Markup:
    """`shown` (else the entry's own spelling of `word`) linked to its glossary
    entry, the meaning as its tooltip; an unknown word comes back as plain text.

    >>> print(term_link("capicua"))
    <a class="term" href="/glossary#capicua" title="capicúa: Going out with a tile that is not a double and fitted both ends, which showed two different numbers. Some tables pay a bonus for it.">capicúa</a>
    """
    t = find(word)
    if t is None:
        return escape(shown or word)
    # the word as given, but a Spanish word with its accents ("capicua" is shown "capicúa")
    spanish = t.spanish and _fold(word) == _fold(t.spanish) and word != t.english
    label = shown or (t.spanish if spanish else word)
    return Markup('<a class="term" href="/glossary#{}" title="{}: {}">{}</a>').format(
        t.key, t.spanish or t.english, t.meaning, label)


def as_json() -> list[dict[str, Any]]:
    """Every entry, as /api/glossary sends it."""
    return [{**asdict(t), "also": list(t.also)} for t in TERMS]
