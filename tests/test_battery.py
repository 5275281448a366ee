"""The fairness battery: null calibration, planted cheats, Holm, verdicts, shufflers."""

from __future__ import annotations

import doctest
import itertools
import json
from collections import Counter

import numpy as np
import polars as pl
import pytest

from replay.tiles import IS_DOUBLE, PIPS
from reports import battery, shufflers
from reports.battery import (
    DealWindow,
    audit,
    escalate,
    holm,
    player_luck,
    run_battery,
    validate,
    verdict_of,
)
from reports.shufflers import simulate_window

DOUBLE = np.array(IS_DOUBLE)
PIP = np.array(PIPS)


def _test(report: battery.BatteryReport, name: str) -> battery.TestResult:
    (hit,) = [t for t in report.tests if t.name == name]
    return hit


def _fair_decks(n: int, seed: int) -> np.ndarray:
    return shufflers.batch_fisher_yates(np.random.default_rng(seed), n, 28)


def test_doctests() -> None:
    assert doctest.testmod(battery).failed == 0
    assert doctest.testmod(shufflers).failed == 0


# --------------------------------------------------------------------------- Holm, verdicts


def test_holm_hand_worked() -> None:
    # sorted: 0.005*4 = 0.02; 0.01*3 = 0.03; 0.03*2 = 0.06; 0.04*1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1, ties keep their order, monotone in the raw p
    assert holm([0.5, 0.5, 0.001]) == pytest.approx([1.0, 1.0, 0.003])
    assert holm([]) == []
    # at alpha 0.05 Holm rejects the two smallest here, Bonferroni (x4) only one
    adj = holm([0.012, 0.02, 0.5, 0.011])
    assert [a < 0.05 for a in adj] == [True, True, False, True]


def test_verdict_levels() -> None:
    assert verdict_of(0.5) == "PASS"
    assert verdict_of(0.009) == "WEAK"
    assert verdict_of(9e-7) == "FAIL"
    assert verdict_of(0.02, alpha=0.05) == "WEAK"


def _report(verdict: battery.Verdict) -> battery.BatteryReport:
    return battery.BatteryReport(1, {"4p": 1}, (), verdict)


def test_escalate_two_disjoint_weak_windows_fail() -> None:
    assert escalate([_report("PASS"), _report("WEAK")]) == "WEAK"
    assert escalate([_report("WEAK"), _report("PASS"), _report("WEAK")]) == "FAIL"
    assert escalate([_report("FAIL")]) == "FAIL"
    assert escalate([]) == "PASS"


# --------------------------------------------------------------------------- null calibration


def test_tile_tables_scaled_by_27_over_28() -> None:
    """Mean of the scaled X2 over fair windows is the df; unscaled it would be df * 28/27."""
    rng = np.random.default_rng(2728)
    seat, pos = [], []
    for _ in range(400):
        report = run_battery(DealWindow.from_decks(shufflers.batch_fisher_yates(rng, 500, 28)))
        seat.append(_test(report, "tile_seat[4p]").statistic)
        pos.append(_test(report, "tile_position[4p]").statistic)
    assert _test(report, "tile_seat[4p]").df == 81
    assert _test(report, "tile_position[4p]").df == 729
    # standard errors: sqrt(2*81/400) = 0.64 and sqrt(2*729/400) = 1.9
    assert abs(np.mean(seat) - 81) < 2.0 < abs(np.mean(seat) * 28 / 27 - 81)
    assert abs(np.mean(pos) - 729) < 6.0 < abs(np.mean(pos) * 28 / 27 - 729)
    assert np.var(seat) == pytest.approx(2 * 81, rel=0.25)


def test_two_player_tile_seat_df_and_mean() -> None:
    rng = np.random.default_rng(54)
    stats_ = [
        _test(run_battery(simulate_window("fair", 600, rng, players=2)), "tile_seat[2p]")
        for _ in range(300)
    ]
    assert stats_[0].df == 27 * 2  # seat 0, seat 1, stock
    assert abs(np.mean([t.statistic for t in stats_]) - 54) < 1.7  # SE 0.6


