"""Note shapes (reference 4.8): the notes resource's Note and the commit comments' CommitNote."""

from __future__ import annotations

from typing import TypedDict

from .common import View, iso
from .users import UserBasic, user_basic

UPVOTE, DOWNVOTE = ":+1:", ":-1:"


class Note(TypedDict):
    id: int
    body: str
    attachment: str | None
    author: UserBasic | None
    created_at: str | None
    system: bool
    noteable_id: int | None
    noteable_type: str
    upvote: bool
    downvote: bool


class CommitNote(TypedDict):
    note: str
    path: str | None
    line: int | None
    line_type: str | None
    author: UserBasic | None
    created_at: str | None


def note(row, view: View, author) -> Note:
    """A comment as the notes resource shows it (ROW a Note model or a read path's row, AUTHOR None
    or its author); `upvote` / `downvote` say whether it is a `:+1:` / `:-1:` vote, the comments the
    merge request's counts are made of."""
    vote = row.note.strip()
    return {
        "id": row.id,
        "body": row.note,
        "attachment": None,
        "author": user_basic(author, view) if author is not None else None,
        "created_at": iso(row.created_at),
        "system": bool(row.system),
        "noteable_id": row.merge_request_id,
        "noteable_type": row.noteable_type,
        "upvote": vote == UPVOTE,
        "downvote": vote == DOWNVOTE,
    }


def commit_note(row, view: View, author) -> CommitNote:
    """A comment on a commit; `path`, `line` and `line_type` when it is on one line of the diff.
    AUTHOR is the model's or the read path's (`services.identity.Contact`), None when the user is gone."""
    return {
        "note": row.note,
        "path": row.path,
        "line": row.line,
        "line_type": row.line_type,
        "author": user_basic(author, view) if author else None,
        "created_at": iso(row.created_at),
    }
