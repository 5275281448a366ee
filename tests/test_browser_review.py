"""The review on the replay page, in a real browser: the move list steps the
hand (click and keys), the best move is drawn on the board, a principal line
steps move by move, and it all fits a phone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.test_analysis import INTL
from tests.test_browser import _DRAWN, ARTIFACTS, CHROMIUM, _shown, browser_page, serving

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
