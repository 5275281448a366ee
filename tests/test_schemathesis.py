"""Property-based calls from the OpenAPI schema, in-process over ASGI: never a
5xx, and every answer as the document says (its status, content type and
body against the operation's response schema).

A bounded number of examples per operation keeps the run short; writes go
out with the token.
"""

from __future__ import annotations

from collections.abc import Iterator

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
