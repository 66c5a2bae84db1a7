"""The OpenAPI 3.1 document, generated from the declared routes so that it lists every endpoint, with
the response schemas the handlers' return annotations declare (api/schemas.py)."""

from __future__ import annotations

import re

from ..http.context import Ctx
from ..http.routing import Route
from .schemas import response_schema

SEGMENT = re.compile(r"[:*](\w+)")
# `{"message": ...}`; or `{"error": ...}`: v4's missing parameter, and a token's insufficient scope
# (with `error_description` and `scope`), as GitLab answers them.
ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "message": {"oneOf": [{"type": "string"}, {"type": "object"}]},
        "error": {"type": "string"},
        "error_description": {"type": "string"},
        "scope": {"type": "string"},
    },
    "anyOf": [{"required": ["message"]}, {"required": ["error"]}],
}
# v4 names a missing parameter as Grape does, `{"error": "x is missing"}` (`app.error_response`).
ERROR_SCHEMA_V4 = {
    "type": "object",
    "properties": {"message": ERROR_SCHEMA["properties"]["message"], "error": {"type": "string"}},
    "anyOf": [{"required": ["message"]}, {"required": ["error"]}],
}
V4_PREFIX = "/api/v4/"


def with_document(prefix: str, routes: list[Route]) -> list[Route]:
    """ROUTES and `GET PREFIX/openapi.json`, their document (which lists itself too)."""

    def openapi(ctx: Ctx) -> dict:
        return document(documented, ctx.base_url, version)

    version = prefix.rsplit("/", 1)[-1]

    documented = [*routes, Route("GET", prefix + "/openapi.json", openapi, auth="none", summary="This API's OpenAPI document")]
    return documented


def document(routes: list[Route], base_url: str, version: str = "v3") -> dict:
    paths: dict[str, dict] = {}
    components: dict[str, dict] = {"Error": ERROR_SCHEMA}
    for route in routes:
        path = SEGMENT.sub(r"{\1}", route.template)
        paths.setdefault(path, {})[route.method.lower()] = _operation(route, components)
    return {
        "openapi": "3.1.0",
        "info": {"title": "codeyard API", "version": version},
        "servers": [{"url": base_url}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(components.items())),
            "securitySchemes": {
                "privateTokenHeader": {"type": "apiKey", "in": "header", "name": "PRIVATE-TOKEN"},
                "privateTokenQuery": {"type": "apiKey", "in": "query", "name": "private_token"},
                "oauthBearer": {"type": "http", "scheme": "bearer"},
            },
        },
    }


def _operation(route: Route, components: dict[str, dict]) -> dict:
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}} for name in route.path_params
    ]
    body_params = []
    for param in route.params:
        if param.name in route.path_params:
            continue
        in_query = param.location == "query" or (param.location is None and route.method in ("GET", "DELETE"))
        if in_query:
            parameters.append(
                {"name": param.name, "in": "query", "required": param.required, "schema": param.schema(), "description": param.doc}
            )
        else:
            body_params.append(param)
    if route.paginated:
        parameters += [
            {"name": "page", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 1}},
            {"name": "per_page", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
        ]
    operation: dict = {
        "operationId": f"{route.method.lower()}_{route.handler.__name__}",
        "summary": route.summary,
        "parameters": parameters,
        "responses": _responses(route, components),
    }
    if body_params:
        schema = {
            "type": "object",
            "properties": {param.name: {**param.schema(), "description": param.doc} for param in body_params},
        }
        if required := [param.name for param in body_params if param.required]:
            schema["required"] = required
        has_file = any(param.json_type == "file" for param in body_params)
        content_types = ["multipart/form-data"] if has_file else ["application/json", "application/x-www-form-urlencoded"]
        operation["requestBody"] = {"content": {ctype: {"schema": schema} for ctype in content_types}}
    if route.auth == "none":
        operation["security"] = []
    return operation


def _responses(route: Route, components: dict[str, dict]) -> dict:
    name = "Error"
    if route.template.startswith(V4_PREFIX):
        components.setdefault("ErrorV4", ERROR_SCHEMA_V4)
        name = "ErrorV4"
    error = {"description": "Error", "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}}
    success: dict = {"description": "Success"}
    if (schema := response_schema(route, components)) is not None and route.success_status not in (204, 304):
        success["content"] = {"application/json": {"schema": schema}}
    responses = {str(route.success_status): success}
    if route.auth == "required":
        responses["401"] = {**error, "description": "Not authenticated"}
    if route.admin or route.guards:
        responses["403"] = {**error, "description": "Not permitted"}
    if route.params:
        responses["400"] = {**error, "description": "Missing or invalid parameters"}
    return responses
