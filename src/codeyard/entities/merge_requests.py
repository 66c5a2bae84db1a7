"""Merge request shapes (spec "Merge request"; reference 4.8). `iid` is absent from the create and
update responses (reference DECISIONS row 9); `milestone` is null (no milestones yet)."""

from __future__ import annotations

from typing import TypedDict

from .commits import RepoDiff
from .common import View, iso
from .users import UserContact, user_contact


class MergeRequestBase(TypedDict):
    id: int
    project_id: int
    title: str
    description: str | None
    state: str
    created_at: str | None
    updated_at: str | None
    target_branch: str
    source_branch: str
    upvotes: int
    downvotes: int
    author: UserContact | None
    assignee: UserContact | None
    source_project_id: int | None
    target_project_id: int
    labels: list[str]
    work_in_progress: bool
    milestone: None
    merge_when_build_succeeds: bool
    merge_status: str


class MergeRequest(MergeRequestBase, total=False):
    iid: int


class MergeRequestChanges(MergeRequest):
    """Each change says `too_large` / `collapsed` when the diff limits cut it."""

    changes: list[RepoDiff]


def listed_merge_request(row, view: View, author, assignee, work_in_progress: bool, with_iid: bool = True) -> MergeRequest:
    """ROW is a row of `services.merge_requests.reads.read_page`: the request's columns, its timestamps
    the API's text, and its vote counts; AUTHOR and ASSIGNEE None or their columns."""
    return _merge_request(row, view, (row.upvotes, row.downvotes), author, assignee, work_in_progress, with_iid)


def _merge_request(mr, view: View, votes: tuple[int, int], author, assignee, work_in_progress: bool, with_iid: bool):
    data = {"id": mr.id}
    if with_iid:
        data["iid"] = mr.iid
    data.update(
        project_id=mr.target_project_id,
        title=mr.title,
        description=mr.description,
        state=mr.state,
        created_at=iso(mr.created_at),
        updated_at=iso(mr.updated_at),
        target_branch=mr.target_branch,
        source_branch=mr.source_branch,
        upvotes=votes[0],
        downvotes=votes[1],
        author=user_contact(author, view) if author is not None else None,
        assignee=user_contact(assignee, view) if assignee is not None else None,
        source_project_id=mr.source_project_id,
        target_project_id=mr.target_project_id,
        labels=list(mr.labels or []),
        work_in_progress=work_in_progress,
        milestone=None,
        merge_when_build_succeeds=bool(mr.merge_when_build_succeeds),
        merge_status=mr.merge_status,
    )
    return data


class Comment(TypedDict):
    note: str
    author: UserContact | None


def comment(note, view: View, author) -> Comment:
    """GitLab 8's MRNote: the text and its author (None or the author, as `entities.notes.note`), nothing else."""
    return {"note": note.note, "author": user_contact(author, view) if author is not None else None}
