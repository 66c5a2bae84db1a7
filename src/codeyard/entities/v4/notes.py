"""v4 note shapes (GitLab's Notes and Discussions APIs): a note with its thread's fields, a
discussion of notes, a diff note's position."""

from __future__ import annotations

import json
from typing import TypedDict

from ..common import View, iso
from .users import UserV4Basic, user_basic


class DiffPosition(TypedDict):
    base_sha: str
    start_sha: str
    head_sha: str
    old_path: str
    new_path: str
    position_type: str
    old_line: int | None
    new_line: int | None


class _NoteV4Fields(TypedDict):
    id: int
    type: str | None
    body: str
    attachment: None
    author: UserV4Basic | None
    created_at: str | None
    updated_at: str | None
    system: bool
    noteable_id: int
    noteable_type: str
    project_id: int
    noteable_iid: int
    resolvable: bool
    resolved: bool
    resolved_by: UserV4Basic | None
    resolved_at: str | None
    confidential: bool
    internal: bool
    commands_changes: dict


class NoteV4(_NoteV4Fields, total=False):
    position: DiffPosition  # a DiffNote's


class Discussion(TypedDict):
    id: str
    individual_note: bool
    notes: list[NoteV4]


def note(parts: tuple, view: View) -> NoteV4:
    """A note from its read path's parts (`services.discussions.parts`: row, author, resolver)."""
    row, author, resolver = parts
    shown: NoteV4 = {
        "id": row.id,
        "type": row.type,
        "body": row.note,
        "attachment": None,
        "author": user_basic(author, view) if author is not None else None,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "system": bool(row.system),
        "noteable_id": row.merge_request_id,
        "noteable_type": row.noteable_type,
        "project_id": row.project_id,
        "noteable_iid": row.noteable_iid,
        "resolvable": bool(row.resolvable),
        "resolved": bool(row.resolvable) and row.resolved_at is not None,
        "resolved_by": user_basic(resolver, view) if resolver is not None else None,
        "resolved_at": iso(row.resolved_at),
        "confidential": False,
        "internal": False,
        "commands_changes": {},
    }
    if row.position is not None:
        shown["position"] = json.loads(row.position)
    return shown


def discussion(thread: list[tuple], view: View) -> Discussion:
    """A discussion from the parts of its notes, oldest first: a comment alone is an individual note."""
    first = thread[0][0]
    return {
        "id": first.discussion_id,
        "individual_note": first.type is None,
        "notes": [note(parts, view) for parts in thread],
    }
