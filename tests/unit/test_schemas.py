"""Response schemas come from the handlers' return annotations, and the test client holds every
successful answer to them."""

from __future__ import annotations

from typing import Any, TypedDict

import httpx
import pytest

from codeyard.api.schemas import schema_of
from codeyard.http.paging import Page
from codeyard.http.replies import Reply
from tests.support import response_schemas


class Inner(TypedDict):
    name: str


class Outer(TypedDict):
    id: int
    inner: Inner | None
    tags: list[str]
    data: Any


class Extended(Outer, total=False):
    extra: bool


def test_annotations_become_schemas():
    components: dict = {}
    assert schema_of(Page[Outer], components) == {"type": "array", "items": {"$ref": "#/components/schemas/Outer"}}
    assert schema_of(Reply[bool], components) == {"type": "boolean"}
    assert schema_of(dict[str, int], components) == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert components["Outer"] == {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "inner": {"anyOf": [{"$ref": "#/components/schemas/Inner"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "data": {},
        },
        "required": ["data", "id", "inner", "tags"],
        "additionalProperties": False,
    }
    schema_of(Extended, components)
    assert components["Extended"]["required"] == ["data", "id", "inner", "tags"]
    assert "extra" in components["Extended"]["properties"]
    with pytest.raises(TypeError):
        schema_of(set[int], components)


def test_the_document_declares_the_entities(api):
    document = api.anonymous.get("/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    user = document["paths"]["/api/v3/user"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert user == {"$ref": "#/components/schemas/UserLogin"}
    login = document["components"]["schemas"]["UserLogin"]
    assert "private_token" in login["properties"] and "private_token" not in login["required"]
    projects = document["paths"]["/api/v3/projects"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert projects == {"type": "array", "items": {"$ref": "#/components/schemas/Project"}}


def _answer(method: str, path: str, body) -> httpx.Response:
    request = httpx.Request(method, f"http://testserver{path}")
    return httpx.Response(200, json=body, request=request)


def test_the_client_refuses_an_answer_that_leaves_its_schema():
    good = {"id": 1, "path": "ns", "kind": "user", "name": "ns"}
    response_schemas().check(_answer("GET", "/api/v3/namespaces", [good]))
    for bad in ([{**good, "secret": "x"}], [{"id": 1}], {"id": 1}):
        with pytest.raises(AssertionError, match="does not match its schema"):
            response_schemas().check(_answer("GET", "/api/v3/namespaces", bad))
    # Routes without a declared schema and error answers are not checked.
    response_schemas().check(_answer("POST", "/oauth/token", {"anything": True}))
