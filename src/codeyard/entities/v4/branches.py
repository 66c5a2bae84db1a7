"""v4 branch shape: the name, where it points (the shared v4 commit), its protection and what the
caller may do with it."""

from __future__ import annotations

from typing import TypedDict
from urllib.parse import quote

from .commits import Commit, commit


class BranchV4(TypedDict):
    name: str
    merged: bool
    protected: bool
    default: bool
    developers_can_push: bool
    developers_can_merge: bool
    can_push: bool
    web_url: str
    commit: Commit


def branch(found, project_web_url: str) -> BranchV4:
    """FOUND is services.branches.Listed."""
    protection = found.protection
    return {
        "name": found.name,
        "merged": found.merged,
        "protected": protection is not None,
        "default": found.default,
        "developers_can_push": bool(protection is not None and protection.developers_can_push),
        "developers_can_merge": bool(protection is not None and protection.developers_can_merge),
        "can_push": found.can_push,
        "web_url": f"{project_web_url}/-/tree/{quote(found.name)}",
        "commit": commit(found.commit, project_web_url),
    }


def project_url(view, row) -> str:
    """The web page of the project of ROW (a `project_reads` row or a Project with its namespace's
    path as `ns_path`)."""
    return f"{view.base_url}/{row.ns_path}/{row.path}"
