"""v4 commit shapes: one for every place a commit appears (lists, branches, tags, merge requests)."""

from __future__ import annotations

from typing import TypedDict

from ..builds import CommitStatusFacts
from ..builds import commit_status as v3_commit_status
from ..commits import title
from ..common import View, iso
from ..notes import commit_note as v3_commit_note
from .users import UserV4Basic, user_basic


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


class CommitStats(TypedDict):
    additions: int
    deletions: int
    total: int


class CommitDetail(Commit):
    """One commit as `GET /repository/commits/:sha` and `POST /repository/commits` answer it."""

    stats: CommitStats
    status: str | None  # the CI status of its newest pipeline, null without one
    last_pipeline: dict | None  # not served: always null
    project_id: int


def commit_detail(info, project_web_url: str, project_id: int, stats, status: str | None) -> CommitDetail:
    """STATS is git.history.Stats (or None when not asked for: zeros)."""
    counted: CommitStats = {"additions": 0, "deletions": 0, "total": 0}
    if stats is not None:
        counted = {"additions": stats.additions, "deletions": stats.deletions, "total": stats.total}
    return {**commit(info, project_web_url), "stats": counted, "status": status, "last_pipeline": None,
            "project_id": project_id}  # fmt: skip


class CommitWithStats(Commit, total=False):
    """A commit of a list; `stats` when asked `with_stats`."""

    stats: CommitStats


class CommitRef(TypedDict):
    type: str  # "branch" or "tag"
    name: str


class CommitStatus(CommitStatusFacts):
    """v4's commit status (Entities::CommitStatus): v3's facts, v4's author, the coverage and pipeline."""

    coverage: float | None
    pipeline_id: int | None
    author: UserV4Basic | None


def commit_status(found, view: View, author) -> CommitStatus:
    """FOUND a Build (model or read path row), as v3's `entities.builds.commit_status` reads it."""
    shown = v3_commit_status(found, view, None)
    return {**shown, "coverage": found.coverage, "pipeline_id": found.pipeline_id,
            "author": user_basic(author, view) if author is not None else None}  # fmt: skip


class CommitNote(TypedDict):
    note: str
    path: str | None
    line: int | None
    line_type: str | None
    author: UserV4Basic | None
    created_at: str | None


def commit_note(row, view: View, author) -> CommitNote:
    shown = v3_commit_note(row, view, None)
    return {**shown, "author": user_basic(author, view) if author else None}
