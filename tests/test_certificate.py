"""The auditor's certificate: issue, sign, prove, verify; the PDF read back; the page.

The store is built the real way (simulated matches and one planted
DEAL_MISMATCH log, ingested); tampering is done on copies: a byte of the
JSON, a hand of the store, a line of a kept log.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from cli.main import main as replay_main
from replay.ingest import ingest
from replay.simulate import SimConfig, defect_log, simulate, write_lines
from replay.store import layout
from reports import shufflers, targeted
from reports.certificate import keys, lines, merkle
from reports.certificate.build import Scope
from reports.certificate.power import DEALS_ALPHA, LUCK_ALPHA, friend_limit, power_table
from reports.certificate.verify import check_proof, prove, verify_folder
from reports.targeted import battery_with_targeted, fisher_yates_draws

CFG = SimConfig(profiles=("international", "domena_2p"), hands=160, seed=5, tables=3, players_pool=12)
PERIOD = ("--from", "2000-01-01", "--to", "2099-12-31")


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = replay_main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cert-logs")
    write_lines(simulate(CFG), d / "sim.jsonl")
    write_lines(defect_log("DEAL_MISMATCH"), d / "deal.jsonl")
    return d


@pytest.fixture(scope="module")
def store(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("cert-store")
    db = data / "replay.duckdb"
    ingest([str(logs)], db=db, workers=0)
    assert _cli("keys", "init", "--db", str(db))[0] == 0
    return db


@pytest.fixture(scope="module")
def issued(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cert") / "out"
    code, text, err = _cli("certify", "--db", str(store), *PERIOD, "--out", str(out))
    assert code == 1, err  # the planted DEAL_MISMATCH fails the period
    assert "FAIL" in text
    return out


def _copy(folder: Path, tmp: Path) -> Path:
    dst = tmp / folder.name
    shutil.copytree(folder, dst)
    return dst


# --------------------------------------------------------------------------- the Merkle tree


def _rfc6962(leaves: list[bytes]) -> bytes:
    """RFC 6962's MTH, recursively: the reference the bottom-up tree must equal."""
    if len(leaves) == 1:
        return leaves[0]
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    return hashlib.sha256(b"\x01" + _rfc6962(leaves[:k]) + _rfc6962(leaves[k:])).digest()


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 7, 8, 9, 13, 33])
def test_merkle_root_is_rfc6962_and_every_path_checks(n: int) -> None:
    leaves = [merkle.leaf_hash(merkle.leaf_data("t", "m", i, "d")) for i in range(n)]
    root = merkle.merkle_root(leaves)
    assert root == _rfc6962(leaves)
    for i in range(n):
        assert merkle.verify_path(leaves[i], merkle.inclusion_path(leaves, i), root)
    if n > 1:
        assert not merkle.verify_path(leaves[0], merkle.inclusion_path(leaves, 1), root)


# --------------------------------------------------------------------------- keys


def test_keys_init_is_private_and_made_once(store: Path) -> None:
    private, public = keys.key_paths(store.parent)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    code, _, err = _cli("keys", "init", "--db", str(store))
    assert code == 1 and "never overwritten" in err


def test_certify_without_a_key_says_how_to_make_one(tmp_path: Path, store: Path) -> None:
    db = tmp_path / "replay.duckdb"
    shutil.copy(store, db)
    code, _, err = _cli("certify", "--db", str(db), *PERIOD)
    assert code == 2 and "replay keys init" in err


# --------------------------------------------------------------------------- the certificate


