"""Property-based calls from the OpenAPI schema, in-process over ASGI: never a 5xx.

A bounded number of examples per operation keeps the run short; writes go
out with and without the token (both must stay below 500).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from api.app import create_app
from tests.test_api import DEFECTS, SAMPLES, build_store, open_hand_log

TOKEN = "schema-token"


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.schemas.BaseSchema]:
    tmp = tmp_path_factory.mktemp("schema")
    db = build_store(tmp / "data", [DEFECTS, SAMPLES / "international.jsonl", open_hand_log(tmp)])
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


def test_schema_lists_the_twins(api_schema: schemathesis.schemas.BaseSchema) -> None:
    paths = set(api_schema.raw_schema["paths"])
    for p in ("/api/summary", "/api/matches", "/api/matches/{match_id}",
              "/api/matches/{match_id}/hands/{hand}", "/api/players", "/api/players/{player}",
              "/api/findings", "/api/upload"):
        assert p in paths, p
