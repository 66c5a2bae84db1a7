"""The OpenAPI document lists every route with its parameters."""

from __future__ import annotations

import re

from codeyard.routes import documented_routes


def test_document_lists_every_route_and_parameter(api):
    documents = {}
    for version in ("v3", "v4"):
        response = api.client.get(f"/api/{version}/openapi.json")
        assert response.status_code == 200
        documents[version] = response.json()
        assert documents[version]["openapi"].startswith("3.")
    for route in documented_routes():
        document = documents["v4" if route.template.startswith("/api/v4/") else "v3"]
        path = re.sub(r"[:*](\w+)", r"{\1}", route.template)
        operation = document["paths"][path][route.method.lower()]
        names = {p["name"] for p in operation["parameters"]}
        body = operation.get("requestBody", {}).get("content", {})
        for schema in (content["schema"] for content in body.values()):
            names |= set(schema["properties"])
        assert set(route.path_params) <= names, route.template
        assert {p.name for p in route.params} <= names, route.template
        assert operation["summary"], route.template


def test_required_parameters_are_marked(api):
    document = api.anonymous.get("/openapi.json").json()
    create_user = document["paths"]["/api/v3/users"]["post"]
    schema = create_user["requestBody"]["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {"email", "password", "name", "username"}
    users_list = document["paths"]["/api/v3/users"]["get"]
    assert {"page", "per_page", "search"} <= {p["name"] for p in users_list["parameters"]}
