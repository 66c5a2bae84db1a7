"""The project event entity."""

from __future__ import annotations

from typing import Any, TypedDict

from .common import View, iso
from .notes import Note
from .notes import note as note_entity
from .users import UserBasic, user_basic


class EventBase(TypedDict):
    title: str | None
    project_id: int
    action_name: str
    target_id: int | None
    target_type: str | None
    author_id: int | None
    author: UserBasic | None
    author_username: str | None
    data: Any
    target_title: str | None
    created_at: str | None


class Event(EventBase, total=False):
    note: Note  # only on comment events (reference 4.9)


def event(row, view: View, action_name: str, author, note=None) -> Event:
    """ROW an Event (model or read path row), AUTHOR its author; NOTE the comment of a comment event
    (target type `Note`), if it still exists, with its `author`."""
    data = {
        "title": row.title,
        "project_id": row.project_id,
        "action_name": action_name,
        "target_id": row.target_id,
        "target_type": row.target_type,
        "author_id": row.author_id,
        "author": user_basic(author, view) if author is not None else None,
        "author_username": author.username if author is not None else None,
        "data": row.data,
        "target_title": row.title,
        "created_at": iso(row.created_at),
    }
    if note is not None:
        data["note"] = note_entity(note, view, note.author)
    return data
