"""The replay page's cached string builders against the plain ones: escaping
(`esc`, analysis_view's), a move's cell, the paths (`u`), a seat's hand in
the board's text; and the board's text, written unescaped, never holds a
character to escape. Random inputs, and the inputs the caches could mix up
(1 and True, a str and its Markup)."""

from __future__ import annotations

import random
from html import escape
from urllib.parse import quote, urlencode

from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from api import analysis_view
from api.hand_page import board_text
from api.names import shown
from api.pages import u
from api.replay_model import esc, label
from replay.tiles import tile_name
from tests.test_board_lines import random_hand

texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=30) | st.sampled_from(
    ["62 left", "pass", "a&b", '<"x">', "p-jose\u200b", "p-j\u043ese", "José"])


def plain_esc(x: object) -> str:
    return escape(shown(str(x)), quote=True)


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, st.integers(-5, 99), st.floats(allow_nan=False), st.none(), st.booleans()))
def test_cached_escaping_is_the_plain_escaping(x: object) -> None:
    for _ in range(2):  # the second time from the cache
        assert esc(x) == plain_esc(x)
        assert analysis_view._esc(x) == plain_esc(x)
        if isinstance(x, str):
            assert analysis_view._move_cell(x) == plain_esc(analysis_view.shown_move(x))


def plain_u(*parts: object, **params: object) -> str:
    path = "/" + "/".join(quote(str(p), safe="") for p in parts)
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(texts, st.integers(0, 3), st.booleans()), max_size=4),
       st.dictionaries(st.sampled_from(["ply", "view", "match", "hand"]), st.one_of(texts, st.integers(0, 3), st.booleans(), st.none()),
                       max_size=3))
def test_cached_paths_are_the_plain_paths(parts: list[object], params: dict[str, object]) -> None:
    for _ in range(2):
        assert u(*parts, **params) == plain_u(*parts, **params)


def test_paths_tell_apart_what_a_cache_could_mix_up() -> None:
    assert (u("x", 1), u("x", True), u("x", 1.0)) == ("/x/1", "/x/True", "/x/1.0")
    assert u("x", ply=1) + u("x", ply=True) == "/x?ply=1/x?ply=True"
    assert u("a", b=1, c=2) == "/a?b=1&c=2" and u("a", c=2, b=1) == "/a?c=2&b=1"
    assert u(Markup("a&b")) == u("a&b") == "/a%26b"
    assert u("x", q=["a", "b"]) == plain_u("x", q=["a", "b"])  # not hashable: past the cache


def test_the_boards_text_needs_no_escaping_and_names_each_hand() -> None:
    rnd = random.Random(11)
    for players in (2, 3, 4):
        for _ in range(10):
            for p in random_hand(rnd, players):
                text = board_text(p)
                assert plain_esc(text) == text
                for seat, tiles in enumerate(p.hands or []):
                    n = len(tiles or ())
                    if n:
                        assert f"Seat {seat}: {n} tile{'s' if n != 1 else ''} ({' '.join(label(t) for t in tiles or ())})" in text


def test_the_twin_writes_the_line_and_the_hands_as_the_plain_way() -> None:
    rnd = random.Random(5)
    for players in (2, 3, 4):
        for p in random_hand(rnd, players):
            got = p.to_json()
            assert got["line"] == [f"{t.a}{t.b}" for t in p.line]
            assert got["hands"] == [None if h is None else [tile_name(t) for t in h] for h in p.hands or []]
