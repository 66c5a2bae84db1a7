"""The namespace entity of `/namespaces`."""

from __future__ import annotations


def namespace(row) -> dict:
    return {"id": row.id, "path": row.path, "kind": row.kind, "name": row.name}
