"""A certificate in words: the HTML page (Jinja2) and its PDF (WeasyPrint).

The page is one standalone document (its stylesheet inline, no script, no
navigation) so that it prints as it shows. The PDF is WeasyPrint's
rendering of the same HTML; its print stylesheet puts "page x of N" and
the certificate's id in the margin of every page. WeasyPrint needs
Debian's pango (``.ci/run`` installs it); it is imported only to make a
PDF.
"""

from __future__ import annotations

import math
from typing import Any, Final

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

__all__ = ["GLOSSARY", "TEST_WORDS", "render_html", "render_pdf"]

#: Every statistic of the certificate, in one sentence.
TEST_WORDS: Final[dict[str, str]] = {
    "tile_seat": "Does each tile land in each seat's hand (and in the stock) as often as chance says? "
    "Pearson's chi-square over the tile-by-seat table, scaled for its fixed margins.",
    "tile_position": "Does each tile land at each place of the deck equally often? Chi-square over the "
    "tile-by-position table.",
    "order_memory": "Does the shuffled deck remember the tiles' starting order? Rank correlation "
    "between a tile's starting place and its dealt place, z-test.",
    "doubles_per_hand": "Do hands hold 0, 1, 2, ... doubles as often as chance says? Goodness of fit "
    "corrected for the four hands of a deal being dealt together.",
    "five_doubles": "Are deals with a hand of five or more doubles (a redeal in many rules) as rare as "
    "chance says? Exact binomial test.",
    "hand_pips": "Are hands' pip totals spread as chance says? Goodness of fit, corrected as above.",
    "seat_pips": "Does any seat get more pips on average than the others? Chi-square on the seat means.",
    "serial_pips": "Does a deal's pips follow the previous deal's at the same table? Lag-1 correlation, "
    "z-test.",
    "repeated_deals": "Do deals repeat more than chance allows (a small seed space)? Birthday-bound "
    "Poisson test.",
    "modulo_bias_lr": "Targeted: the exact likelihood ratio of the draws Fisher-Yates made against the "
    "modulo-bias bug (small draws favoured), z-test.",
    "cyclic_decks": "Targeted: are there too many decks that Sattolo's off-by-one bug could make "
    "(one in 28 by chance)? Exact binomial test.",
    "position_lr_planet_poker": "Targeted: the likelihood ratio of the tiles' places against the "
    "'swap with any place' loop (Planet Poker, 1999), z-test.",
    "position_lr_random_comparator": "Targeted: the likelihood ratio of the tiles' places against "
    "a sort with a random comparator, z-test.",
    "same_position": "Targeted: do consecutive deals at a table keep tiles at the same places "
    "(a lazy reshuffle)? Count of kept places, z-test.",
}

#: The game's terms the certificate uses.
GLOSSARY: Final[dict[str, str]] = {
    "tile": "one of the 28 pieces of a double-six set, from 0-0 to 6-6; a double has the same number "
    "at both ends, and its pips are the sum of its two numbers.",
    "hand": "one deal and the play until someone goes out or the game blocks; also the 7 tiles a "
    "player is dealt.",
    "match": "the hands played at a table until a side reaches the target score.",
    "deal": "the shuffled order of the tiles: 7 to each seat in turn, the rest the stock.",
    "stock": "the tiles left face down after the deal (the boneyard), drawn in order in the games "
    "that draw.",
    "seat": "a place at the table, 0 to 3; the player in a seat may change between hands.",
    "seed chain": "the server commits to all of a match's seeds before it starts (a hash chain "
    "anchored in the first event) and reveals each after its hand, so anyone can re-derive the deal.",
    "deal-v1": "the published derivation of a deal from the seeds: HMAC-DRBG (SHA-256) and a "
    "Fisher-Yates shuffle.",
    "profile": "a named set of rules (partnership, draw or block game, scoring).",
    "p-value": "the chance, if the shuffle is fair, of a result at least this far from what chance "
    "predicts; small means suspicious.",
    "adjusted p": "the p-value after the Holm correction for testing many things at once.",
    "power": "the chance that a test catches a given cheat with this many deals.",
}


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if not math.isfinite(x):
            return "-"
        if x != 0 and abs(x) < 1e-4:
            return f"{x:.1e}"
        return f"{x:.{digits}g}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * float(x):.0f}%"


_env = Environment(
    loader=PackageLoader("reports.certificate", "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["num"] = _num
_env.filters["pct"] = _pct


def render_html(content: dict[str, Any]) -> str:
    """The certificate page of a certificate's JSON content."""
    names = dict.fromkeys(t["name"].split("[")[0] for t in (content["battery"] or {}).get("tests", []))
    words = {name: TEST_WORDS.get(name, "") for name in names}
    return _env.get_template("certificate.html").render(c=content, words=words, glossary=GLOSSARY)


def render_pdf(html: str) -> bytes:
    """The PDF of the certificate page (WeasyPrint)."""
    # here, not at the top: WeasyPrint loads pango through cffi, and only a PDF needs it
    import weasyprint  # noqa: PLC0415

    pdf: bytes = weasyprint.HTML(string=html).write_pdf()
    return pdf
