"""The review on the replay page, in a real browser: the move list steps the
hand (click and keys), the best move is drawn on the board, a principal line
steps move by move, and it all fits a phone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.test_analysis import INTL
from tests.test_browser import (
    _DRAWN,
    ARTIFACTS,
    CHROMIUM,
    _line_shown,
    _shown,
    browser_page,
    serving,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

HAND = "/matches/m-example-1/hands/1"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from replay.ingest import ingest

    db = tmp_path_factory.mktemp("browser-review") / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(INTL)], db=db, workers=0, analysis=(6, 0))
    with serving(db) as url:
        yield url


def _current(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.locator("#movelist li.cur").get_attribute("data-ply"))


def test_the_move_list_steps_with_clicks_and_keys(base_url: str) -> None:
    with browser_page() as page:
        page.goto(base_url + HAND)
        items = page.locator("#movelist li")
        assert items.count() == int(page.locator("#stepper").get_attribute("data-last") or "0") + 1
        assert _current(page) == 0
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert _shown(page) == 2 and _current(page) == 2
        page.keyboard.press("ArrowLeft")
        assert _shown(page) == 1 and _current(page) == 1
        page.locator('#movelist li[data-ply="7"] a').click()
        assert _shown(page) == 7 and _current(page) == 7
        assert "#ply=7" in page.url
        assert page.locator('#movelist li[data-ply="7"] a[aria-current="step"]').count() == 1
        page.keyboard.press("End")
        last = items.count() - 1
        assert _current(page) == last
        # marks: every graded ply with a class carries its sign
        marked = page.locator("#movelist li.g-inaccuracy, #movelist li.g-mistake, #movelist li.g-blunder")
        for i in range(marked.count()):
            assert marked.nth(i).locator(".mark").inner_text() in ("?!", "?", "??")


def test_the_best_move_and_its_line_on_the_board(base_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    with browser_page() as page:
        page.goto(base_url + HAND)
        ghosts = page.locator("svg.board .ghost")
        assert ghosts.count() > 0
        assert page.evaluate(_DRAWN, "svg.board .ghost") == 0  # ply 0: no move yet
        # a ply whose best move is another: its ghost and its ring are drawn, and only there
        target = None
        for i in range(1, _last(page) + 1):
            page.locator(f'#movelist li[data-ply="{i}"] a').click()
            if page.evaluate(_DRAWN, "svg.board .ghost") == 1:
                target = i
                break
        assert target is not None
        section = page.locator("section.ply:not([hidden])")
        best = section.locator(".why .bestmv").inner_text()
        assert best.startswith("[")
        assert page.evaluate(_DRAWN, "svg.board .bestring") <= 1
        label = page.locator("svg.board .ghost .ghostlab").evaluate_all(
            "(els) => els.filter((e) => e.closest('g.ghost').parentNode.style !== undefined)"
            ".map((e) => e.textContent)")
        assert any(best.split(" ")[0] in t for t in label)
        # its lines, fetched from the JSON twin: the reasons, and the best line steps move by move
        section.locator(".why[data-ready]").wait_for()
        assert section.locator(".why ul.reasons li").count() >= 2
        line = section.locator('.pline[data-line="best"]')
        line.locator('[data-lstep="1"]').click()
        line.locator('[data-lstep="1"]').click()
        assert line.locator("li.on").get_attribute("data-step") == "1"
        assert line.locator("li.later").count() == line.locator("li").count() - 2
        page.evaluate("document.activeElement.blur()")  # the arrow keys step the line only while it has the focus
        page.keyboard.press("ArrowRight")
        assert _shown(page) == target + 1
        page.screenshot(path=str(ARTIFACTS / "review.png"), full_page=True)


def test_only_what_the_mover_knew(base_url: str) -> None:
    with browser_page() as page:
        page.goto(base_url + HAND + "#ply=3")
        every = page.evaluate(_DRAWN, "svg.board .place use")
        mover = page.locator('#movelist li[data-ply="3"]').get_attribute("data-seat")
        own = page.evaluate(_DRAWN, f'svg.board .place[data-seat="{mover}"] use')
        assert every > own > 0
        page.locator("#mover-only").click()
        assert page.evaluate(_DRAWN, "svg.board .place use") == own  # the others' tiles hidden
        page.locator("#mover-only").click()
        assert page.evaluate(_DRAWN, "svg.board .place use") == every


def _a_ply_with_another_best(page) -> int:  # type: ignore[no-untyped-def]
    """Step to the first ply whose best move is not the one played and whose lines have come."""
    for i in range(2, _last(page) + 1):
        page.locator(f'#movelist li[data-ply="{i}"] a').click()
        if page.evaluate(_DRAWN, "svg.board .ghost") == 1:
            page.locator("section.ply:not([hidden]) .why[data-ready]").wait_for()
            return i
    raise AssertionError("no ply whose best move is another")


def test_a_line_steps_onto_the_board_from_the_keyboard(base_url: str) -> None:
    with browser_page() as page:
        page.goto(base_url + HAND)
        k = _a_ply_with_another_best(page)
        laid = _line_shown(page)
        twin = page.evaluate("(u) => fetch(u).then((r) => r.json())", page.locator("#stepper").get_attribute("data-json"))
        r = next(x for x in twin["review"] if x["ply"] == k)
        best = page.locator('section.ply:not([hidden]) .pline[data-line="best"]')
        # Tab-reachable buttons: Enter on "on one move" lays the best move as a ghost, the board before the decision
        best.locator('[data-lstep="1"]').focus()
        page.keyboard.press("Enter")
        assert page.evaluate(_DRAWN, "svg.board .lghost") == 1
        assert page.locator("svg.board .lghost.now title").text_content() == f"[{r['best'][0]}|{r['best'][1]}]"
        assert _line_shown(page) == laid - 1  # the tile played at ply k is not on the board
        assert page.evaluate(_DRAWN, "svg.board .ghost") == 0  # nor the best-move ghost of ply k
        assert page.evaluate(_DRAWN, "svg.board .lused") == 1  # its place in the mover's hand covered
        assert "move 1 of" in best.locator(".lstatus").inner_text()
        # the arrow keys step the line while the focus is in it, not the hand
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert _shown(page) == k
        tiles = [g for g in r["ghosts_best"][:3] if g]
        assert page.evaluate(_DRAWN, "svg.board .lghost") == len(tiles)
        assert best.locator("li.on").get_attribute("data-step") == "2"
        # the whole line: every tile on the felt (it grows to hold them)
        page.keyboard.press("End")
        assert page.evaluate(_DRAWN, "svg.board .lghost") == len([g for g in r["ghosts_best"] if g])
        outside = page.evaluate("""() => {
          const f = document.querySelector("svg.board rect.felt").getBoundingClientRect();
          return [...document.querySelectorAll("svg.board .lghost svg")].filter((g) => {
            const b = g.getBoundingClientRect();
            return b.top < f.top - 1 || b.bottom > f.bottom + 1 || b.left < f.left - 1 || b.right > f.right + 1;
          }).length; }""")
        assert outside == 0
        page.screenshot(path=str(ARTIFACTS / "review-line.png"))
        # the played line takes the board over; Escape gives it back to the hand
        played = page.locator('section.ply:not([hidden]) .pline[data-line="played"]')
        played.locator('[data-lstep="1"]').click()
        assert best.locator("li.on").count() == 0
        assert page.locator("svg.board .lghost.now title").text_content() == f"[{r['played'][0]}|{r['played'][1]}]"
        page.keyboard.press("Escape")
        assert page.evaluate(_DRAWN, "svg.board .lghost") == 0 and _line_shown(page) == laid
        # stepping the hand leaves a line
        played.locator('[data-lstep="1"]').click()
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("ArrowRight")
        assert _shown(page) == k + 1
        assert page.locator("svg.board .lghost").count() == 0 and page.locator("svg.board .lused").count() == 0


def test_a_line_on_the_board_at_phone_width(base_url: str) -> None:
    with browser_page(390, 844) as page:
        page.goto(base_url + HAND)
        _a_ply_with_another_best(page)
        line = page.locator('section.ply:not([hidden]) .pline[data-line="best"]')
        for _ in range(4):
            line.locator('[data-lstep="1"]').click()
        assert page.evaluate(_DRAWN, "svg.board .lghost") >= 1
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = page.locator("svg.board").bounding_box()
        assert box is not None and box["width"] <= 390
        # the board and the line's buttons both in view
        board = page.evaluate("(() => { const b = document.querySelector('svg.board').getBoundingClientRect(); return [b.top, b.bottom]; })()")
        button = page.evaluate("(() => { const b = document.activeElement.getBoundingClientRect(); return [b.top, b.bottom]; })()")
        assert board[0] >= 0 and board[1] <= 844 and board[1] <= button[0] and button[1] <= 844
        page.screenshot(path=str(ARTIFACTS / "review-line-phone.png"))


def test_the_toggle_keeps_the_best_move_and_hides_the_others_tiles(base_url: str) -> None:
    with browser_page() as page:
        page.goto(base_url + HAND)
        k = _a_ply_with_another_best(page)
        line = page.locator('section.ply:not([hidden]) .pline[data-line="best"]')
        for _ in range(4):
            line.locator('[data-lstep="1"]').click()
        every = page.evaluate(_DRAWN, "svg.board .lused")
        page.locator("#mover-only").click()
        assert page.get_attribute("#mover-only", "aria-pressed") == "true"
        mover = page.locator(f'#movelist li[data-ply="{k}"]').get_attribute("data-seat")
        own = page.evaluate(_DRAWN, f'svg.board .place[data-seat="{mover}"] .lused')
        assert page.evaluate(_DRAWN, "svg.board .lused") == own < every
        line.locator('[data-lstep="-1"]').click()
        for _ in range(4):
            line.locator('[data-lstep="-1"]').click()
        assert page.evaluate(_DRAWN, "svg.board .ghost") == 1  # the best move stays drawn
        assert page.evaluate(_DRAWN, "svg.board .bestring") <= 1
    # a hand still on has no toggle, nor a seat's view
    with browser_page() as page:
        page.goto(base_url + "/matches/m-example-2/hands/2")
        assert page.locator("#mover-only").count() == 0 and page.locator("svg.board .ghost").count() == 0
        page.goto(base_url + HAND + "?view=seat1")
        assert page.locator("#mover-only").count() == 0


def test_the_graph_says_whose_points_as_the_sentence_and_the_tables_do(base_url: str) -> None:
    with browser_page() as page:
        page.goto(base_url + HAND + "?ply=3")
        label = page.locator("svg.vgraph text.whose")
        box = label.bounding_box()
        assert box is not None and box["width"] > 100  # drawn, on the graph
        words = (label.text_content() or "").rstrip(" ↑")
        assert words == "points for seats 0 and 2 (up: they are ahead)"
        assert words in (page.locator("svg.vgraph").get_attribute("aria-label") or "")
        assert words in page.locator(".analysis-summary p").first.inner_text()
        # the move table counts from the same side, and says which way the mover wants it
        table = page.locator("section.ply:not([hidden]) .analysis .whose").inner_text()
        assert table.startswith("points for seats 0 and 2, as on the graph (seat ")
        # the label sits above the plot, clear of the line
        line = page.locator("svg.vgraph polyline").bounding_box()
        assert line is not None and box["y"] + box["height"] <= line["y"] + 1


def test_the_move_list_fits_a_phone(base_url: str) -> None:
    with browser_page(390, 800) as page:
        page.goto(base_url + HAND + "?ply=5")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = page.locator("#movelist").bounding_box()
        assert box is not None and box["width"] <= 390
        page.locator('#movelist li[data-ply="6"] a').click()
        assert _shown(page) == 6
        page.screenshot(path=str(ARTIFACTS / "review-phone.png"), full_page=True)


def test_a_seat_sees_its_own_grades_only(base_url: str) -> None:
    with browser_page() as page:
        page.goto(base_url + HAND + "?view=seat1")
        assert page.locator("table.alts-values th", has_text="exact").count() == 0
        assert page.locator(".pline").count() == 0
        seats = {page.locator("#movelist li").nth(i).get_attribute("data-seat")
                 for i in range(page.locator("#movelist li").count())
                 if page.locator("#movelist li").nth(i).locator(".mark, .lost").count()}
        assert seats <= {"1"}


def _last(page) -> int:  # type: ignore[no-untyped-def]
    return int(page.locator("#stepper").get_attribute("data-last") or "0")


TOKEN = "browser-review-token"


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server that takes answers (its token set)."""
    from replay.ingest import ingest

    db = tmp_path_factory.mktemp("browser-train") / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(INTL)], db=db, workers=0, analysis=(6, 0))
    with serving(db, token=TOKEN) as url:
        yield url