def test_clustered_gof_means_match_df() -> None:
    """Doubles and pips GOF over correlated hands: corrected statistic has mean ~ df."""
    rng = np.random.default_rng(4949)
    dbl, pips, dfs = [], [], []
    for _ in range(300):
        report = run_battery(simulate_window("fair", 1000, rng))
        dbl.append(_test(report, "doubles_per_hand[4p]").statistic)
        p = _test(report, "hand_pips[4p]")
        pips.append(p.statistic / p.df)
        dfs.append(_test(report, "doubles_per_hand[4p]").df)
    assert abs(np.mean(dbl) - np.mean(dfs)) < 0.5  # SE ~0.16
    assert abs(np.mean(pips) - 1) < 0.06  # SE ~0.013


@pytest.mark.parametrize(
    ("players", "aside", "seed"), [(4, False, 1), (3, False, 2), (2, False, 3), (3, True, 4)]
)
def test_fair_window_passes(players: int, aside: bool, seed: int) -> None:
    window = simulate_window(
        "fair", 3000, np.random.default_rng(seed), players=players, doubles_aside=aside
    )
    validate(window)
    report = run_battery(window)
    assert report.verdict == "PASS"
    assert all(t.p_adjusted >= 0.01 for t in report.tests)
    names = {t.name.split("[")[0] for t in report.tests}
    if aside:
        assert {s.name for s in report.skipped} == {
            "doubles_per_hand[3p_aside]",
            "five_doubles[3p_aside]",
        }
        assert len(names) == 7
    else:
        assert len(names) == 9 and not report.skipped


def test_false_alarms_are_rare() -> None:
    rng = np.random.default_rng(77)
    verdicts = [run_battery(simulate_window("fair", 1000, rng)).verdict for _ in range(60)]
    assert verdicts.count("PASS") >= 59


# --------------------------------------------------------------------------- planted cheats


def _seat_doubles(deck: np.ndarray, players: int = 4) -> np.ndarray:
    return DOUBLE[deck[:, : 7 * players]].reshape(len(deck), players, 7).sum(axis=2)


def test_tile_seat_catches_a_favoured_tile() -> None:
    """One deal in ten, the 6-6 is moved into seat 0's hand."""
    rng = np.random.default_rng(10)
    deck = _fair_decks(4000, 10)
    rows = np.flatnonzero(rng.random(4000) < 0.1)
    for r in rows:
        where = int(np.flatnonzero(deck[r] == 27)[0])
        deck[r, [0, where]] = deck[r, [where, 0]]
    report = run_battery(DealWindow.from_decks(deck))
    assert _test(report, "tile_seat[4p]").p_adjusted < 1e-6
    assert report.verdict == "FAIL"


def test_tile_position_catches_sattolo() -> None:
    window = simulate_window("sattolo", 1000, np.random.default_rng(11))
    top = _test(run_battery(window), "tile_position[4p]")
    assert top.verdict == "FAIL"
    assert top.detail["top_cells"][0]["observed"] == 0  # no tile stays in its own slot


def test_order_memory_catches_planet_poker() -> None:
    window = simulate_window("planet_poker", 1000, np.random.default_rng(12))
    assert _test(run_battery(window), "order_memory[4p]").p_adjusted < 1e-6


def test_doubles_per_hand_catches_concentrated_doubles() -> None:
    """Half the deals, a random seat is handed one more double."""
    rng = np.random.default_rng(13)
    deck = shufflers.give_extra_double(
        _fair_decks(3000, 13), rng.integers(0, 4, 3000), rng, rate=0.5
    )
    validate(DealWindow.from_decks(deck))
    assert _test(run_battery(DealWindow.from_decks(deck)), "doubles_per_hand[4p]").verdict != "PASS"


def test_five_doubles_catches_silent_redeals() -> None:
    """A server that quietly redeals every deal with a 5+ doubles hand."""
    deck = _fair_decks(4000, 14)
    deck = deck[_seat_doubles(deck).max(axis=1) < 5][:3000]
    five = _test(run_battery(DealWindow.from_decks(deck)), "five_doubles[4p]")
    assert five.statistic == 0 and five.detail["expected"] > 40
    assert five.verdict == "FAIL"


def test_hand_pips_catches_no_bad_hands() -> None:
    """A server that redeals whenever some hand has fewer than 26 pips."""
    deck = _fair_decks(8000, 15)
    pips = PIP[deck].reshape(len(deck), 4, 7).sum(axis=2)
    deck = deck[pips.min(axis=1) >= 26][:5000]
    assert _test(run_battery(DealWindow.from_decks(deck)), "hand_pips[4p]").verdict == "FAIL"


