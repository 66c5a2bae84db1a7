"""The group entity."""

from __future__ import annotations

from typing import TypedDict

from .common import DeletedBefore, View
from .projects import Project


class Group(TypedDict):
    id: int
    name: str
    path: str
    description: str
    visibility_level: int
    avatar_url: str | None
    web_url: str


class DeletedGroup(DeletedBefore):
    path: str


class GroupDetail(Group):
    projects: list[Project]


def group(row, view: View) -> Group:
    return {
        "id": row.id,
        "name": row.name,
        "path": row.path,
        "description": row.description or "",
        "visibility_level": row.visibility_level,
        "avatar_url": None,
        "web_url": f"{view.base_url}/groups/{row.path}",
    }
