"""v4 tag shape: the tag, the commit it names (the shared v4 commit), no release."""

from __future__ import annotations

from typing import TypedDict

from ..common import iso
from .commits import Commit, commit


class TagV4(TypedDict):
    name: str
    message: str | None
    target: str
    commit: Commit
    release: None
    protected: bool
    created_at: str | None


def tag(found, project_web_url: str) -> TagV4:
    """FOUND is git.tags.TagInfo."""
    return {
        "name": found.name,
        "message": found.message,
        "target": found.target,
        "commit": commit(found.commit, project_web_url),
        "release": None,
        "protected": False,
        "created_at": iso(found.created_at) if found.created_at else None,
    }