def test_seat_pips_catches_a_favoured_seat() -> None:
    """One deal in five, seat 0 swaps hands with the heaviest hand."""
    rng = np.random.default_rng(16)
    deck = _fair_decks(2000, 16)
    hands = deck.reshape(2000, 4, 7)
    best = PIP[hands].sum(axis=2).argmax(axis=1)
    rows = np.flatnonzero(rng.random(2000) < 0.2)
    hands[rows, 0], hands[rows, best[rows]] = hands[rows, best[rows]], hands[rows, 0].copy()
    seat = _test(run_battery(DealWindow.from_decks(hands.reshape(2000, 28))), "seat_pips[4p]")
    assert seat.verdict == "FAIL"
    assert seat.detail["seat_z"][0] > 5


def test_serial_pips_catches_lazy_reshuffle() -> None:
    window = simulate_window("lazy_reshuffle", 2000, np.random.default_rng(17))
    serial = _test(run_battery(window), "serial_pips[4p]")
    assert serial.verdict == "FAIL" and serial.detail["lag1_r"] > 0.2


def test_serial_pips_ignores_seat_bias() -> None:
    """A biased seat mean (random comparator) is not reported as serial dependence."""
    window = simulate_window("random_comparator", 2000, np.random.default_rng(18))
    report = run_battery(window)
    assert _test(report, "seat_pips[4p]").verdict == "FAIL"
    assert _test(report, "serial_pips[4p]").verdict == "PASS"


def test_repeated_deals_catches_one_repeat() -> None:
    deck = _fair_decks(3000, 19)
    deck[2500] = deck[100]
    deck[2500, :7] = deck[2500, :7][::-1]  # same hand, other order: still the same deal
    rep = _test(run_battery(DealWindow.from_decks(deck)), "repeated_deals[4p]")
    assert rep.statistic == 1 and rep.verdict == "FAIL"
    assert rep.detail["examples"] == [{"deal": 2500, "same_as": 100}]


def test_repeated_deals_stock_order_counts() -> None:
    """Two-player deals with the same hands but another stock order are different deals."""
    deck = shufflers.batch_fisher_yates(np.random.default_rng(20), 1000, 28)
    deck[900] = deck[5]
    deck[900, 14:] = deck[900, 14:][::-1]
    rep = _test(run_battery(DealWindow.from_decks(deck, players=2)), "repeated_deals[2p]")
    assert rep.statistic == 0 and rep.p_value == 1.0


CHEAP = ("planet_poker", "sattolo", "random_comparator", "small_seed_space", "lazy_reshuffle")


@pytest.mark.parametrize("cheat", CHEAP)
def test_cheap_cheats_caught_at_2000_deals(cheat: str) -> None:
    """Regression: cheats the power study catches at 2,000 deals stay caught."""
    report = run_battery(simulate_window(cheat, 2000, np.random.default_rng(2000)))
    assert report.verdict == "FAIL"


def test_modulo_bias_caught_at_10000_deals() -> None:
    report = run_battery(simulate_window("modulo_bias", 10_000, np.random.default_rng(2001)))
    assert report.verdict != "PASS"
    assert _test(report, "order_memory[4p]").detail["spearman_rho"] < 0


# --------------------------------------------------------------------------- audit, luck


def test_audit_splits_and_escalates() -> None:
    window = simulate_window("fair", 2000, np.random.default_rng(21))
    first, second = window.split()
    assert first.n_deals == second.n_deals == 1000
    assert first.groups[0].order.max() < second.groups[0].order.min()
    result = audit(window)
    assert result.verdict == "PASS" and result.halves[0].n_deals == 1000
    cheat = audit(simulate_window("sattolo", 2000, np.random.default_rng(22)))
    assert cheat.verdict == "FAIL" and all(h.verdict != "PASS" for h in cheat.halves)
    json.dumps(result.to_dict())


def test_friend_is_flagged_by_player_luck() -> None:
    rng = np.random.default_rng(23)
    window = simulate_window("fair", 20_000, rng, friend_rate=shufflers.FRIEND_RATE)
    luck = player_luck(window)
    assert "0" in luck.flagged
    (friend,) = [p for p in luck.players if p.player == "0"]
    assert friend.doubles_z > 4 and abs(friend.pips_z) < 3
    # The doubles come from his tablemates (players 1-3): they may be flagged as unlucky.
    for p in luck.players:
        if p.flagged and p.player != "0":
            assert p.player in {"1", "2", "3"} and p.doubles_z < 0
    assert friend.doubles_ci is not None and friend.doubles_ci[0] > 1.75
    assert luck.verdict != "PASS"


