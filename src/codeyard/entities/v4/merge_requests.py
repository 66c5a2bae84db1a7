"""v4 merge request shapes, from the rows v3 renders (`services.merge_requests.reads`, with the
columns v4 adds: `read_listing`, `read_wide`) and the request's head from git.

v3's `reopened` is `opened` here; `merge_when_build_succeeds` is `merge_when_pipeline_succeeds`;
`detailed_merge_status` is derived from what the services record (state, title, `merge_status`).
"""

from __future__ import annotations

from typing import Literal, TypedDict

from ..commits import RepoDiff, repo_diff
from ..common import View, iso
from .commits import Commit
from .users import UserV4Basic, user_basic

# The services' words (db.models.merge_requests), which entities do not import.
OPENED, REOPENED, CAN_BE_MERGED, CANNOT_BE_MERGED = "opened", "reopened", "can_be_merged", "cannot_be_merged"
OPEN_STATES = (OPENED, REOPENED)

State = Literal["opened", "closed", "merged", "locked"]


class ReferencesV4(TypedDict):
    short: str
    relative: str
    full: str


class TimeStatsV4(TypedDict):
    time_estimate: int
    total_time_spent: int
    human_time_estimate: str | None
    human_total_time_spent: str | None


class TaskCompletionV4(TypedDict):
    count: int
    completed_count: int


class MergeRequestV4Simple(TypedDict):
    """`view=simple`: what names a request, nothing more."""

    id: int
    iid: int
    project_id: int
    title: str
    description: str | None
    state: State
    created_at: str | None
    updated_at: str | None
    web_url: str


class MergeRequestV4(MergeRequestV4Simple):
    merged_by: UserV4Basic | None
    merge_user: UserV4Basic | None
    merged_at: str | None
    closed_by: UserV4Basic | None
    closed_at: str | None
    target_branch: str
    source_branch: str
    user_notes_count: int
    upvotes: int
    downvotes: int
    author: UserV4Basic | None
    assignee: UserV4Basic | None
    assignees: list[UserV4Basic]
    reviewers: list[UserV4Basic]
    source_project_id: int | None
    target_project_id: int
    labels: list[str]
    draft: bool
    work_in_progress: bool
    milestone: None
    merge_when_pipeline_succeeds: bool
    merge_status: str
    detailed_merge_status: str
    sha: str | None
    merge_commit_sha: str | None
    squash_commit_sha: None
    discussion_locked: bool | None
    should_remove_source_branch: bool | None
    force_remove_source_branch: bool
    prepared_at: str | None
    reference: str
    references: ReferencesV4
    time_stats: TimeStatsV4
    squash: bool
    squash_on_merge: bool
    task_completion_status: TaskCompletionV4
    has_conflicts: bool
    blocking_discussions_resolved: bool


class DiffRefsV4(TypedDict):
    base_sha: str | None
    head_sha: str | None
    start_sha: str | None


class CanMergeV4(TypedDict):
    can_merge: bool


class MergeRequestV4Full(MergeRequestV4, total=False):
    """GET of one request: the list's fields and these (`rebase_in_progress` when asked for)."""

    subscribed: bool
    changes_count: str | None
    latest_build_started_at: None
    latest_build_finished_at: None
    first_deployed_to_production_at: None
    pipeline: None
    head_pipeline: None
    diff_refs: DiffRefsV4
    merge_error: str | None
    user: CanMergeV4
    first_contribution: bool
    rebase_in_progress: bool


class DiffV4(RepoDiff):
    """v3's diff of a file (with GitLab 8's `too_large` and `collapsed`) and v4's `generated_file`."""

    generated_file: bool


class MergeRequestV4Changes(MergeRequestV4Full):
    changes: list[DiffV4]
    overflow: bool


def diff(found) -> DiffV4:
    """v4's diff of one file (FOUND: git.diffs.FileDiff): v3's and `generated_file`."""
    shaped: RepoDiff = repo_diff(found)
    return {**shaped, "generated_file": False}


class MergeRequestVersionV4(TypedDict):
    """A version of a request's diff: codeyard keeps one, the current (its id is the request's)."""

    id: int
    head_commit_sha: str | None
    base_commit_sha: str | None
    start_commit_sha: str | None
    created_at: str | None
    merge_request_id: int
    state: Literal["collected", "empty"]
    real_size: str
    patch_id_sha: str | None


class MergeRequestVersionV4Detail(MergeRequestVersionV4):
    commits: list[Commit]
    diffs: list[DiffV4]


def version(row, refs: tuple[str | None, str | None, str | None], files: int) -> MergeRequestVersionV4:
    """The current version of request ROW (`reads.read_wide`): REFS its (base, head, start), FILES
    how many files it changes; created when the request last changed."""
    base, head, start = refs
    return {
        "id": row.id, "head_commit_sha": head, "base_commit_sha": base, "start_commit_sha": start,
        "created_at": iso(row.updated_at), "merge_request_id": row.id, "state": "collected" if files else "empty",
        "real_size": str(files), "patch_id_sha": None,
    }  # fmt: skip


