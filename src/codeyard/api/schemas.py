"""Response schemas, derived from the handlers' return annotations.

A handler declares what it answers with its return type: an entity (a TypedDict of `entities/`),
`list[...]`, `Page[...]` (a paginated list), `Reply[...]` (the same with its own status or
headers), `bool`, or `X | None`. Each TypedDict becomes one component of the OpenAPI document,
closed (`additionalProperties: false`) so the document says exactly which keys an answer has; the
test client checks every successful answer against it. A handler without an annotation declares
no schema.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

from ..http.paging import Page
from ..http.replies import Reply
from ..http.routing import Route

SCALARS = {str: "string", int: "integer", bool: "boolean", float: "number", type(None): "null"}


def returned(route: Route) -> Any:
    """The handler's return annotation, or None when it declares none."""
    try:
        hints = get_type_hints(route.handler)
    except NameError:
        raise TypeError(f"{route.handler.__qualname__}: an annotation names something not imported") from None
    return hints.get("return")


def response_schema(route: Route, components: dict[str, dict]) -> dict | None:
    annotation = returned(route)
    return None if annotation is None else schema_of(annotation, components)


def schema_of(annotation: Any, components: dict[str, dict]) -> dict:
    """The JSON schema of ANNOTATION; TypedDicts are added to COMPONENTS and referred to."""
    origin = get_origin(annotation)
    if annotation is Any:
        return {}
    if annotation in SCALARS:
        return {"type": SCALARS[annotation]}
    if is_typeddict(annotation):
        return _component(annotation, components)
    if origin in (Page, Reply):
        inner = schema_of(get_args(annotation)[0], components)
        return {"type": "array", "items": inner} if origin is Page else inner
    if origin is list:
        return {"type": "array", "items": schema_of(get_args(annotation)[0], components)}
    if origin is dict or annotation is dict:
        values = get_args(annotation)[1] if get_args(annotation) else Any
        return {"type": "object", "additionalProperties": schema_of(values, components)}
    if origin in (Union, types.UnionType):
        return {"anyOf": [schema_of(arg, components) for arg in get_args(annotation)]}
    if origin is Literal:
        return {"enum": list(get_args(annotation))}
    if origin in (typing.Required, typing.NotRequired):
        return schema_of(get_args(annotation)[0], components)
    raise TypeError(f"no JSON schema for {annotation!r}")


_CLAIMED: dict[str, type] = {}  # component name -> the entity that has it


def component_name(entity: type) -> str:
    """The entity's name in the document: v4's shapes (`entities/v4`) end in V4, since v3's and
    v4's entities of one area often share a name (`RepoFile`); two different shapes of one name
    are an error (the document would show one of them for both)."""
    name = entity.__name__
    if entity.__module__.startswith("codeyard.entities.v4") and "V4" not in name:
        name += "V4"
    claimed = _CLAIMED.setdefault(name, entity)
    if claimed is not entity and _shape(claimed) != _shape(entity):
        raise TypeError(f"two response shapes are named {name}: {claimed.__module__} and {entity.__module__}")
    return name


def _shape(entity: type) -> tuple:
    return get_type_hints(entity), entity.__required_keys__


def _component(entity: type, components: dict[str, dict]) -> dict:
    name = component_name(entity)
    if name not in components:
        components[name] = {}  # placeholder: an entity may contain itself
        hints = get_type_hints(entity)
        components[name] = {
            "type": "object",
            "properties": {key: schema_of(value, components) for key, value in hints.items()},
            "required": sorted(entity.__required_keys__),
            "additionalProperties": False,
        }
    return {"$ref": f"#/components/schemas/{name}"}