def test_player_luck_fair() -> None:
    window = simulate_window("fair", 20_000, np.random.default_rng(24))
    luck = player_luck(window)
    assert luck.flagged == () and luck.verdict == "PASS"
    assert len(luck.players) == 16
    p = luck.players[0]
    half = (p.pips_ci[1] - p.pips_ci[0]) / 2
    assert half == pytest.approx(1.959964 * 7 / np.sqrt(p.hands))  # exact variance 49
    dhalf = (p.doubles_ci[1] - p.doubles_ci[0]) / 2
    assert dhalf == pytest.approx(1.959964 * np.sqrt(49 / 48 / p.doubles_hands))
    assert sum(luck.histogram["pips"]["counts"]) == 16
    assert sum(luck.histogram["doubles"]["expected"]) == pytest.approx(16, abs=0.01)
    assert sum(lo <= 42 <= hi for lo, hi in (q.pips_ci for q in luck.players)) >= 13
    json.dumps(luck.to_dict())


def test_player_luck_min_hands() -> None:
    window = simulate_window("fair", 200, np.random.default_rng(25))  # 50 hands each
    luck = player_luck(window, min_hands=60)
    assert all(p.pips_p is None and not p.flagged for p in luck.players)
    assert luck.verdict == "PASS"


# --------------------------------------------------------------------------- window input


def test_from_frame_groups_and_ids() -> None:
    rng = np.random.default_rng(26)
    d4 = shufflers.batch_fisher_yates(rng, 3, 28)
    d2 = shufflers.batch_fisher_yates(rng, 2, 28)
    d3 = shufflers.deal_decks(shufflers.batch_fisher_yates(rng, 2, 21), doubles_aside=True)
    rows = [
        ("t1", "m1", 1, 4, d4[0], ["ann", "bob", "cy", "dee"]),
        ("t2", "m2", 1, 2, d2[0], ["bob", "eve"]),
        ("t1", "m1", 2, 4, d4[1], ["ann", "bob", "cy", "dee"]),
        ("t3", "m3", 1, 3, d3[0], ["fay", "ann", "gus"]),
        ("t2", "m2", 2, 2, d2[1], ["eve", "bob"]),
        ("t1", "m1", 3, 4, d4[2], ["dee", "ann", "bob", "cy"]),
        ("t3", "m3", 2, 3, d3[1], ["gus", "fay", "ann"]),
    ]
    frame = pl.DataFrame(
        {
            "table": [r[0] for r in rows],
            "match": [r[1] for r in rows],
            "hand": [r[2] for r in rows],
            "players": [r[3] for r in rows],
            "deck": [r[4].tolist() for r in rows],
            "seat_players": [r[5] for r in rows],
        }
    )
    window = DealWindow.from_frame(frame)
    validate(window)
    assert window.n_deals == 7
    kinds = {g.spec.kind: g for g in window.groups}
    assert set(kinds) == {"4p", "2p", "3p_aside"}
    assert window.player_ids[:4] == ("ann", "bob", "cy", "dee")
    assert window.table_ids == ("t1", "t2", "t3")
    g4 = kinds["4p"]
    assert (g4.deck == d4).all() and g4.order.tolist() == [0, 2, 5]
    assert [window.player_ids[i] for i in g4.player_idx[2]] == ["dee", "ann", "bob", "cy"]
    assert kinds["2p"].table_idx.tolist() == [1, 1]
    assert (kinds["3p_aside"].deck == d3).all()
    first, second = window.split()
    orders = sorted(o for w in (first, second) for g in w.groups for o in g.order.tolist())
    assert orders == list(range(7)) and first.n_deals == 3
    luck = player_luck(window, min_hands=1)
    ann = next(p for p in luck.players if p.player == "ann")
    assert ann.hands == 5 and ann.doubles_hands == 3


def test_validate_rejects_a_bad_deck() -> None:
    deck = _fair_decks(10, 27)
    deck[3, 5] = deck[3, 6]
    with pytest.raises(ValueError, match="permutation"):
        validate(DealWindow.from_decks(deck))


def test_report_to_dict_is_json() -> None:
    report = run_battery(simulate_window("small_seed_space", 1000, np.random.default_rng(28)))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["verdict"] == "FAIL" and len(data["tests"]) == 9
    assert data["tests"][0]["name"] == "tile_seat[4p]"


# --------------------------------------------------------------------------- shufflers


def _feeder(values: list[int]) -> shufflers.Words:
    return iter(values).__next__


