"""Merge request shapes (spec "Merge request"; reference 4.8). `iid` is absent from the create and
update responses (reference DECISIONS row 9); `milestone` is null (no milestones yet)."""

from __future__ import annotations

from typing import TypedDict

from .commits import RepoDiff
from .common import View, iso
from .users import UserContact, contact, user_contact


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


def merge_request(mr, view: View, votes: tuple[int, int], with_iid: bool = True) -> MergeRequest:
    """MR is a MergeRequest model, its author and assignee loaded."""
    author = user_contact(mr.author, view) if mr.author else None
    assignee = user_contact(mr.assignee, view) if mr.assignee else None
    times = (iso(mr.created_at), iso(mr.updated_at))
    return _merge_request(mr, times, votes, author, assignee, mr.work_in_progress, with_iid)


def listed_merge_request(row, view: View, work_in_progress: bool) -> MergeRequest:
    """ROW is a row of the list's read path (`services.merge_requests.read_page`): the request's
    columns with its timestamps as the API's text, its author's and assignee's (`author_*`,
    `assignee_*`) and its vote counts."""
    author = assignee = None
    if row.author_id is not None:
        author = contact(row.author_id, row.author_username, row.author_email, row.author_name, row.author_state,
                         row.author_created_at, view)  # fmt: skip
    if row.assignee_id is not None:
        assignee = contact(row.assignee_id, row.assignee_username, row.assignee_email, row.assignee_name,
                           row.assignee_state, row.assignee_created_at, view)  # fmt: skip
    times = (row.created_at, row.updated_at)
    return _merge_request(row, times, (row.upvotes, row.downvotes), author, assignee, work_in_progress, True)


def _merge_request(mr, times: tuple, votes: tuple[int, int], author, assignee, work_in_progress: bool, with_iid: bool):
    data = {"id": mr.id}
    if with_iid:
        data["iid"] = mr.iid
    data.update(
        project_id=mr.target_project_id,
        title=mr.title,
        description=mr.description,
        state=mr.state,
        created_at=times[0],
        updated_at=times[1],
        target_branch=mr.target_branch,
        source_branch=mr.source_branch,
        upvotes=votes[0],
        downvotes=votes[1],
        author=author,
        assignee=assignee,
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


def comment(note, view: View) -> Comment:
    """GitLab 8's MRNote: the text and its author, nothing else."""
    return {"note": note.note, "author": user_contact(note.author, view) if note.author else None}
