"""The pages as a person reads them: the glossary and the docs served, the
graded moves behind a count, one tile notation, and no command line or
developer word on a user page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.glossary import TERMS, find, term_link
from tests.test_analysis import INTL


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from replay.ingest import ingest

    db = tmp_path_factory.mktemp("words") / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(INTL)], db=db, workers=0, analysis=(0, 0))  # perfect information only: nothing sampled yet
    with TestClient(create_app(db)) as c:
        yield c


def test_the_glossary_spells_the_games_words_with_their_accents(client: TestClient) -> None:
    page = client.get("/glossary")
    assert page.status_code == 200
    for word in ("capicúa", "chuchazo", "dominó", "dominao", "puerta", "ahorcado", "tranque", "pase"):
        assert word in page.text, word
    assert "capicua" not in re.sub(r'(id="|#)capicua', "", page.text).lower()  # only the anchor is unaccented
    got = client.get("/api/glossary").json()
    assert {t["key"] for t in got} == {t.key for t in TERMS}
    # every entry is reachable by its anchor
    for t in TERMS:
        assert f'id="{t.key}"' in page.text


def test_a_word_is_found_however_it_is_spelled() -> None:
    assert find("Capicua") is find("capicúa") is find("capicú")
    assert find("hanged doubles") is find("ahorcado")
    link = term_link("block")
    assert 'href="/glossary#tranque"' in link and ">block<" in link


def test_the_docs_are_pages_and_link_each_other(client: TestClient) -> None:
    index = client.get("/help")
    assert 'href="/help/analysis"' in index.text and 'href="/glossary"' in index.text
    doc = client.get("/help/insights")
    assert doc.status_code == 200 and "<h1>" in doc.text
    assert not re.search(r'href="[a-z-]+\.md', doc.text)  # links between docs point at pages
    assert client.get("/help/no-such-doc").status_code == 404
    assert client.get("/help/..%2Fpyproject").status_code == 404
    assert client.get("/help/screenshot-match-desktop.png").headers["content-type"] == "image/png"


def test_the_moves_behind_a_count_carry_the_same_filters(client: TestClient) -> None:
    match = "m-example-1"
    page = client.get(f"/matches/{match}")
    assert page.status_code == 200
    # the match page's class counts link to /moves with the match, the seat and the class
    links = re.findall(r'href="(/moves\?match=[^"]+class=(\w+)[^"]*)">(\d+)</a>', page.text)
    assert links, "no class count links to its moves"
    for href, _cls, n in links:
        listed = client.get(href.replace("&amp;", "&").replace("/moves", "/api/graded-moves", 1)).json()
        assert listed["total"] == int(n), href
    every = client.get("/api/graded-moves", params={"match": match}).json()
    assert every["total"] >= sum(int(n) for _, _, n in links)
    assert client.get("/moves", params={"class": "nonsense"}).status_code == 422


def test_one_tile_notation_and_no_command_lines(client: TestClient) -> None:
    hand = client.get("/matches/m-example-1/hands/1")
    assert hand.status_code == 200
    text = hand.text
    # the board as text and the value graph's titles write tiles as [a|b]
    board = re.search(r"<summary>The board as text</summary><p>(.*?)</p>", text)
    assert board is not None and re.search(r"\[\d\|\d\]", board.group(1))
    assert not re.search(r"Line, left to right: \d\d ", text)
    titles = re.findall(r"<title>(ply \d+: seat \d [^<]*)</title>", text)
    assert titles and all(re.search(r"\[\d\|\d\]|pass|draw", t) for t in titles)
    # the graph says whose points it draws, in its label and on itself
    # one convention for the page, in the same words on the graph, in its label, above it and under each move table
    words = "points for seats 0 and 2 (up: they are ahead)"
    assert re.search(r'class="vgraph"[^>]*role="group"[^>]*aria-label="[^"]*' + re.escape(words), text)
    assert f'class="lab whose">{words}' in text
    assert re.search(r"Par <b>[-+]\d+</b>, result <b>[-+]\d+</b> \(points for seats 0 and 2;", text)
    assert f"Graph and move values: {words}." in text
    tables = re.findall(r'<p class="muted whose">(points for [^;<]*)', text)
    assert tables and all(re.fullmatch(r"points for seats 0 and 2, as on the graph \(seat \d wants them (high|low)\)", t)
                          for t in tables)
    assert "side 0" not in text and "mover's side" not in text
    match = client.get("/matches/m-example-1").text
    for page in (match, client.get("/suspicious").text, client.get("/players").text):
        assert "replay serve" not in page and "replay analyze" not in page and "--samples" not in page


def test_the_move_tables_count_for_the_graphs_side(client: TestClient) -> None:
    """The exact value of the move played, in its ply's table, is the graph's
    point after it: seats 0 and 2's points, whoever moved."""
    twin = client.get("/api/matches/m-example-1/hands/1").json()
    text = client.get("/matches/m-example-1/hands/1").text
    flipped = 0
    for p in twin["info"]["analysis"]["plies"]:
        section = text[text.index(f'id="ply-{p["ply"]}"'):]
        section = section[: section.index("</section>")]
        row = re.search(r'<tr class="played"><td>.*?</td><td class="num">([-+]\d+)</td>', section)
        assert row is not None, p["ply"]
        want = p["dd"] if p["seat"] % 2 == 0 else -p["dd"]
        assert int(row.group(1)) == want, p["ply"]
        flipped += p["seat"] % 2 == 1 and p["dd"] != 0
    assert flipped  # some side-1 decision, its value turned round


