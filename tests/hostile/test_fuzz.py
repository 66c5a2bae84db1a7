"""Fuzzing: every API operation of the OpenAPI document gets generated requests; none may answer
5xx, and every answer must match the document (issue 10: every 500 found by fuzzing is a bug).

Bounded so that it stays a few seconds per backend: a fixed number of examples per operation,
derandomized (the same requests on every run), as the admin (who may reach every handler).
"""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, reject, settings
from schemathesis.checks import response_schema_conformance
from schemathesis.config import SchemathesisConfig

from codeyard.api.openapi import document
from codeyard.routes import documented_routes

BASE_URL = "http://testserver"
EXAMPLES = 8
# Git smart HTTP speaks its own protocol, not JSON: its hostile inputs have their own tests.
SKIPPED_PREFIXES = ("/{namespace}/{project}",)


def _fuzzed_document() -> dict:
    spec = document(documented_routes(), BASE_URL)
    spec["paths"] = {path: item for path, item in spec["paths"].items() if not path.startswith(SKIPPED_PREFIXES)}
    return spec


# The coverage phase sends every boundary case of every parameter (thousands of requests): too many
# for `make test`; the generated examples (valid and invalid) run instead.
CONFIG = SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": False}}})
SCHEMA = schemathesis.openapi.from_dict(_fuzzed_document(), config=CONFIG)


@pytest.fixture
def fuzz_admin(users):
    return users.create(admin=True, username="fuzzroot")


FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@SCHEMA.parametrize()
@FUZZ
def test_no_server_error_and_documented_shapes(case, api, fuzz_admin):
    kwargs = case.as_transport_kwargs(base_url=BASE_URL, headers={"PRIVATE-TOKEN": fuzz_admin.token})
    if isinstance(kwargs.get("data"), (bytes, str)):  # a raw body: httpx takes it as content
        kwargs["content"] = kwargs.pop("data")
    try:
        response = api.client.request(**{key: value for key, value in kwargs.items() if key in ACCEPTED})
        response.request.read()
    except (httpx.InvalidURL, AttributeError, TypeError):
        reject()  # what the client cannot send: a query over 64 KB, a number as a multipart part
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {kwargs}"
    case.validate_response(response, checks=[response_schema_conformance])


ACCEPTED = ("method", "url", "headers", "params", "content", "json", "data", "files")
