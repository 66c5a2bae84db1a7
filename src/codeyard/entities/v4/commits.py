"""v4 commit shapes: one for every place a commit appears (lists, branches, tags, merge requests)."""

from __future__ import annotations

from typing import TypedDict

from ..commits import title
from ..common import View, iso


class Commit(TypedDict):
    id: str
    short_id: str
    created_at: str | None
    parent_ids: list[str]
    title: str
    message: str
    author_name: str
    author_email: str
    authored_date: str | None
    committer_name: str
    committer_email: str
    committed_date: str | None
    trailers: dict[str, str]
    extended_trailers: dict[str, list[str]]
    web_url: str


def commit(info, project_web_url: str) -> Commit:
    """INFO is a git.repo commit (id, message, author, committer, parent_ids); PROJECT_WEB_URL is
    the project's page, under which the commit's is."""
    return {
        "id": info.id,
        "short_id": info.id[:8],
        "created_at": iso(info.committer.when),
        "parent_ids": list(info.parent_ids),
        "title": title(info.message),
        "message": info.message,
        "author_name": info.author.name,
        "author_email": info.author.email,
        "authored_date": iso(info.author.when),
        "committer_name": info.committer.name,
        "committer_email": info.committer.email,
        "committed_date": iso(info.committer.when),
        "trailers": {},
        "extended_trailers": {},
        "web_url": f"{project_web_url}/commit/{info.id}",
    }


def project_web_url(view: View, path_with_namespace: str) -> str:
    return f"{view.base_url}/{path_with_namespace}"
