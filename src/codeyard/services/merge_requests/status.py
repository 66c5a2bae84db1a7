"""A request's head ref and merge status, computed with no transaction open.

The change is recorded first with merge_status `unchecked` and a CHECK_KIND job due after
CHECK_SECONDS; git moves the head ref and runs the trial merge with no transaction open; a second
short transaction records the status while the request still waits for it (a push's job may have
recorded a newer one meanwhile). A process that dies between leaves the job to do it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import update as update_rows
from sqlalchemy.orm import Session

from ...db.models import MergeRequest, Project
from ...db.models.merge_requests import CAN_BE_MERGED, CANNOT_BE_MERGED, UNCHECKED
from ...git import merge_refs
from ...jobs import queue
from ..repository import path_of, reading
from .trail import hook, source_of

log = logging.getLogger("codeyard.merge_requests")

CHECK_KIND = "merge_request.check_status"
CHECK_SECONDS = 60.0


@dataclass(frozen=True)
class StatusCheck:
    """What the head ref and the trial merge need, as plain values; HOOKS are fired once recorded."""

    mr_id: int
    iid: int
    target: Path
    source: Path | None  # set when the head ref is to follow the source branch
    source_branch: str
    target_branch: str
    hooks: tuple[str, ...] = ()  # hook actions, in order
    job_id: int | None = None  # the job to remove once recorded


def _status_check(session: Session, rt, mr: MergeRequest, move_head: bool, hooks: tuple[str, ...] = (),
                  job_id: int | None = None) -> StatusCheck:  # fmt: skip
    source = source_of(session, mr) if move_head else None
    target = session.get(Project, mr.target_project_id)
    return StatusCheck(mr.id, mr.iid, path_of(rt, target), path_of(rt, source) if source else None,
                       mr.source_branch, mr.target_branch, hooks, job_id)  # fmt: skip


def plan_check(session: Session, rt, mr: MergeRequest, move_head: bool, hooks: tuple[str, ...] = ()) -> StatusCheck:
    """MR waits for its status (`unchecked`), and the job that computes it should this check never finish."""
    mr.merge_status = UNCHECKED
    job = queue.enqueue(session, CHECK_KIND, {"merge_request_id": mr.id}, delay=CHECK_SECONDS)
    session.flush()
    return _status_check(session, rt, mr, move_head, hooks, job.id)


def run_check(check: StatusCheck) -> bool | None:
    """Git's part, with no transaction open: the head ref moved (when asked), then the trial merge;
    None when git failed (logged; the job tries again)."""
    try:
        if check.source is not None:
            merge_refs.keep_head(check.target, check.source, check.source_branch, check.iid)
        return merge_refs.can_merge(check.target, check.target_branch, merge_refs.head_sha(check.target, check.iid))
    except Exception:
        log.exception("merge request %s: head or status not computed", check.mr_id)
        return None


def finish_check(session: Session, rt, actor, check: StatusCheck, mergeable: bool | None) -> MergeRequest:
    """Record MERGEABLE while the request is open, still `unchecked` and into the same branch, then
    fire the check's hooks (its last commit is the head just moved). Its job is not needed any more
    unless git failed."""
    if mergeable is not None:
        if check.job_id is not None:
            queue.cancel(session, check.job_id)
        session.execute(
            update_rows(MergeRequest)
            .where(MergeRequest.id == check.mr_id, MergeRequest.merge_status == UNCHECKED,
                   MergeRequest.target_branch == check.target_branch, MergeRequest.open)
            .values(merge_status=CAN_BE_MERGED if mergeable else CANNOT_BE_MERGED)
            .execution_options(synchronize_session="fetch")
        )  # fmt: skip
    mr = session.get(MergeRequest, check.mr_id, populate_existing=True)  # as recorded, by whichever check
    if mr is not None:
        for action in check.hooks:
            hook(session, rt, session.get(Project, mr.target_project_id), actor, mr, action)
    return mr


async def checked(session: Session, rt, actor, mr: MergeRequest, check: StatusCheck | None, off_loop) -> MergeRequest:
    """MR once CHECK ran: git moves its head ref and runs the trial merge in OFF_LOOP (the edge's
    way to commit its transaction and run work in a thread), and a second short transaction records
    the status."""
    if check is None:
        return mr
    mergeable = await off_loop(run_check, check)
    return finish_check(session, rt, actor, check, mergeable)


def check_later(rt, job) -> None:
    """The job of `plan_check`: a request still `unchecked` (its check never finished) gets its head
    and status now."""
    with rt.db.transaction(write=False) as session:
        mr = session.get(MergeRequest, job.payload["merge_request_id"])
        if mr is None or not mr.open or mr.merge_status != UNCHECKED:
            return
        check = _status_check(session, rt, mr, move_head=True)
    mergeable = run_check(check)
    if mergeable is None:
        raise queue.Retry("git failed")
    with rt.db.transaction() as session:
        finish_check(session, rt, None, check, mergeable)



def check_status(session: Session, rt, mr: MergeRequest) -> str:
    """merge_status from a trial merge (in memory) of the request's head into its target branch."""
    target = session.get(Project, mr.target_project_id)
    path = path_of(rt, target)
    with reading(target.id, "Repository"):
        mergeable = merge_refs.can_merge(path, mr.target_branch, merge_refs.head_sha(path, mr.iid))
    mr.merge_status = CAN_BE_MERGED if mergeable else CANNOT_BE_MERGED
    return mr.merge_status

