"""What other changes do to open requests: a push moves their heads (and aborts the automatic
merges it invalidates), a branch's succeeded pipeline queues their automatic merges (the job is
`accept.merge_when_build_succeeded`), a fork going away closes the requests it made."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from ...db.models import MergeRequest, Project, User, utcnow
from ...db.models.merge_requests import CAN_BE_MERGED, CANNOT_BE_MERGED, CLOSED, kept_merge_params
from ...git import merge_refs
from ...jobs import queue
from ..repository import path_of
from .comparison import keep_comparison
from .trail import hook, source_of, system_note

log = logging.getLogger("codeyard.merge_requests")

AFTER_PUSH_KIND = "merge_request.after_push"


def _moved_by(project_id: int, branches) -> Any:
    """Open requests from a pushed branch of PROJECT_ID or into one."""
    return select(MergeRequest).where(
        MergeRequest.open,
        or_(
            and_(MergeRequest.source_project_id == project_id, MergeRequest.source_branch.in_(branches)),
            and_(MergeRequest.target_project_id == project_id, MergeRequest.target_branch.in_(branches)),
        ),
    )


def after_push(session: Session, rt, project: Project, user, heads: dict[str, str]) -> None:
    """A post-push step, HEADS the pushed branches and their new tips (zeros when deleted): the
    automatic merges the push invalidates are aborted in the push's transaction, and when open
    requests come from or go into a pushed branch, a job (in the same transaction) moves their heads
    and computes their merge status again; git does not work inside the push's transaction."""
    branches = set(heads)
    if not branches or session.scalar(_moved_by(project.id, branches).with_only_columns(MergeRequest.id).limit(1)) is None:
        return
    abort_automatic_merges(session, project, user, heads)
    payload = {"project_id": project.id, "user_id": getattr(user, "id", None), "branches": sorted(branches)}
    queue.enqueue(session, AFTER_PUSH_KIND, payload)


ABORTED = "aborted the automatic merge because the source branch was updated"


def abort_automatic_merges(session: Session, project: Project, user, heads: dict[str, str]) -> None:
    """The push (by USER, of HEADS in PROJECT) leaves an automatic merge of a request from a pushed
    branch only when it keeps what was approved: the pinned sha is still the head, or, with no sha
    pinned, the user who set the automatic merge pushed. Any other push aborts it (a system note says
    why): otherwise a commit nobody approved would merge once its own pipeline passed."""
    waiting = session.scalars(
        select(MergeRequest).where(
            MergeRequest.source_project_id == project.id, MergeRequest.source_branch.in_(heads),
            MergeRequest.merge_when_build_succeeds.is_(True), MergeRequest.open,
        )
    )  # fmt: skip
    pusher = getattr(user, "id", None)
    for mr in waiting:
        pinned = (mr.merge_params or {}).get("sha")
        if heads[mr.source_branch] == pinned or (pinned is None and pusher is not None and pusher == mr.merge_user_id):
            continue
        mr.merge_when_build_succeeds, mr.merge_user_id, mr.merge_params = False, None, kept_merge_params(mr) or None
        system_note(session, mr, pusher, ABORTED)
    session.flush()



@dataclass(frozen=True)
class _Moved:
    mr_id: int
    iid: int
    target: Path
    source: Path | None  # set when the head follows a pushed source branch
    source_branch: str
    target_branch: str


def refresh_after_push(rt, job) -> None:
    """The job of `after_push`: heads fetched and trial merges run with no transaction open, then one
    short transaction records each status and fires the `update` hooks of moved heads."""
    payload = job.payload
    with rt.db.transaction(write=False) as session:
        moved = []
        for mr in session.scalars(_moved_by(payload["project_id"], payload["branches"])):
            from_source = mr.source_project_id == payload["project_id"] and mr.source_branch in payload["branches"]
            source = source_of(session, mr) if from_source else None
            target = session.get(Project, mr.target_project_id)
            moved.append(_Moved(mr.id, mr.iid, path_of(rt, target), path_of(rt, source) if source else None,
                                mr.source_branch, mr.target_branch))  # fmt: skip
    statuses = {}
    for item in moved:
        try:
            if item.source is not None:
                merge_refs.keep_head(item.target, item.source, item.source_branch, item.iid)
            statuses[item] = merge_refs.can_merge(item.target, item.target_branch, merge_refs.head_sha(item.target, item.iid))
        except Exception:  # one request's broken repository must not keep the others unchanged
            log.exception("merge request %s: head or status not updated after a push", item.mr_id)
    with rt.db.transaction() as session:
        user = session.get(User, payload.get("user_id") or 0)
        for item, mergeable in statuses.items():
            mr = session.get(MergeRequest, item.mr_id)
            if mr is None or not mr.open or mr.target_branch != item.target_branch:
                continue  # closed, merged or retargeted meanwhile: its own change computed its status
            mr.merge_status = CAN_BE_MERGED if mergeable else CANNOT_BE_MERGED
            if item.source is not None and user is not None:
                hook(session, rt, session.get(Project, mr.target_project_id), user, mr, "update")


# Job kinds are stored with queued jobs: they keep their names (so does AFTER_PUSH_KIND).
MWBS_KIND = "merge_requests.merge_when_build_succeeds"


def pipeline_succeeded(session: Session, pipeline) -> int:
    """A branch's pipeline succeeded: a merge job for each open request from that branch waiting
    for its builds (the job checks again that the pipeline is its head's); how many."""
    if pipeline.tag:
        return 0
    waiting = session.scalars(
        select(MergeRequest.id).where(
            MergeRequest.source_project_id == pipeline.project_id,
            MergeRequest.source_branch == pipeline.ref,
            MergeRequest.merge_when_build_succeeds.is_(True),
            MergeRequest.open,
        )
    ).all()
    for mr_id in waiting:
        queue.enqueue(session, MWBS_KIND, {"merge_request_id": mr_id, "sha": pipeline.sha})
    return len(waiting)


def close_from(session: Session, rt, project: Project) -> None:
    """A fork going away closes the open requests it made to its upstream, each keeping what it showed."""
    for mr in session.scalars(
        select(MergeRequest)
        .where(MergeRequest.source_project_id == project.id, MergeRequest.target_project_id != project.id,
               MergeRequest.open)
    ).all():  # fmt: skip
        mr.state, mr.updated_at = CLOSED, utcnow()
        keep_comparison(rt, mr)
    session.flush()

