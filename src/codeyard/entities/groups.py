"""The group entity."""

from __future__ import annotations

from .common import View


def group(row, view: View) -> dict:
    return {
        "id": row.id,
        "name": row.name,
        "path": row.path,
        "description": row.description or "",
        "visibility_level": row.visibility_level,
        "avatar_url": None,
        "web_url": f"{view.base_url}/groups/{row.path}",
    }