NO_TIME_SPENT: TimeStatsV4 = {"time_estimate": 0, "total_time_spent": 0, "human_time_estimate": None,
                            "human_total_time_spent": None}  # fmt: skip


def state(stored: str) -> State:
    return OPENED if stored == REOPENED else stored  # type: ignore[return-value]


def detailed_status(row, draft: bool, sha: str | None) -> str:
    """GitLab's `detailed_merge_status` of what the services know: open or not, draft, the trial
    merge's answer (or none yet), the source head there or gone."""
    if row.state not in OPEN_STATES:
        return "not_open"
    if draft:
        return "draft_status"
    if row.merge_status == CAN_BE_MERGED:
        return "mergeable" if sha else "broken_status"
    if row.merge_status == CANNOT_BE_MERGED:
        return "conflict" if sha else "broken_status"
    return "unchecked"


def web_url(view: View, row) -> str:
    return f"{view.base_url}/{row.target_namespace_path}/{row.target_path}/merge_requests/{row.iid}"


def merge_request(row, view: View, people: tuple, sha: str | None, draft: bool) -> MergeRequestV4:
    """ROW is a row of `reads.read_listing` / `reads.read_wide`; PEOPLE its (author, assignee,
    merge user, merged by, closed by), each None or their columns; SHA the request's source head (its head ref, or the
    head it kept once closed); DRAFT whether its title marks a draft."""
    author, assignee, merge_user, merged_by, closed_by = people
    params = row.merge_params or {}
    full = f"{row.target_namespace_path}/{row.target_path}!{row.iid}"
    assignee_entity = user_basic(assignee, view) if assignee is not None else None
    return {
        **simple(row, view),
        "merged_by": user_basic(merged_by, view) if merged_by is not None else None,
        "merge_user": user_basic(merge_user, view) if merge_user is not None else None,
        "merged_at": iso(row.merged_at) if row.state == "merged" else None,
        "closed_by": user_basic(closed_by, view) if closed_by is not None else None,
        "closed_at": iso(row.closed_at) if row.state == "closed" else None,
        "target_branch": row.target_branch,
        "source_branch": row.source_branch,
        "user_notes_count": row.user_notes_count,
        "upvotes": row.upvotes,
        "downvotes": row.downvotes,
        "author": user_basic(author, view) if author is not None else None,
        "assignee": assignee_entity,
        "assignees": [assignee_entity] if assignee_entity is not None else [],
        "reviewers": [],
        "source_project_id": row.source_project_id,
        "target_project_id": row.target_project_id,
        "labels": list(row.labels or []),
        "draft": draft,
        "work_in_progress": draft,
        "milestone": None,
        "merge_when_pipeline_succeeds": bool(row.merge_when_build_succeeds),
        "merge_status": row.merge_status,
        "detailed_merge_status": detailed_status(row, draft, sha),
        "sha": sha,
        "merge_commit_sha": row.merge_commit_sha,
        "squash_commit_sha": None,
        "discussion_locked": None,
        "should_remove_source_branch": params.get("should_remove_source_branch"),
        "force_remove_source_branch": bool(params.get("force_remove_source_branch")),
        "prepared_at": iso(row.created_at),
        "reference": f"!{row.iid}",
        "references": {"short": f"!{row.iid}", "relative": f"!{row.iid}", "full": full},
        "time_stats": NO_TIME_SPENT,
        "squash": False,
        "squash_on_merge": False,
        "task_completion_status": {"count": 0, "completed_count": 0},
        "has_conflicts": row.merge_status == CANNOT_BE_MERGED,
        "blocking_discussions_resolved": row.unresolved_notes == 0,
    }


def simple(row, view: View) -> MergeRequestV4Simple:
    return {
        "id": row.id,
        "iid": row.iid,
        "project_id": row.target_project_id,
        "title": row.title,
        "description": row.description,
        "state": state(row.state),
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "web_url": web_url(view, row),
    }


def merge_request_full(row, view: View, people: tuple, sha: str | None, draft: bool, *, can_merge: bool,
                       diff_refs: DiffRefsV4, changes_count: int | None) -> MergeRequestV4Full:  # fmt: skip
    """One request: `merge_request` and what GET of one adds."""
    params = row.merge_params or {}
    return {
        **merge_request(row, view, people, sha, draft),
        "subscribed": False,
        "changes_count": None if changes_count is None else str(changes_count),
        "latest_build_started_at": None,
        "latest_build_finished_at": None,
        "first_deployed_to_production_at": None,
        "pipeline": None,
        "head_pipeline": None,
        "diff_refs": diff_refs,
        "merge_error": params.get("merge_error"),
        "user": {"can_merge": can_merge},
        "first_contribution": False,
    }
