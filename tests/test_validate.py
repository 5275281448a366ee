"""The validator against the spec's example logs and mutations of them.

Each mutation plants one defect into a valid log; the test names the codes
the validator must report (and, where the defect cannot cascade, only those).
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.main import main
from replay.validate import validate_paths

DATA = Path(__file__).parent / "data" / "examples"
INTL = DATA / "international-to-50.jsonl"
DOMENA = DATA / "domena-2p-to-40.jsonl"


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def write(tmp: Path, events: list[dict | str], name: str = "log.jsonl") -> Path:
    p = tmp / name
    lines = [e if isinstance(e, str) else json.dumps(e, separators=(",", ":")) for e in events]
    p.write_text("\n".join(lines) + "\n")
    return p


def codes(path: Path) -> tuple[list[str], list[str]]:
    """(match-level codes in order, top-level codes)."""
    rep = validate_paths([path])
    found = [f.code for m in rep.matches for f in m.findings]
    return found, [f.code for f in rep.findings]


def renumber(events: list[dict]) -> list[dict]:
    for i, e in enumerate(events):
        e["seq"] = i
    return events


def test_examples_are_valid_and_match_their_claims() -> None:
    rep = validate_paths([DATA])
    assert [f.lines for f in rep.files] == [99, 201]
    assert rep.ok
    by_id = {m.match: m for m in rep.matches}
    intl = by_id["m-example-1"]
    assert intl.verdict == "valid" and intl.result == "win" and intl.winner == 0
    assert intl.score == (63, 26)
    # every recomputed hand equals the server's claim in the log
    claims = [e for e in load(INTL) if e["type"] == "hand_end"]
    assert [list(h.score) for h in intl.hands] == [c["score"] for c in claims]
    assert [h.winner for h in intl.hands] == [c["winner"] for c in claims]
    assert all(h.seed_ok and h.deal_ok for h in intl.hands)
    dom = by_id["m-example-2"]
    assert dom.score == (41, 36) and dom.verdict == "valid"


def test_json_contract_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(INTL), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"files", "findings", "matches"}
    m = out["matches"][0]
    assert set(m) == {"match", "profile", "verdict", "hands", "result", "winner", "score", "findings"}
    assert set(m["hands"][0]) == {"hand", "result", "winner", "points", "score"}
    assert m["hands"][0] == {"hand": 1, "result": "block", "winner": 3, "points": [0, 18], "score": [0, 18]}


def test_exit_codes(tmp_path: Path) -> None:
    assert main(["validate", str(tmp_path / "missing.jsonl")]) == 2
    bad = write(tmp_path, ["not json"])
    assert main(["validate", str(bad)]) == 1


Mutation = Callable[[list[dict]], list[dict | str]]


def _set(i: int, **kw: object) -> Mutation:
    def f(ev: list[dict]) -> list[dict | str]:
        ev[i].update(kw)
        return list(ev)

    return f


def _drop_key(i: int, key: str) -> Mutation:
    def f(ev: list[dict]) -> list[dict | str]:
        del ev[i][key]
        return list(ev)

    return f


def _append(extra: dict) -> Mutation:
    def f(ev: list[dict]) -> list[dict | str]:
        e = {"match": ev[0]["match"], "seq": len(ev), "ts": ev[-1]["ts"], **extra}
        return [*ev, e]

    return f


def _replace(i: int, new: dict) -> Mutation:
    def f(ev: list[dict]) -> list[dict | str]:
        base = {k: ev[i][k] for k in ("match", "seq", "ts", "hand")}
        ev[i] = {**base, **new}
        return list(ev)

    return f


def _remove(i: int) -> Mutation:
    def f(ev: list[dict]) -> list[dict | str]:
        del ev[i]
        return list(renumber(ev))

    return f


def _swap_seq(i: int, j: int) -> Mutation:
    def f(ev: list[dict]) -> list[dict | str]:
        ev[i], ev[j] = ev[j], ev[i]
        ev[i]["seq"], ev[j]["seq"] = ev[j]["seq"], ev[i]["seq"]
        ev[i]["ts"], ev[j]["ts"] = ev[j]["ts"], ev[i]["ts"]
        return list(ev)

    return f


def _shift_from(i: int) -> Mutation:
    def f(ev: list[dict]) -> list[dict | str]:
        for e in ev[i:]:
            e["seq"] += 1
        return list(ev)

    return f


ANCHOR2 = "00" * 32

# (name, log, mutation, expected codes, exact?)
CASES: list[tuple[str, Path, Mutation, set[str], bool]] = [
    ("unknown event", INTL, _append({"type": "chat", "text": "hi"}), {"UNKNOWN_EVENT"}, True),
    ("schema error", INTL, _append({"type": "seat_change", "seat": 1, "player": "p", "bot": "yes"}), {"SCHEMA_ERROR"}, True),
    ("rules unknown", INTL, _set(0, rules={"no_such_option": 1}), {"RULES_UNKNOWN"}, True),
    ("rules combination", INTL, _set(0, rules={"players": 3}), {"RULES_UNKNOWN"}, True),
    ("seq gap", INTL, _shift_from(100), {"SEQ_GAP"}, True),
    ("time order", INTL, _set(50, ts="2026-11-07T05:00:00.000Z"), {"TIME_ORDER"}, True),
    ("match incomplete", INTL, lambda ev: list(ev[:-1]), {"MATCH_INCOMPLETE"}, True),
    ("hand incomplete", INTL, lambda ev: list(ev[:40]), {"HAND_INCOMPLETE", "MATCH_INCOMPLETE"}, True),
    ("no anchor", INTL, _drop_key(0, "anchor"), {"COMMIT_MISSING"}, True),
    ("other scheme", INTL, _set(0, scheme="deal-v0"), {"COMMIT_MISSING"}, True),
    ("wrong anchor", INTL, _set(0, anchor=ANCHOR2), {"COMMIT_MISMATCH"}, True),
    ("reveal missing", INTL, _remove(26), {"REVEAL_MISSING"}, True),
    ("reveal early", INTL, _swap_seq(25, 26), {"REVEAL_EARLY"}, True),
    ("stock count", INTL, _set(2, stock=3), {"DEAL_MISMATCH"}, True),
    ("lead draw", INTL, _set(1, draws=[[0, "61"], [1, "65"], [2, "44"], [3, "55"]]), {"LEAD_DRAW_MISMATCH"}, True),
    ("wrong leader", INTL, _set(2, leader=0), {"WRONG_LEADER"}, False),
    ("false pass", INTL, _replace(4, {"type": "pass", "seat": 2}), {"FALSE_PASS"}, True),
    ("points", INTL, _set(25, points=[0, 17], score=[0, 18]), {"POINTS_MISMATCH"}, True),
    ("score", INTL, _set(25, score=[0, 19]), {"SCORE_MISMATCH"}, True),
    ("result", INTL, _set(25, winner=1), {"RESULT_MISMATCH"}, True),
    ("note", INTL, _set(25, notes=["capicua"]), {"NOTE_MISMATCH"}, True),
    ("match end early", INTL, lambda ev: [*ev[:58], {**ev[-1], "seq": 58}], {"MATCH_END_MISMATCH"}, False),
    ("match end winner", INTL, _set(200, winner=1), {"MATCH_END_MISMATCH"}, True),
    ("redeal claim", INTL, lambda ev: [*ev[:3], {**ev[3], "type": "redeal_claim", "seat": 1}, *ev[4:]], {"REDEAL_INVALID"}, False),
    ("lead yield", INTL, lambda ev: [*ev[:3], {"type": "lead_yield", "match": ev[0]["match"], "seq": 3, "ts": ev[3]["ts"], "hand": 1, "seat": 1, "to": 3}, *renumber_from(ev[3:], 4)], {"LEAD_YIELD_INVALID"}, False),
    ("draw without boneyard", INTL, lambda ev: [*ev[:20], {**ev[20], "type": "draw", "tile": "00"}, *ev[21:]], {"ILLEGAL_DRAW"}, False),
]


def renumber_from(events: list[dict], start: int) -> list[dict]:
    for i, e in enumerate(events):
        e["seq"] = start + i
    return events


@pytest.mark.parametrize("name,log,mutate,expected,exact", CASES, ids=[c[0] for c in CASES])
def test_planted_defect(
    tmp_path: Path, name: str, log: Path, mutate: Mutation, expected: set[str], exact: bool
) -> None:
    events = mutate(copy.deepcopy(load(log)))
    found, top = codes(write(tmp_path, events))
    assert expected <= set(found) | set(top), (found, top)
    if exact:
        assert set(found) | set(top) == expected, (found, top)
    else:
        # the planted code is the first error reported
        assert found and found[0] in expected, found


def test_malformed_lines_are_top_level_and_the_rest_is_read(tmp_path: Path) -> None:
    ev: list[dict | str] = list(load(INTL))
    ev.insert(5, "{not json")
    ev.insert(9, "[1, 2]")
    ev.insert(12, '{"type": "pass", "seq": 3}')  # no match
    p = write(tmp_path, ev)
    rep = validate_paths([p])
    assert [f.code for f in rep.findings] == ["MALFORMED_LINE", "MALFORMED_LINE", "SCHEMA_ERROR"]
    assert [f.line for f in rep.findings] == [6, 10, 13]
    assert rep.files[0].bad_lines == 3 and rep.files[0].lines == 204
    assert rep.matches[0].verdict == "valid"  # the match itself is intact
    assert not rep.ok


def test_repeated_line_is_a_warning_and_duplicate_seq_an_error(tmp_path: Path) -> None:
    ev = load(INTL)
    rep_line = copy.deepcopy(ev[30])
    twin = {**copy.deepcopy(ev[31]), "ts": "2026-11-07T05:01:30.000Z"}
    p = write(tmp_path, [*ev[:40], rep_line, *ev[40:], twin])
    found, _ = codes(p)
    assert sorted(found) == ["SEQ_DUPLICATE", "SEQ_REPEATED"]


def test_match_spread_over_files_and_gzip(tmp_path: Path) -> None:
    ev = load(DOMENA)
    write(tmp_path, ev[:50], "a.jsonl")
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as f:
        f.write("\n".join(json.dumps(e) for e in ev[50:]) + "\n")
    rep = validate_paths([tmp_path])
    assert len(rep.matches) == 1
    assert rep.matches[0].verdict == "valid" and rep.matches[0].score == (41, 36)


def test_interleaved_matches_in_one_file(tmp_path: Path) -> None:
    a, b = load(INTL), load(DOMENA)
    mixed: list[dict | str] = []
    for i in range(max(len(a), len(b))):
        mixed += a[i : i + 1] + b[i : i + 1]
    rep = validate_paths([write(tmp_path, mixed)])
    assert {m.match: m.verdict for m in rep.matches} == {"m-example-1": "valid", "m-example-2": "valid"}


def test_draw_mismatch_in_boneyard_game(tmp_path: Path) -> None:
    ev = load(DOMENA)
    i = next(k for k, e in enumerate(ev) if e["type"] == "draw")
    ev[i]["tile"] = "66"
    found, _ = codes(write(tmp_path, ev))
    assert found[0] == "DRAW_MISMATCH", found


def test_drawn_tile_not_played(tmp_path: Path) -> None:
    ev = load(DOMENA)
    # seq 11 draws 53, which fits; seq 12 plays it. Replace the play by a pass.
    assert ev[12]["type"] == "play" and ev[12]["tile"] == "53"
    ev[12] = {k: ev[12][k] for k in ("type", "match", "seq", "ts", "hand", "seat")}
    ev[12]["type"] = "pass"
    found, _ = codes(write(tmp_path, ev))
    assert found[0] == "DRAWN_TILE_NOT_PLAYED", found


def test_a_pass_by_a_seat_past_the_table_is_not_your_turn(tmp_path: Path) -> None:
    # The FALSE_PASS message looked at that seat's hand even when the code
    # was another: seat 7 of a 4-seat table crashed the validator.
    ev = load(INTL)
    i = [k for k, e in enumerate(ev) if e["type"] == "play"][1]
    ev[i] = {k: ev[i][k] for k in ("type", "match", "seq", "ts", "hand")} | {"type": "pass", "seat": 7}
    found, _ = codes(write(tmp_path, ev))
    assert found[0] == "NOT_YOUR_TURN", found


def test_event_after_end(tmp_path: Path) -> None:
    ev = load(INTL)
    extra = {**ev[24], "seq": 25}
    shifted = renumber_from(copy.deepcopy(ev[25:]), 26)
    found, _ = codes(write(tmp_path, [*ev[:25], extra, *shifted]))
    assert found == ["EVENT_AFTER_END"], found


def test_seed_reused_between_matches(tmp_path: Path) -> None:
    ev = load(INTL)
    twin = copy.deepcopy(ev)
    for e in twin:
        e["match"] = "m-copy"
    rep = validate_paths([write(tmp_path, [*ev, *twin])])
    for m in rep.matches:
        assert "SEED_REUSED" in {f.code for f in m.findings}


def test_rematch_unknown_is_a_warning(tmp_path: Path) -> None:
    ev = load(INTL)
    ev[0]["rematch_of"] = "m-nowhere"
    found, _ = codes(write(tmp_path, ev))
    assert "REMATCH_UNKNOWN" in found
    rep = validate_paths([tmp_path / "log.jsonl"])
    assert rep.matches[0].verdict == "valid"  # a warning only... unless the lead differs


def test_unreadable_match(tmp_path: Path) -> None:
    ev = load(INTL)[1:]
    rep = validate_paths([write(tmp_path, ev)])
    assert rep.matches[0].verdict == "unreadable"


def _seed_reuse_reference(reports, seen=None):  # noqa: ANN001, ANN202 - the pre-2026-12 algorithm
    from replay.findings import Finding

    owners, where = {}, {}
    for rep in reports:
        seeds = []
        if rep.anchor:
            seeds.append((rep.anchor.lower(), None, "anchor"))
        for h in rep.hands:
            if h.server_seed:
                seeds.append((h.server_seed.lower(), h.hand, f"seed of hand {h.hand}"))
        for seed, hand, what in seeds:
            owners.setdefault(seed, set()).add(rep.match)
            where.setdefault((seed, rep.match), (hand, what))
    out = {}
    for seed, matches in owners.items():
        everyone = matches | ({seen[seed]} if seen and seed in seen else set())
        if len(everyone) < 2:
            continue
        for mid in sorted(matches):
            hand, what = where[(seed, mid)]
            msg = f"the {what} is also used by match {', '.join(sorted(everyone - {mid}))}"
            out.setdefault(mid, []).append(Finding("SEED_REUSED", msg, hand, None, match=mid))
    return out


def test_seed_reuse_only_tracks_shared_seeds_but_answers_the_same() -> None:
    import random

    from replay.findings import HandReport, MatchReport
    from replay.validate import seed_reuse

    rng = random.Random(7)
    pool = [f"{k:064x}" for k in range(12)]
    for _ in range(300):
        reports = [
            MatchReport(match=f"m-{i}", verdict="valid", anchor=rng.choice([*pool, None]),
                        hands=tuple(HandReport(hand=h, result="domino", winner=0, points=(0, 0), score=(0, 0),
                                               server_seed=rng.choice([*pool, None, pool[0].upper()]))
                                    for h in range(1, rng.randint(1, 4))))
            for i in range(rng.randint(1, 5))
        ]  # fmt: skip
        seen = {s: "m-stored" for s in rng.sample(pool, 2)} if rng.random() < 0.5 else None
        assert seed_reuse(reports, seen) == _seed_reuse_reference(reports, seen)
