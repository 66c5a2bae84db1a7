"""The namespace entity of `/namespaces`."""

from __future__ import annotations

from typing import TypedDict


class Namespace(TypedDict):
    id: int
    path: str
    kind: str
    name: str


def namespace(row) -> Namespace:
    return {"id": row.id, "path": row.path, "kind": row.kind, "name": row.name}