def test_a_training_round_answer_reveal_schedule(desk: str) -> None:
    import json
    import urllib.request

    seats = json.load(urllib.request.urlopen(desk + "/api/matches/m-example-1"))["seats"]
    player = seats[0]["player"]
    with browser_page(390, 800) as page:
        page.goto(f"{desk}/train?player={player}")
        choices = page.locator("#trainer button.choice")
        assert choices.count() >= 2
        assert page.locator("#reveal").is_hidden()
        page.fill("#desk-token", TOKEN)
        page.locator("h1").click()  # out of the field: the number keys pick
        page.keyboard.press("1")
        page.wait_for_selector("#reveal:not([hidden]) .verdict")
        text = page.locator("#reveal").inner_text()
        assert "Rated" in text and "back on" in text
        assert page.locator("#reveal table.alts-values tbody tr").count() == choices.count()
        assert page.locator("#trainer button.choice[disabled]").count() == choices.count()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(ARTIFACTS / "train.png"), full_page=True)
        page.locator("#next").click()
        page.wait_for_load_state()
        # the answered position is scheduled: the schedule lists it
        assert page.locator("table.grid tbody tr").count() == 1


def test_a_puzzle_solved(desk: str) -> None:
    import json
    import urllib.request

    got = json.load(urllib.request.urlopen(desk + "/api/puzzles"))
    p = got["puzzles"][0]
    with browser_page() as page:
        page.goto(f"{desk}/puzzles")
        page.locator("#puzzles tbody a").first.click()
        page.wait_for_selector("#trainer")
        page.fill("#desk-token", TOKEN)
        # a wrong try first, then the page says which move it was
        page.locator("#trainer button.choice").first.click()
        page.wait_for_selector("#reveal:not([hidden]) .verdict")
        verdict = page.locator("#reveal .verdict").inner_text()
        assert verdict.startswith(("Solved", "Not this one"))
        page.screenshot(path=str(ARTIFACTS / "puzzle.png"), full_page=True)
    after = json.load(urllib.request.urlopen(desk + "/api/puzzles"))
    q = next(x for x in after["puzzles"] if (x["match"], x["hand"], x["ply"]) == (p["match"], p["hand"], p["ply"]))
    assert q["tries"] == 1 and q["solve_rate"] in (0.0, 1.0)