def test_certificate_has_every_section(issued: Path) -> None:
    c = json.loads((issued / "certificate.json").read_text())
    assert {"scope", "completeness", "software", "deterministic", "battery", "power", "luck", "verdict"} <= set(c)
    assert c["verdict"]["verdict"] == "FAIL" and c["verdict"]["complete"]
    assert c["scope"]["hands"] > 100 and c["scope"]["matches"] >= 2
    assert {k["seats"] for k in c["scope"]["hands_by_seats_and_stock"]} == {4, 2}
    comp = c["completeness"]
    assert comp["leaves"] == c["scope"]["hands"] + c["scope"]["matches"]  # hands, and a hand 0 a match
    assert comp["hands_without_lines_total"] == 0 and not comp["kept_files_missing"]
    (bad,) = [f for f in c["deterministic"]["failing"] if "DEAL_MISMATCH" in f["problems"]]
    assert any(e.startswith("DEAL_MISMATCH") for e in bad["evidence"])
    names = {t["name"].split("[")[0] for t in c["battery"]["tests"]}
    assert {"tile_seat", "modulo_bias_lr", "cyclic_decks", "same_position"} <= names
    assert all(t["deals"] > 0 for t in c["battery"]["tests"])
    assert c["battery"]["alpha"] == DEALS_ALPHA and "Holm" in c["battery"]["correction"]
    assert c["luck"]["alpha"] == LUCK_ALPHA and DEALS_ALPHA + LUCK_ALPHA <= 0.005  # clearly under 1% together
    power = {r["cheat"]: r for r in c["power"]["shufflers"]}
    assert set(power) >= {"modulo_bias", "sattolo", "friend"}
    assert 0 <= c["power"]["friend_np_limit"] <= 1
    sw = c["software"]
    assert sw["specs"]["deal_scheme"] == "deal-v1"
    assert all(len(p["sha256"]) == 64 for p in sw["packages"] if p["found"])


def test_signed_files_and_figures_verify_from_store_and_logs(issued: Path, store: Path, logs: Path) -> None:
    desk = keys.load_public(store.parent)
    conn = duckdb.connect(str(store), read_only=True)
    try:
        v = verify_folder(issued, desk_key=desk, conn=conn, data_dir=store.parent, logs=[logs])
    finally:
        conn.close()
    assert v.ok, v.problems
    assert any("every figure recomputed" in c for c in v.checked)
    code, text, _ = _cli("certificate", "verify", str(issued), "--db", str(store), "--logs", str(logs))
    assert code == 0 and text.endswith("certificate verified\n")
    # the logs alone: a store is built from them and every figure recomputed
    code, text, _ = _cli("certificate", "verify", str(issued), "--logs", str(logs))
    assert code == 0 and "every figure recomputed from the store: the same" in text, text


def test_one_byte_changed_fails_with_the_file_named(issued: Path, tmp_path: Path) -> None:
    bad = _copy(issued, tmp_path)
    data = bytearray((bad / "certificate.json").read_bytes())
    i = data.index(b'"hands": ') + len(b'"hands": ')
    data[i] = ord("9") if data[i] != ord("9") else ord("8")
    (bad / "certificate.json").write_bytes(bytes(data))
    v = verify_folder(bad)
    assert not v.ok
    assert any(p.startswith("certificate.json: changed since it was signed") for p in v.problems)


def test_another_key_is_named(issued: Path, tmp_path: Path) -> None:
    other = keys.init_keys(tmp_path / "other")
    v = verify_folder(issued, desk_key=other)
    assert any("not the desk's key" in p for p in v.problems)


