"""What a request shows as its commits and changes: compared live while it is open, and what it
showed kept (its merge base and head) once it is merged or closed."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...db.models import MergeRequest
from ...git import diffs, merge_refs, repo
from ..repository import path_by_id, reading

log = logging.getLogger("codeyard.merge_requests")


def comparer(rt, project_id: int, mr, *, commits: bool = True, files: bool = True,
             shape: diffs.Shape = None) -> Callable[[], diffs.Comparison]:  # fmt: skip
    """The work of `comparison` for request MR (a model or a `reads.compared` row) of project PROJECT_ID,
    its git processes started now: what is left is git only, no database, so it may run in a thread
    while the request's session is used (SHAPE too: see `diffs.started_compare`). The work must be
    run: it ends the processes."""
    kept = (mr.diff_base_sha, mr.diff_head_sha) if mr.diff_base_sha and mr.diff_head_sha else None
    with reading(project_id, "Branch"):
        finish = merge_refs.started_comparison(path_by_id(rt, project_id), mr.iid, mr.target_branch, kept,
                                               commits=commits, files=files, shape=shape)  # fmt: skip

    def compare() -> diffs.Comparison:
        with reading(project_id, "Branch"):
            return finish()

    return compare


def comparison(rt, project, mr, *, commits: bool = True, files: bool = True) -> diffs.Comparison:
    """Commits and changes of the request (what COMMITS and FILES ask for), within the diff limits:
    while it is open, its head since it left the target branch; once merged or closed, what it
    showed then (`keep_comparison`). PROJECT and MR are models or rows (`project_reads`,
    `reads.compared`): only the project's id and the request's `compared` columns are read."""
    return comparer(rt, project.id, mr, commits=commits, files=files)()


def keep_comparison(rt, mr: MergeRequest, start: str | None = None, head: str | None = None) -> None:
    """MR stops being open: keep what its comparison shows, from START (default: its target
    branch's tip) to HEAD (default: its head ref), as the merge base and head its head ref keeps
    reachable; nothing kept (it is compared live, as before) when a side or the base is missing,
    or the repository cannot be read (a fork's deletion must not fail on its upstream's disk)."""
    path = path_by_id(rt, mr.target_project_id)
    try:
        start = start or repo.branch_id(path, mr.target_branch)
        kept = merge_refs.kept(path, start, head or merge_refs.head_sha(path, mr.iid))
    except repo.RepositoryUnavailable:
        log.error("merge request %s: its comparison was not kept: repository unreadable", mr.id)
        kept = None
    mr.diff_base_sha, mr.diff_head_sha = kept or (None, None)


def head_of(rt, row) -> str | None:
    """The source head request ROW (`reads` row: iid, target_project_id, diff_head_sha) shows: the
    head it kept once merged or closed, else its head ref; None when there is none (or no repository)."""
    if row.diff_head_sha:
        return row.diff_head_sha
    try:
        return merge_refs.head_sha(path_by_id(rt, row.target_project_id), row.iid)
    except repo.RepositoryUnavailable:
        return None


def diff_refs(rt, row) -> tuple[str | None, str | None, str | None]:
    """(base, head, start) of what request ROW shows: the merge base, the source head and the
    target's tip it is compared with (the kept base for both once merged or closed)."""
    if row.diff_base_sha and row.diff_head_sha:
        return row.diff_base_sha, row.diff_head_sha, row.diff_base_sha
    head = head_of(rt, row)
    path = path_by_id(rt, row.target_project_id)
    try:
        start = repo.branch_id(path, row.target_branch)
        kept = merge_refs.kept(path, start, head)
    except (repo.RepositoryUnavailable, repo.NotInRepository):
        return None, head, None
    return (kept[0] if kept else None), head, start