def test_fisher_yates_paths_are_uniform() -> None:
    seen = Counter(
        tuple(shufflers.fisher_yates(_feeder([a, b]), 3)) for a in range(3) for b in range(2)
    )
    assert len(seen) == 6 and set(seen.values()) == {1}


def test_planet_poker_is_biased_on_three_cards() -> None:
    """3^3 = 27 equally likely paths onto 3! = 6 orders: some orders get 5, some 4."""
    seen = Counter(
        tuple(shufflers.planet_poker(_feeder(list(js)), 3))
        for js in itertools.product(range(3), repeat=3)
    )
    assert sorted(seen.values()) == [4, 4, 4, 5, 5, 5]
    batch = shufflers.batch_planet_poker(np.random.default_rng(29), 270_000, 3)
    freq = Counter(map(tuple, batch.tolist()))
    for order, paths in seen.items():
        assert freq[order] / 270_000 == pytest.approx(paths / 27, abs=0.004)


def test_sattolo_gives_one_cycle() -> None:
    rng = np.random.default_rng(30)
    words = lambda: int(rng.integers(0, 2**32))  # noqa: E731
    for deck in [shufflers.sattolo(words, 28) for _ in range(20)] + list(
        shufflers.batch_sattolo(rng, 20, 28)
    ):
        seen, t = {0}, int(deck[0])
        while t != 0:
            seen.add(t)
            t = int(deck[t])
        assert len(seen) == 28


def test_modulo_bias_uses_one_byte() -> None:
    deck = shufflers.modulo_bias(_feeder([0x1FF] + [0] * 26), 28)
    assert deck[27] == 255 % 28  # first swap: position 27 with byte 0xFF % 28 = 3
    last = shufflers.batch_modulo_bias(np.random.default_rng(31), 200_000, 28)[:, 27]
    freq = np.bincount(last, minlength=28) / 200_000
    assert freq[:4] == pytest.approx(10 / 256, abs=0.0015)
    assert freq[4:] == pytest.approx(9 / 256, abs=0.0015)


@pytest.mark.parametrize("n", [7, 21, 28])
def test_comparator_sort_replays_pythons_sorted(n: int) -> None:
    bits = np.random.default_rng(n).integers(0, 2, (300, shufflers.comparator_bits(n)))
    batch = shufflers.comparator_sort(bits)
    for row, deck in zip(bits, batch, strict=True):
        words = _feeder(row.tolist())
        assert shufflers.random_comparator(words, n) == deck.tolist()


def test_small_seed_space_repeats() -> None:
    rng = np.random.default_rng(32)
    decks = shufflers.batch_small_seed_space(rng, 2000, 28)
    seed = 12345
    words = _feeder([seed])
    table = shufflers._seed_table(28, shufflers.SEED_BITS)
    assert shufflers.small_seed_space(words, 28) == table[seed].tolist()
    assert len({d.tobytes() for d in decks}) < 2000


def test_lazy_reshuffle_moves_few_tiles() -> None:
    chain = shufflers.batch_lazy_reshuffle(np.random.default_rng(33), 50, 28)
    assert ((chain[1:] != chain[:-1]).sum(axis=1) <= 2 * shufflers.LAZY_SWAPS).all()
    assert (np.sort(chain, axis=1) == np.arange(28)).all()
    rng = np.random.default_rng(34)
    shuffle = shufflers.make_lazy_reshuffle()
    words = lambda: int(rng.integers(0, 2**32))  # noqa: E731
    a, b = shuffle(words, 28), shuffle(words, 28)
    assert sorted(a) == list(range(28)) and sum(x != y for x, y in zip(a, b, strict=True)) <= 40


def test_give_extra_double() -> None:
    rng = np.random.default_rng(35)
    deck = _fair_decks(5000, 35)
    seat = np.where(rng.random(5000) < 0.5, rng.integers(0, 4, 5000), -1)
    out = shufflers.give_extra_double(deck, seat, rng, rate=0.3)
    validate(DealWindow.from_decks(out))
    changed = (out != deck).any(axis=1)
    assert (seat[changed] >= 0).all()
    assert 0.12 < changed.mean() < 0.18  # 0.5 * 0.3, minus the impossible swaps
    rows = np.flatnonzero(changed)
    before = _seat_doubles(deck)[rows, seat[rows]]
    after = _seat_doubles(out)[rows, seat[rows]]
    assert (after == before + 1).all()
