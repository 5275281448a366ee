"""Property-based calls from the OpenAPI schema, in-process over ASGI: never a
5xx, and every answer as the document says (its status, content type and
body against the operation's response schema).

A bounded number of examples per operation keeps the run short; writes go
out with the token.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from openapi_spec_validator import validate
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from api.app import create_app
from replay.analysis.run import analyze_store
from tests.test_api import DEFECTS, SAMPLES, build_store, open_hand_log

TOKEN = "schema-token"


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.schemas.BaseSchema]:
    tmp = tmp_path_factory.mktemp("schema")
    db = build_store(tmp / "data", [DEFECTS, SAMPLES / "international.jsonl", open_hand_log(tmp)])
    analyze_store(db, samples=0, workers=0)  # the grades' fields are checked too
    app = create_app(db, token=TOKEN)
    with TestClient(app):  # runs the lifespan: the store is open while the cases run
        yield schemathesis.openapi.from_asgi("/openapi.json", app)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_errors(case: schemathesis.Case) -> None:
    if case.method.upper() in ("POST", "DELETE"):
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {TOKEN}"}
    response = case.call()
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:500])
    case.validate_response(response, checks=[not_a_server_error, status_code_conformance,
                                             content_type_conformance, response_schema_conformance])


def test_schema_lists_the_twins(api_schema: schemathesis.schemas.BaseSchema) -> None:
    paths = set(api_schema.raw_schema["paths"])
    for p in ("/api/summary", "/api/matches", "/api/matches/{match_id}",
              "/api/matches/{match_id}/hands/{hand}", "/api/players", "/api/players/{player}",
              "/api/findings", "/api/upload"):
        assert p in paths, p


def test_document_is_valid_openapi(api_schema: schemathesis.schemas.BaseSchema) -> None:
    doc = api_schema.raw_schema
    validate(doc)  # raises on a document that breaks the OpenAPI specification
    ops = [(m, p, op) for p, item in doc["paths"].items() for m, op in item.items()]
    assert len(ops) > 30
    for method, path, op in ops:
        where = f"{method.upper()} {path}"
        assert op.get("tags") and op.get("summary") and op.get("description"), where
        assert not op["operationId"].endswith(("_get", "_post", "_delete")), where  # no generated name
        ok = op["responses"].get("200") or op["responses"].get("201") or op["responses"].get("202")
        assert ok and ok.get("content"), where
        schema = next(iter(ok["content"].values())).get("schema")
        assert schema, where  # a response model (or a download's string)
        assert schema != {}, where
        assert ("security" in op) == (method in ("post", "delete")), where
    assert doc["components"]["securitySchemes"]["token"] == {
        "type": "http", "scheme": "bearer", "description": doc["components"]["securitySchemes"]["token"]["description"]}


def _checked(api_schema: schemathesis.schemas.BaseSchema, method: str, path: str, *, status: int = 200,
             sent: dict[str, Any] | None = None, **parts: Any) -> Any:
    """Call one operation with real ids (`sent`: the transport's own arguments, a
    file say) and check the answer against the document."""
    case = api_schema[path][method].Case(**parts)
    if method in ("POST", "DELETE"):
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {TOKEN}"}
    response = case.call(**(sent or {}))
    assert response.status_code == status, (path, parts, response.text[:300])
    case.validate_response(response, checks=[status_code_conformance, content_type_conformance,
                                             response_schema_conformance])
    return response


def test_real_answers_match_their_schemas(api_schema: schemathesis.schemas.BaseSchema) -> None:
    """Generated ids are almost never stored ones: here every stored match, some of
    its hands in every view, every player, and the lists filtered by them, are
    checked against their schemas (a hand still on and a finished one alike)."""
    get = functools.partial(_checked, api_schema, "GET")
    matches = get("/api/matches", query={"per_page": 500}).json()["matches"]
    players = get("/api/players", query={"per_page": 1000}).json()["players"]
    assert len(matches) > 10 and len(players) > 10
    for m in matches:
        detail = get("/api/matches/{match_id}", path_parameters={"match_id": m["match"]}).json()
        for h in detail["hands"][:2]:
            for view in ("all", "seat0", "seat1"):
                get("/api/matches/{match_id}/hands/{hand}", path_parameters={"match_id": m["match"], "hand": h["hand"]},
                    query={"view": view})
        get("/api/moves", query={"match": m["match"], "per_page": 5000})
        get("/api/hands", query={"match": m["match"]})
    for p in players[:40]:
        report = get("/api/players/{player}", path_parameters={"player": p["player"]}).json()
        get("/api/matches", query={"player": p["player"], "per_page": 500})
        get("/api/ratings/history", query={"player": p["player"]})
        get("/api/suspicious/player", query={"player": p["player"]}, status=200 if report["hands"] else 404)
        for partner in report["partners"][:1]:
            get("/api/pair", query={"a": p["player"], "b": partner["partner"]})
    for url in ("/api/summary", "/api/findings", "/api/leaderboard", "/api/suspicious", "/api/fairness",
                "/api/fairness/alerts", "/api/ratings/calibration", "/api/certificates"):
        get(url)
    get("/api/leaderboard", query={"kind": "pairs"})
    get("/api/matches", query={"player": "a"})  # a search naming many players
    upload = _checked(api_schema, "POST", "/api/upload",
                      sent={"files": {"file": ("milo.jsonl", (SAMPLES / "milo.jsonl").read_bytes())}})
    assert upload.json()["matches"]