def test_what_is_not_known_yet_is_said(client: TestClient) -> None:
    match = client.get("/matches/m-example-1").text
    # nothing is sampled: the accuracy on what the players could know is not shown as if it were
    assert "not yet" in match
    assert re.search(r"0 of \d+ hands graded on what each player could know", match)
    sus = client.get("/suspicious").text
    assert "not computed yet" in sus and " 0 flagged" not in sus


def test_no_developer_words_on_the_rating_and_pair_pages(client: TestClient) -> None:
    for path in ("/leaderboard", "/leaderboard?kind=pairs", "/suspicious", "/fairness"):
        text = client.get(path).text
        for word in ("μ", "σ", "openskill", "Plackett", "Holm", "Bonferroni", "docs/insights.md", ">df<"):
            assert word not in text, (path, word)


def test_the_skip_link_and_the_theme_switch_are_on_every_page(client: TestClient) -> None:
    for path in ("/", "/matches/m-example-1", "/glossary", "/help/rules", "/moves"):
        text = client.get(path).text
        assert '<a class="skip" href="#main">' in text and '<main id="main"' in text, path
        assert 'id="theme-toggle"' in text and "/static/theme.js" in text, path
    css = Path(__file__).resolve().parent.parent / "api" / "static" / "style.css"
    sheet = css.read_text()
    assert "@media print" in sheet and "prefers-color-scheme: dark" in sheet


def test_a_grade_not_computed_is_not_drawn(client: TestClient) -> None:
    player = client.get("/api/players").json()["players"][0]["player"]
    page = client.get(f"/players/{player}").text
    assert "Luck and skill" in page
    assert "not graded yet" in page and re.search(r"0 of \d+ decisions graded so far", page)
    # the phase chart draws the perfect-information bars alone, each phase a link to its moves
    chart = re.search(r'<svg class="skillsvg phase".*?</svg>', page, re.S)
    assert chart is not None and 'class="perfect"' in chart.group(0) and 'class="known"' not in chart.group(0)
    assert re.search(r'<a href="/moves\?player=[^"]+&amp;phase=lead"', chart.group(0))


def test_the_hands_behind_a_players_counts(client: TestClient) -> None:
    player = client.get("/api/players").json()["players"][0]["player"]
    report = client.get(f"/api/players/{player}").json()
    page = client.get(f"/players/{player}").text
    for outcome, key in (("won", "wins"), ("lost", "losses"), ("played", "hands")):
        href = f"/hands?player={player}&amp;outcome={outcome}"
        assert f'href="{href}"' in page, href
        listed = client.get(href.replace("&amp;", "&")).text
        got = re.search(r"<h1>Hands <small>(\d+) hand", listed)
        assert got is not None and int(got.group(1)) == report[key], (outcome, key)
    assert client.get("/hands", params={"player": player, "outcome": "nonsense"}).status_code == 422