def test_a_store_with_one_hand_changed_fails_verification(issued: Path, store: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(store.parent, data)
    db = data / "replay.duckdb"
    conn = duckdb.connect(str(db))
    # swap two tiles between seats 0 and 1 of one 4-seat hand: the deal tests see another deck
    match, hand = conn.execute(
        "SELECT h.match, h.hand FROM hands h JOIN matches m USING (match) "
        "WHERE m.players = 4 AND h.deal_ok ORDER BY 1, 2 LIMIT 1"
    ).fetchone()
    conn.execute(
        "UPDATE hands SET dealt = [[dealt[2][1]] || dealt[1][2:], [dealt[1][1]] || dealt[2][2:]] || dealt[3:] "
        "WHERE match = ? AND hand = ?", [match, hand],
    )  # fmt: skip
    conn.close()
    code, text, _ = _cli("certificate", "verify", str(issued), "--db", str(db))
    assert code == 1
    assert "DIFFERS: battery.tests" in text or "DIFFERS: luck" in text
    assert text.endswith("certificate NOT verified\n")


def test_the_ingest_stores_each_hands_digest_as_its_kept_logs_give_it(store: Path) -> None:
    conn = duckdb.connect(str(store), read_only=True)
    try:
        matches = [m for (m,) in conn.execute("SELECT match FROM matches ORDER BY 1").fetchall()]
        kept = lines.stored(conn, store.parent, matches)
        files, missing = lines.store_files(conn, store.parent, matches)
        nulls = conn.execute("SELECT count(*) FROM hands WHERE log_digest IS NULL").fetchall()[0][0]
    finally:
        conn.close()
    assert nulls == 0 and not missing
    again = lines.digests(files, matches)
    joined = kept.join(again, on=["match", "hand"], how="left")
    assert kept.height > 100 and joined.height == kept.height
    assert joined.filter(pl.col("digest") != pl.col("digest_right")).height == 0
    assert (joined.get_column("lines") == joined.get_column("lines_right")).all()


def test_a_match_read_over_two_ingests_is_hashed_from_both_files(logs: Path, tmp_path: Path) -> None:
    """The loader validates such a match again from all its kept files: its digests too."""
    rows = (logs / "sim.jsonl").read_bytes().split(b"\n")
    k = len(rows) // 2 + 7
    (tmp_path / "first.jsonl").write_bytes(b"\n".join(rows[:k]) + b"\n")
    (tmp_path / "second.jsonl").write_bytes(b"\n".join(rows[k:]))
    db = tmp_path / "two" / "replay.duckdb"
    db.parent.mkdir()
    ingest([str(tmp_path / "first.jsonl")], db=db, workers=0)
    ingest([str(tmp_path / "second.jsonl")], db=db, workers=0)
    conn = duckdb.connect(str(db), read_only=True)
    try:
        split = conn.execute("SELECT match FROM match_files GROUP BY 1 HAVING count(*) > 1").fetchall()
        nulls = conn.execute("SELECT count(*) FROM hands WHERE log_digest IS NULL").fetchall()[0][0]
        matches = [m for (m,) in conn.execute("SELECT match FROM matches").fetchall()]
        kept = lines.stored(conn, db.parent, matches)
        files, _ = lines.store_files(conn, db.parent, matches)
    finally:
        conn.close()
    assert split and nulls == 0  # stored, not hashed again by the certificate
    joined = kept.join(lines.digests(files, matches), on=["match", "hand"], how="full")
    assert joined.height == kept.height
    assert joined.filter(pl.col("digest") != pl.col("digest_right")).height == 0


def test_a_store_with_one_digest_or_one_kept_line_changed_fails(issued: Path, store: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(store.parent, data)
    db = data / store.name
    conn = duckdb.connect(str(db))
    match, hand = conn.execute("SELECT match, hand FROM hands ORDER BY 1, 2 LIMIT 1 OFFSET 7").fetchone()
    conn.execute("UPDATE hands SET log_digest = md5('x') || md5('y') WHERE match = ? AND hand = ?", [match, hand])
    conn.close()
    code, text, _ = _cli("certificate", "verify", str(issued), "--db", str(db))
    assert code == 1 and "DIFFERS: merkle root recomputed from the store" in text
    assert f"DIFFERS: hand {match}/{hand}: its log lines differ" in text and "(the digest stored with it)" in text
    # the store untouched, one line of a kept file changed: named when the files are read again
    shutil.rmtree(data)
    shutil.copytree(store.parent, data)
    kept = sorted(layout(db).logs.glob("*.jsonl"), key=lambda p: p.stat().st_size)[-1]
    rows = kept.read_bytes().split(b"\n")
    k = next(i for i, line in enumerate(rows) if b'"type":"play"' in line)
    got = json.loads(rows[k])
    rows[k] = rows[k].replace(b'"ts":"', b'"ts":"X', 1)
    kept.write_bytes(b"\n".join(rows))
    code, text, _ = _cli("certificate", "verify", str(issued), "--db", str(db))
    assert code == 1
    assert f"DIFFERS: hand {got['match']}/{got['hand']}: its log lines differ" in text
    assert "(read again from the kept log files)" in text


_PURE_VERIFY = """
import json, sys
from pathlib import Path
import duckdb
from replay.accel import native
from replay.ingest import ingest
from reports.certificate.verify import verify_folder
cert, logs, db = map(Path, sys.argv[1:4])
ingest([str(logs)], db=db, workers=0)
conn = duckdb.connect(str(db), read_only=True)
v = verify_folder(cert, conn=conn, data_dir=db.parent, logs=[logs])
print(json.dumps({"native": native is not None, **v.to_dict()}))
"""


def test_the_pure_python_path_gives_the_same_certificate(issued: Path, logs: Path, tmp_path: Path) -> None:
    """REPLAY_PURE=1: the logs ingested without the C build (reader, replayer, deal in
    Python) give every leaf and every figure of the certificate issued with it."""
    code = subprocess.run(
        [sys.executable, "-c", _PURE_VERIFY, str(issued), str(logs), str(tmp_path / "pure.duckdb")],
        capture_output=True, text=True, env={**os.environ, "REPLAY_PURE": "1"}, timeout=600, check=False,
    )  # fmt: skip
    assert code.returncode == 0, code.stderr[-2000:]
    got = json.loads(code.stdout.strip().splitlines()[-1])
    assert got["native"] is False
    assert got["ok"], got["problems"]
    assert any("every figure recomputed from the store: the same" in c for c in got["checked"])
    assert any("kept file(s): the same" in c for c in got["checked"])


def test_a_changed_log_line_names_its_hand(issued: Path, store: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(store.parent, data)
    logs = layout(data / store.name).logs  # the store's own folder of kept logs
    kept = sorted(logs.glob("*.jsonl"), key=lambda p: p.stat().st_size)[-1]
    rows = kept.read_bytes().split(b"\n")
    k = next(i for i, line in enumerate(rows) if b'"type":"play"' in line)
    hand = json.loads(rows[k])
    rows[k] = rows[k].replace(b'"ts":"', b'"ts":"X', 1)
    kept.write_bytes(b"\n".join(rows))
    v = verify_folder(issued, logs=[logs])
    assert f"hand {hand['match']}/{hand['hand']}: its log lines differ" in " ".join(v.problems)


def test_prove_and_verify_one_hand(issued: Path, store: Path, logs: Path, tmp_path: Path) -> None:
    c = json.loads((issued / "certificate.json").read_text())
    hand = c["deterministic"]["failing"][0]
    code, text, _ = _cli("certificate", "prove", f"{hand['match']}/{hand['hand']}", "--db", str(store))
    assert code == 0
    proof = json.loads(text)
    assert proof["merkle_root"] == c["completeness"]["merkle_root"] and proof["path"]
    assert check_proof(proof) == []
    path = tmp_path / "proof.json"
    path.write_text(text)
    assert _cli("certificate", "verify", str(issued), "--proof", str(path), "--logs", str(logs))[0] == 0
    proof["path"][0]["hash"] = "00" * 32
    assert check_proof(proof) == ["the path does not lead from the hand's leaf to the root"]
    assert prove(issued, hand["match"], hand["hand"])["leaf_index"] == json.loads(text)["leaf_index"]
    assert _cli("certificate", "prove", "nope/1", "--db", str(store))[0] == 1


def test_month_scope() -> None:
    assert Scope.month("2024-02").to_dict()["to"] == "2024-02-29"


# --------------------------------------------------------------------------- the PDF


def test_pdf_text_has_the_id_and_page_numbers_on_every_page(issued: Path, tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf")
    cid = json.loads((issued / "certificate.json").read_text())["certificate"]["id"]
    reader = pypdf.PdfReader(issued / "certificate.pdf")
    n = len(reader.pages)
    assert n >= 2
    for i, pg in enumerate(reader.pages, 1):
        text = pg.extract_text()
        assert cid in text and f"page {i} of {n}" in text
    whole = " ".join(pg.extract_text() for pg in reader.pages)
    assert "Merkle" in whole and "Glossary" in whole and "DEAL_MISMATCH" in whole
    if shutil.which("pdftoppm"):
        subprocess.run(["pdftoppm", "-r", "40", "-png", "-f", "1", "-l", "2",
                        str(issued / "certificate.pdf"), str(tmp_path / "page")], check=True)  # fmt: skip
        pngs = sorted(tmp_path.glob("page*.png"))
        assert len(pngs) == 2 and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)


def test_html_prints_without_navigation(issued: Path) -> None:
    html = (issued / "certificate.html").read_text()
    assert "<nav" not in html and "<script" not in html
    assert "counter(pages)" in html and "@page" in html


# --------------------------------------------------------------------------- the page


@pytest.fixture(scope="module")
def client(store: Path, issued: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("cert-app") / "data"
    shutil.copytree(store.parent, data)
    with TestClient(create_app(data / "replay.duckdb", token="t0ken")) as c:
        yield c


def test_page_lists_certificates_and_the_public_key(client: TestClient, store: Path) -> None:
    got = client.get("/api/certificates").json()
    desk = keys.load_public(store.parent)
    assert desk is not None and got["public_key"]["key_id"] == desk.key_id
    assert got["certificates"] and got["certificates"][0]["verdict"] == "FAIL"
    row = got["certificates"][0]
    for url in row["downloads"].values():
        assert client.get(url).status_code == 200
    assert client.get("/api/certificates/key").json()["pem"] == desk.pem
    page = client.get("/certificates").text
    assert row["id"] in page and desk.key_id in page and "PRIVATE" not in page
    assert client.get(f"/certificates/{row['id']}/desk_ed25519.pem").status_code == 404


def test_issuing_from_the_page_needs_the_token(client: TestClient) -> None:
    body = {"from": "2000-01-01", "to": "2099-12-31", "profile": "domena_2p"}
    assert client.post("/api/certificates", json=body).status_code == 401
    r = client.post("/api/certificates", json=body, headers={"Authorization": "Bearer t0ken"})
    assert r.status_code == 201 and r.json()["profile"] == "domena_2p" and r.json()["verdict"] == "PASS"
    ids = [c["id"] for c in client.get("/api/certificates").json()["certificates"]]
    assert r.json()["id"] in ids


# --------------------------------------------------------------------------- targeted tests, power


@pytest.mark.parametrize("t", [21, 28])
def test_the_stored_comparator_positions_are_the_simulated_ones(t: int) -> None:
    stored = targeted._simulated_counts("random_comparator", t)
    assert stored.sum() == targeted._SIMULATED * t
    assert np.array_equal(stored, targeted._simulated_counts("random_comparator", t, stored=False))


def test_fisher_yates_draws_give_the_deck_back() -> None:
    rng = np.random.default_rng(3)
    decks = shufflers.batch_fisher_yates(rng, 50, 28).astype(np.int64)
    draws = fisher_yates_draws(decks)
    for deck, js in zip(decks[:5], draws[:5], strict=True):
        assert shufflers.fisher_yates(iter(js.tolist()).__next__, 28) == deck.tolist()


def test_targeted_tests_catch_modulo_bias_at_2000_deals_and_pass_fair() -> None:
    rng = np.random.default_rng(20)
    bad = battery_with_targeted(shufflers.simulate_window("modulo_bias", 2000, rng), 0.005)
    assert any(t.name == "modulo_bias_lr[4p]" and t.verdict != "PASS" for t in bad.tests)
    fair = battery_with_targeted(shufflers.simulate_window("fair", 2000, rng), 0.005)
    assert fair.verdict == "PASS"


def test_power_table_meets_the_target_and_the_friend_limit() -> None:
    table = power_table()
    at = table["sizes"].index(2000)
    for cheat, row in table["cheats"].items():
        if cheat != "friend":
            assert row["rates"][at] >= 0.9, cheat
    assert table["fair"]["deals_alarm_rate"] <= 0.01
    assert 0.3 < friend_limit(500) < 0.6 < friend_limit(2000)


# --------------------------------------------------------------------------- a failed deal's evidence


def test_deal_mismatch_page_shows_the_derived_deal_beside_the_logged(client: TestClient, issued: Path) -> None:
    c = json.loads((issued / "certificate.json").read_text())
    (bad,) = [f for f in c["deterministic"]["failing"] if "DEAL_MISMATCH" in f["problems"]]
    got = client.get(f"/api/matches/{bad['match']}/hands/{bad['hand']}").json()["info"]["deal_evidence"]
    assert got is not None and got["differing_seats"]
    for row in got["seats"]:
        logged = {t["tile"] for t in row["logged"]}
        derived = {t["tile"] for t in row["derived"]}
        assert {t["tile"] for t in row["logged"] if t["differs"]} == logged - derived
        assert {t["tile"] for t in row["derived"] if t["differs"]} == derived - logged
    page = client.get(f"/matches/{bad['match']}/hands/{bad['hand']}").text
    assert 'id="deal-evidence"' in page and got["seeds"]["server_seed"] in page
    assert page.count("<mark>") == sum(t["differs"] for r in got["seats"] for k in ("logged", "derived") for t in r[k])
    match = next(m["match"] for m in client.get("/api/matches").json()["matches"] if m["match"] != bad["match"])
    assert client.get(f"/api/matches/{match}/hands/1").json()["info"]["deal_evidence"] is None


def test_leaf_digests_ignore_line_ends_and_junk(tmp_path: Path) -> None:
    good = [b'{"type":"match_start","match":"m1","seq":0}', b'{"type":"deal","match":"m1","seq":1,"hand":1}',
            b'{"type":"play","match":"m1","seq":2,"hand":1}']  # fmt: skip
    (tmp_path / "lf.jsonl").write_bytes(b"\n".join([good[2], b"not json", good[0], good[1]]) + b"\n")
    (tmp_path / "crlf").mkdir()
    (tmp_path / "crlf" / "x.jsonl").write_bytes(b"\r\n".join(good) + b"\r\n")
    lf = lines.digests(lines.log_paths([tmp_path / "lf.jsonl"]), ["m1"]).sort("hand")
    crlf = lines.digests(lines.log_paths([tmp_path / "crlf"]), ["m1"]).sort("hand")
    assert lf.equals(crlf)
    assert lf.get_column("digest").to_list() == [merkle.lines_digest([good[0]]), merkle.lines_digest(good[1:])]
    assert lines.digests(lines.log_paths([tmp_path / "lf.jsonl"]), ["m2"]).height == 0


def _reference_digests(texts: list[bytes]) -> dict[tuple[str, int], tuple[str, int]]:
    """The leaf digests line by line, as docs/certificate.md defines them (ordinary lines)."""
    hands: dict[tuple[str, int], list[tuple[bool, int, bytes]]] = {}
    for text in texts:
        for raw in text.split(b"\n"):
            line = raw[:-1] if raw.endswith(b"\r") else raw
            try:
                obj = json.loads(line.decode())
            except (UnicodeDecodeError, ValueError):
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("match"), str):
                continue
            hand = obj.get("hand") if isinstance(obj.get("hand"), int) else 0
            seq = obj.get("seq")
            key = (seq is None, seq if isinstance(seq, int) else 0, line)
            hands.setdefault((obj["match"], hand), []).append(key)
    return {k: (hashlib.sha256(b"\n".join(b for *_, b in sorted(v))).hexdigest(), len(v)) for k, v in hands.items()}


def test_line_digests_agree_with_a_line_by_line_reference(tmp_path: Path) -> None:
    """Hands together and in order (one hash over the slice), and every other case (gathered)."""
    import gzip  # noqa: PLC0415 -- this test alone writes a gzip log

    def line(match: str, seq: int | None, hand: int | None, extra: str = "") -> bytes:
        fields = {"type": "play", "match": match, **({"seq": seq} if seq is not None else {}),
                  **({"hand": hand} if hand is not None else {}), "x": extra}  # fmt: skip
        return json.dumps(fields, separators=(",", ":")).encode()

    together = [line("a", 0, None)] + [line("a", k, 1 + (k - 1) // 5) for k in range(1, 21)]
    odd = [
        line("b", 3, 1), line("b", 1, 1), line("b", 2, 1),  # out of order
        line("b", 4, 2, "y"), line("b", 4, 2, "x"),  # the same seq: by the bytes
        line("b", None, 3), line("b", 9, 3),  # no seq: last
        b"", b"   ", b"not json", b'{"match": 5, "seq": 1}', b'\xff\xfe{"match":"b","seq":1,"hand":1}',
        line("c", 1, 1) + b"\r",  # a CR before the LF
    ]
    first = b"\n".join(together[:13] + odd[:4]) + b"\n"
    second = b"\n".join(together[13:] + odd[4:] + [line("b", 5, 1)])  # b's hand 1 spans the files; no final LF
    (tmp_path / "one.jsonl").write_bytes(first)
    (tmp_path / "two.jsonl.gz").write_bytes(gzip.compress(second))
    got = lines.digests(lines.log_paths([tmp_path]), ["a", "b", "c"])
    want = _reference_digests([first, second + b"\n"])
    assert {(m, h): (d, n) for m, h, d, n in got.iter_rows()} == want
    assert want[("b", 1)][1] == 4 and ("b", 0) not in want

