"""The v4 namespace: v3's (`entities/namespaces.py`) with its full path, parent and pages.

codeyard has no subgroups: `full_path` is the path and `parent_id` null.
"""

from __future__ import annotations

from typing import TypedDict

from ..common import View
from ..namespaces import namespace as namespace_v3


class NamespaceV4(TypedDict):
    id: int
    name: str
    path: str
    kind: str
    full_path: str
    parent_id: int | None
    avatar_url: str | None
    web_url: str


class Exists(TypedDict):
    exists: bool
    suggests: list[str]


def namespace(row, view: View) -> NamespaceV4:
    base = namespace_v3(row)
    page = f"{view.base_url}/u/{row.path}" if row.kind == "user" else f"{view.base_url}/groups/{row.path}"
    return {
        "id": base["id"],
        "name": base["name"],
        "path": base["path"],
        "kind": base["kind"],
        "full_path": base["path"],
        "parent_id": None,
        "avatar_url": None,
        "web_url": page,
    }
