"""The project hook entity. Its flags are the strings "true"/"false" (reference DECISIONS row 5)."""

from __future__ import annotations

from typing import TypedDict

from .common import iso


class Hook(TypedDict):
    id: int
    url: str
    project_id: int
    push_events: str
    issues_events: str
    merge_requests_events: str
    tag_push_events: str
    note_events: str
    build_events: str
    enable_ssl_verification: str
    created_at: str | None

FLAGS = (
    "push_events",
    "issues_events",
    "merge_requests_events",
    "tag_push_events",
    "note_events",
    "build_events",
    "enable_ssl_verification",
)


def flag(value: bool) -> str:
    return "true" if value else "false"


def hook(row) -> Hook:
    data = {"id": row.id, "url": row.url, "project_id": row.project_id}
    data.update((name, flag(getattr(row, name))) for name in FLAGS)
    data["created_at"] = iso(row.created_at)
    return data
