"""What a new user meets first: the README's demo
data, the command line's answers to empty, junk and unknown input, the
filter forms' empty fields, findings that name their file and line, and an
upload of junk. Each test here failed before its fix.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from cli.main import main as replay_main
from replay.rules import PROFILES
from tests.test_api import DEFECTS, SAMPLES, build_store

TOKEN = "first-use-token"


def run(*args: str) -> tuple[int, str, str]:
    """`replay ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = replay_main(list(args))
        except SystemExit as exc:  # argparse: --version, usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of the README's first command: sample_logs/ alone."""
    return build_store(tmp_path_factory.mktemp("demo") / "data", [SAMPLES])


@pytest.fixture(scope="module")
def defects_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The labelled second demo: the planted defects in a store of their own."""
    return build_store(tmp_path_factory.mktemp("defects") / "data", [DEFECTS])


@pytest.fixture(scope="module")
def client(defects_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = tmp_path_factory.mktemp("app") / "replay.duckdb"
    shutil.copy(defects_db, db)  # the app holds its store for writing
    with TestClient(create_app(db, token=TOKEN)) as c:
        yield c


# --------------------------------------------------------------------------- the demo data


def test_readme_demo_is_clean_and_its_fairness_passes(demo_db: Path) -> None:
    code, out, _ = run("audit", "--db", str(demo_db), "--json")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "PASS", data["verdict"]
    code, out, _ = run("validate", str(SAMPLES))
    assert code == 0 and out.rstrip().endswith(": all valid")
    assert not (SAMPLES / "defects").exists()  # the defects are a demo of their own
    readme = (DEFECTS / "README.md").read_text()
    assert "replay ingest sample_logs_defects/ --db" in readme


def test_defects_demo_is_labelled_and_fails(defects_db: Path) -> None:
    code, out, _ = run("audit", "--db", str(defects_db))
    assert code == 1 and out.rstrip().endswith("Window verdict: FAIL")


# --------------------------------------------------------------------------- the command line


def test_version() -> None:
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("replay ") and out.split()[1][0].isdigit()


def test_audit_of_an_empty_window_is_no_data_and_lists_the_profiles(demo_db: Path) -> None:
    code, out, err = run("audit", "--db", str(demo_db), "--profile", "nosuch")
    assert code == 2
    assert "PASS" not in out and out.rstrip().endswith("Window verdict: NO DATA")
    assert "unknown profile 'nosuch'" in err and all(p in err for p in PROFILES)
    code, out, _ = run("audit", "--db", str(demo_db), "--match", "nope", "--json")
    assert code == 2 and json.loads(out)["verdict"] == "NO DATA"


def test_audit_prints_tables_not_python_values(demo_db: Path) -> None:
    code, out, _ = run("audit", "--db", str(demo_db))
    assert code == 0
    assert "{" not in out and "}" not in out, [ln for ln in out.splitlines() if "{" in ln]
    battery = next(ln for ln in out.splitlines() if ln.startswith("Statistical battery"))
    assert "by group: 4p " in battery


def test_simulate_unknown_profile_lists_the_known_ones(tmp_path: Path) -> None:
    code, _, err = run("simulate", "--profile", "nosuch", "--out", str(tmp_path / "x.jsonl"))
    assert code == 2 and "unknown profile 'nosuch'" in err and "international" in err


def test_empty_folder_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("no logs here\n")
    for cmd in ("validate", "ingest"):
        extra = ["--db", str(tmp_path / "data" / "x.duckdb")] if cmd == "ingest" else []
        code, out, err = run(cmd, str(empty), *extra)
        assert code == 2, (cmd, out, err)
        assert f"no table logs (*.jsonl, *.jsonl.gz) in {empty}" in err


def test_a_binary_file_is_one_clear_error(defects_db: Path, tmp_path: Path) -> None:
    code, out, _ = run("validate", str(defects_db))  # the .duckdb file itself
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3, out
    assert lines[0] == f"file {defects_db}: 1 line, 1 bad"
    assert "MALFORMED_LINE" in lines[1] and "not a table log: binary content (a NUL byte" in lines[1]
    code, out, _ = run("validate", "--json", str(defects_db))
    data = json.loads(out)
    assert [f["line"] for f in data["findings"]] == [1] and data["files"][0]["bad_lines"] == 1
    text = tmp_path / "readme.jsonl"
    shutil.copy(Path(__file__).resolve().parent.parent / "README.md", text)
    code, out, err = run("ingest", str(text), str(SAMPLES / "milo.jsonl"), "--db", str(tmp_path / "d" / "x.duckdb"))
    assert code == 1
    assert f"error: {text.name}: not a table log: none of its first" in err  # named as the pages name it
    assert "matches: 3 (3 valid" in err  # the log beside it is stored


def test_malformed_only_file_summary_agrees_with_the_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "pass", "match": "m-1", "seq"\n')
    code, out, _ = run("validate", str(bad))
    assert code == 1
    assert out.splitlines()[-1] == "1 file, 1 line (1 bad); 0 matches; 1 error in lines of no match: NOT VALID"
    good = tmp_path / "good.jsonl"
    shutil.copy(SAMPLES / "milo.jsonl", good)
    code, out, _ = run("validate", str(good))
    assert code == 0 and out.splitlines()[-1].endswith("3 matches, 3 valid, 0 not: all valid")


# --------------------------------------------------------------------------- findings' file and line


def _line_of(path: Path, n: int) -> dict:
    return orjson.loads(path.read_bytes().splitlines()[n - 1])


@pytest.mark.parametrize("pure", [False, True], ids=["fast", "pure"])
def test_validate_json_names_the_file_and_line_of_each_finding(pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import replay.validate.run as V

    if pure:
        monkeypatch.setattr(V, "native", None)
    code, out, _ = run("validate", "--json", str(DEFECTS))
    data = json.loads(out)
    assert code == 1
    seen = 0
    for m in data["matches"]:
        for f in m["findings"]:
            assert list(f)[:5] == ["code", "severity", "hand", "seq", "message"]  # the contract, kept
            assert f["file"] and f["line"] >= 1, (m["match"], f)
            if f["seq"] is not None and f["code"] not in ("SEQ_GAP",):
                event = _line_of(Path(f["file"]), f["line"])
                assert event["seq"] == f["seq"] and event["match"] == m["match"], (f, event)
            seen += 1
    assert seen > 40
    reused = [f for m in data["matches"] for f in m["findings"] if f["code"] == "SEED_REUSED"]
    kinds = {_line_of(Path(f["file"]), f["line"])["type"] for f in reused}
    assert kinds == {"match_start", "reveal"}


def test_findings_keep_file_and_line_through_ingest_to_the_pages(client: TestClient) -> None:
    rows = client.get("/api/findings", params={"per_page": 1000}).json()["findings"]
    assert len(rows) > 40
    assert all(r["file"] and r["line"] for r in rows), [r for r in rows if not r["line"]]
    fp = next(r for r in rows if r["code"] == "FALSE_PASS")
    assert Path(fp["file"]).name == "FALSE_PASS.jsonl" and _line_of(Path(fp["file"]), fp["line"])["seq"] == fp["seq"]
    detail = client.get(f"/api/matches/{fp['match']}").json()
    (f,) = [x for x in detail["findings"] if x["code"] == "FALSE_PASS"]
    assert (f["file"], f["line"]) == (fp["file"], fp["line"])
    where = f"{fp['file']}:{fp['line']}"
    assert where in client.get("/findings", params={"code": "FALSE_PASS"}).text
    assert where in client.get(f"/matches/{fp['match']}").text
    reused = client.get("/api/findings", params={"code": "SEED_REUSED"}).json()["findings"]
    assert reused and all(r["line"] for r in reused)


# --------------------------------------------------------------------------- the pages' filters


def test_empty_filter_fields_mean_any(client: TestClient) -> None:
    everything = client.get("/api/matches").json()["total"]
    empty = {"player": "", "table": "", "profile": "", "verdict": "", "date_from": "", "date_to": ""}
    r = client.get("/matches", params=empty)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert f"Matches <small>{everything} found" in r.text
    assert client.get("/api/matches", params=empty).json()["total"] == everything
    r = client.get("/findings", params={"code": "", "severity": "", "match": ""})
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert client.get("/api/findings", params={"severity": ""}).status_code == 200
    assert client.get("/api/fairness", params={"date_from": "", "profile": ""}).json()["verdict"] == "FAIL"


def test_a_bad_filter_on_a_page_gets_the_html_error_page(client: TestClient) -> None:
    for url, params, field in [
        ("/matches", {"verdict": "nope"}, "verdict"),
        ("/matches", {"date_from": "2026-02-30"}, "date_from"),
        ("/findings", {"severity": "fatal"}, "severity"),
        ("/fairness", {"date_to": "tomorrow"}, "date_to"),
        ("/players", {"page": "0"}, "page"),
    ]:
        r = client.get(url, params=params)
        assert r.status_code == 422 and r.headers["content-type"].startswith("text/html"), url
        assert "<h1>Bad request</h1>" in r.text and field in r.text and "detail" not in r.text
    api = client.get("/api/matches", params={"verdict": "nope"})
    assert api.status_code == 422 and api.json()["detail"][0]["loc"] == ["query", "verdict"]
    r = client.get("/no/such/page")
    assert r.status_code == 404 and "<h1>Not found</h1>" in r.text


def test_fairness_of_an_empty_window_is_no_data(client: TestClient) -> None:
    data = client.get("/api/fairness", params={"profile": "nosuch"}).json()
    assert data["verdict"] == "NO DATA" and data["window"]["hands"] == 0
    assert any("known profiles: " in n and "international" in n for n in data["notes"])
    html = client.get("/fairness", params={"profile": "nosuch"}).text
    assert 'class="banner f-NODATA"' in html and 'class="banner f-PASS"' not in html


# --------------------------------------------------------------------------- uploads


def test_an_upload_of_junk_answers_with_what_was_found(client: TestClient, defects_db: Path) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    junk = defects_db.read_bytes()[:50_000]
    r = client.post("/api/upload", files={"file": ("junk.jsonl", junk)}, headers=auth)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["counts"] == {"lines": 1, "bad_lines": 1, "matches": 0, "findings": 1, "errors": 1}
    assert got["matches"] == [] and "not a table log" in got["warning"]
    assert got["problems"][0]["message"].startswith("line 1: not a table log: binary content")
    text = b"hello\n" + (SAMPLES / "pagat.jsonl").read_bytes() + b"{oops\n"
    r = client.post("/api/upload", files={"file": ("mixed.jsonl", text)}, headers=auth)
    c = r.json()["counts"]
    assert c["lines"] == text.count(b"\n") and c["bad_lines"] == 2 and c["matches"] == 3 and c["findings"] == 2
    again = client.post("/api/upload", files={"file": ("mixed.jsonl", text)}, headers=auth).json()
    assert again["already_stored"] and again["counts"] == c


# --------------------------------------------------------------------------- the API docs


def test_docs_need_no_cdn(client: TestClient) -> None:
    for path in ("/docs", "/redoc"):
        html = client.get(path).text
        assert "cdn." not in html and "https://" not in html, path
    html = client.get("/docs").text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        (src,) = [w.split('"')[1] for w in html.split() if asset in w and '"' in w]
        assert client.get(src).status_code == 200, src
