"""The replay's copy of a match's analysis (matches.analysis_body, migration
022): what the replay reads from it is what it read from the tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.queries import match_analysis, match_bundle
from replay.analysis.run import analyze_store
from replay.ingest import ingest
from replay.store import open_store
from replay.store.analysis_blob import FORMAT, pack_analysis, repack, unpack_analysis
from tests.test_analysis import INTL
from tests.test_api import EXAMPLE_2P, open_hand_log


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("bodies")
    db = base / "data" / "replay.duckdb"
    db.parent.mkdir(parents=True)
    ingest([str(INTL), str(EXAMPLE_2P), str(open_hand_log(base))], db=db, workers=0, analysis=(6, 0))
    return db


def _copy(db: Path, tmp_path: Path) -> Path:
    shutil.copytree(db.parent, tmp_path / "data")
    return tmp_path / "data" / "replay.duckdb"


def _read_both(c: duckdb.DuckDBPyConnection) -> tuple[dict[str, dict], dict[str, dict], int]:
    """Every match's analysis as the replay reads it, and as the tables give
    it; and how many of the analysed matches have a body."""
    by_body, by_rows = {}, {}
    for m, mno in c.execute("SELECT match, mno FROM matches WHERE analysis IS NOT NULL").fetchall():
        b = match_bundle(c.cursor(), m)
        assert b is not None
        by_body[m] = {h: b.analysis[h] for h in b.analysis}
        by_rows[m] = {h: a for h, a in match_analysis(c.cursor(), m, mno).items()}
    packed = c.execute("SELECT count(*) FROM matches WHERE analysis IS NOT NULL AND analysis_body IS NOT NULL").fetchone()
    return by_body, by_rows, int(packed[0]) if packed else 0


def _same(db: Path) -> int:
    """Asserts that every analysed match has a body that reads as its rows
    do (values and JSON bytes); the number of hands compared."""
    with duckdb.connect(str(db), read_only=True) as c:
        by_body, by_rows, packed = _read_both(c)
    assert packed == len(by_body) > 0
    assert by_body == by_rows
    same_json = orjson.OPT_NON_STR_KEYS
    assert orjson.dumps(by_body, option=same_json) == orjson.dumps(by_rows, option=same_json)  # the twin's bytes
    return sum(len(a) for a in by_body.values())


def test_ingest_packs_every_analysed_match(store: Path) -> None:
    assert _same(store) > 5
    with duckdb.connect(str(store), read_only=True) as c:
        # the open match's unfinished hand has no analysis, and none in its body
        for (body,) in c.execute("SELECT analysis_body FROM matches WHERE analysis IS NOT NULL").fetchall():
            hands = unpack_analysis(body)
            assert hands is not None and all(orjson.loads(j)["plies"] is not None for j in hands.values())


def test_analyze_packs_again_what_it_redoes(store: Path, tmp_path: Path) -> None:
    db = _copy(store, tmp_path)
    with duckdb.connect(str(db)) as c:
        old = dict(c.execute("SELECT match, analysis_body FROM matches WHERE analysis IS NOT NULL").fetchall())
    s = analyze_store(db, samples=8, workers=0)  # more samples: every hand redone
    assert s["analysed"] > 0
    _same(db)
    with duckdb.connect(str(db), read_only=True) as c:
        new = dict(c.execute("SELECT match, analysis_body FROM matches WHERE analysis IS NOT NULL").fetchall())
    assert new.keys() == old.keys() and all(new[m] != old[m] for m in new)


def test_a_match_without_a_body_is_read_from_the_tables(store: Path, tmp_path: Path) -> None:
    """Analysed before migration 022 (or a body of a format this code does not
    know): the tables are read, and give the same analysis."""
    db = _copy(store, tmp_path)
    with duckdb.connect(str(db)) as c:
        want, _, _ = _read_both(c)
        some = next(iter(want))
        c.execute("UPDATE matches SET analysis_body = NULL WHERE match <> ?", [some])
        c.execute("UPDATE matches SET analysis_body = ? WHERE match = ?", [bytes([FORMAT + 1]) + b"\0" * 8, some])
        by_body, by_rows, packed = _read_both(c)
    assert packed == 1 and by_body == by_rows == want


def test_migration_022_adds_the_column_and_repack_fills_it(store: Path, tmp_path: Path) -> None:
    db = _copy(store, tmp_path)
    with duckdb.connect(str(db)) as c:
        c.execute("ALTER TABLE matches DROP COLUMN analysis_body")
        c.execute("DELETE FROM schema_version WHERE version = 22")
    c = open_store(db)
    try:
        assert c.execute("SELECT count(*) FROM matches WHERE analysis_body IS NOT NULL").fetchone() == (0,)
        n = repack(c, "(SELECT match FROM matches WHERE analysis IS NOT NULL)")
        assert n > 0
    finally:
        c.close()
    _same(db)


_hands = st.dictionaries(
    st.integers(-(2**31), 2**31 - 1),
    st.binary(max_size=64),
    max_size=12,
)


@given(_hands)
def test_a_body_gives_back_each_hands_json(hands: dict[int, bytes]) -> None:
    got = unpack_analysis(pack_analysis(hands))
    assert got is not None
    assert {h: bytes(j) for h, j in got.items()} == hands
    assert list(got) == sorted(hands)


def test_the_solvers_replays_read_a_boneyard_only_where_seats_draw(store: Path) -> None:
    """A match's first twin replays its hands (api.queries.hand_input); the
    boneyards' orders are read for games with drawing only, and the replays
    are those made with every boneyard read."""
    from api.queries import hand_input
    from replay.analysis.grades import inputs_from_replay

    with duckdb.connect(str(store), read_only=True) as c:
        kinds = set()
        for m, rules, rematch_of in c.execute(
            "SELECT match, rules::VARCHAR, rematch_of FROM matches WHERE analysis IS NOT NULL"
        ).fetchall():  # fmt: skip
            b = match_bundle(c.cursor(), m)
            assert b is not None
            stocks = dict(c.execute("SELECT hand, stock FROM hands WHERE match = ?", [m]).fetchall())
            every = inputs_from_replay(m, orjson.loads(rules), rematch_of, b.hands, b.moves, stocks)
            want = {i.hand: i for i in every if i.skip is None}
            assert {h: hand_input(c.cursor(), b, m, h) for h in want} == want and want
            kinds.add(orjson.loads(rules).get("stock"))
    assert "draw" in kinds and kinds - {"draw"}  # both kinds of game met


def test_a_held_stores_analysis_batch_packs_its_matches(tmp_path: Path) -> None:
    """`replay analyze` on a store a server holds leaves its rows in the spool;
    the server's loader puts them in and packs their matches."""
    from replay.store import layout, load_spool
    from tests.test_ingest import hold

    db = tmp_path / "data" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(EXAMPLE_2P)], db=db, workers=0)
    server = hold(db)
    try:
        assert analyze_store(db, samples=4, workers=0)["pending"]
    finally:
        server.communicate("")
    owner = open_store(db)
    try:
        load_spool(owner, layout(db).spool)
    finally:
        owner.close()
    assert _same(db) > 0
