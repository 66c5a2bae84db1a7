"""Accepting a merge request, one way for the API, the web pages and the merge-when-build-succeeds job.

The phases are those of services.merge_requests; this module runs them with the commits between:
the checks and the trial merge with no write transaction open, the request locked in a short
transaction, git writing the merge with none open, and a last transaction recording it (or
unlocking the request when git could not merge). The answer is an `Outcome`; a refusal carries its
reason, which each caller turns into its own answer.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from ..db.models import MergeRequest, Project, User
from ..db.models.ci import SUCCESS
from . import access as access_service
from . import merge_requests
from .ci import pipelines
from .merge_requests import Refused
from .outcomes import Refusal

log = logging.getLogger("codeyard.merge_requests")

MERGED, WAITING, REFUSED = "merged", "waiting", "refused"


@dataclass(frozen=True)
class Outcome:
    """How an accept ended: MERGED, WAITING (marked to merge when its build succeeds) or REFUSED,
    with the refusal."""

    result: str
    refusal: Refusal | None = None


def _refused(refusal: Refusal) -> Outcome:
    return Outcome(REFUSED, refusal)


# A caller's own condition, asked in each transaction before the accept's checks: None, or why not.
Ready = Callable[[Session, MergeRequest], Refusal | None]


def accept(rt, mr_id: int, actor_id: int | None, args: dict, *, access=None, ready: Ready | None = None) -> Outcome:
    """Accept the request MR_ID as ACTOR_ID with ARGS (the API's parameters of an accept). ACCESS is
    the actor's access to the request's project when the caller knows it (else it is read). Run with
    no transaction open: it opens and commits its own."""
    with rt.db.transaction(write=False) as session:
        found = _loaded(session, mr_id, actor_id, access, ready)
        if isinstance(found, Refusal):
            return _refused(found)
        project, _actor, access_now, mr = found
        if refusal := merge_requests.may_accept(session, project, access_now, mr):
            return _refused(refusal)
    trial = merge_requests.trial_merge(rt, project, mr)
    with rt.db.transaction() as session:
        found = _loaded(session, mr_id, actor_id, access, ready, lock=True)
        if isinstance(found, Refusal):
            return _refused(found)
        project, actor, access_now, mr = found
        plan = merge_requests.begin_merge(session, rt, project, access_now, actor, mr, args, trial)
    if isinstance(plan, Refusal):
        return _refused(plan)
    if plan is None:
        return Outcome(WAITING)
    try:
        moved = merge_requests.write_merge(plan)
    except BaseException as failed:
        with rt.db.transaction() as session:
            merge_requests.abandon_merge(session, plan)
        if isinstance(failed, merge_requests.MERGE_FAILURES):
            return _refused(Refusal(Refused.CANNOT_MERGE))
        raise
    with rt.db.transaction() as session:
        project, actor = session.get(Project, project.id), session.get(User, actor.id)
        merge_requests.finish_merge(session, rt, project, actor, plan, moved)
    return Outcome(MERGED)


def _loaded(session: Session, mr_id: int, actor_id: int | None, access, ready: Ready | None, lock: bool = False):
    """(project, actor, access, request) in SESSION, or the refusal when the request is gone or not
    ready. With LOCK the request's row is locked first (PostgreSQL; SQLite's write transactions are
    one at a time already), so of two accepts at once the second sees the first one's lock."""
    mr = session.get(MergeRequest, mr_id, with_for_update=lock)
    if mr is None:
        return Refusal(Refused.GONE)
    if ready is not None and (refusal := ready(session, mr)):
        return refusal
    project = session.get(Project, mr.target_project_id)
    actor = session.get(User, actor_id) if actor_id is not None else None
    return project, actor, access if access is not None else access_service.access(session, actor, project), mr


# --- merge when build succeeds -------------------------------------------------------------------


class Waits(enum.Enum):
    """Why the job of a succeeded pipeline does not merge its request."""

    NOT_WAITING = "the request no longer waits for its builds"
    OTHER_SHA = "the automatic merge was set for another commit"  # the detail: that commit
    NOT_SUCCEEDED = "the commit's builds did not succeed"


def merge_when_build_succeeded(rt, job) -> None:
    """The job: merge through the accept path (same checks, as the user who asked) when the request
    still waits, its head is the pipeline's sha, that sha is the one pinned when the automatic merge
    was set (if one was) and that commit's builds succeeded; otherwise leave it as it is."""
    data = job.payload
    with rt.db.transaction(write=False) as session:
        mr = session.get(MergeRequest, data["merge_request_id"])
        if mr is None or _not_waiting(mr):
            return
        actor_id, params = mr.merge_user_id, {**(mr.merge_params or {}), "sha": data["sha"]}

    def ready(session: Session, mr: MergeRequest) -> Refusal | None:
        if _not_waiting(mr):
            return Refusal(Waits.NOT_WAITING)
        pinned = (mr.merge_params or {}).get("sha")
        if pinned is not None and pinned != data["sha"]:
            return Refusal(Waits.OTHER_SHA, pinned)
        if pipelines.commit_status(session, mr.source_project_id, data["sha"]) != SUCCESS:
            return Refusal(Waits.NOT_SUCCEEDED)
        return None

    outcome = accept(rt, data["merge_request_id"], actor_id, params, ready=ready)
    _log(data, outcome.refusal)


def _not_waiting(mr: MergeRequest) -> bool:
    return not mr.merge_when_build_succeeds or not mr.open or mr.merge_user_id is None


def _log(data: dict, refusal: Refusal | None) -> None:
    """The job's words for a refusal: a request that no longer waits, or whose builds did not
    succeed, is left silently (as GitLab does)."""
    if refusal is None or refusal.reason in (Waits.NOT_WAITING, Waits.NOT_SUCCEEDED, Refused.GONE):
        return
    mr_id = data["merge_request_id"]
    if refusal.reason is Waits.OTHER_SHA:
        log.info("merge request %s: the automatic merge of %s does not merge %s", mr_id, refusal.detail, data["sha"])
    else:
        log.info("merge request %s was not merged after its build succeeded: %s", mr_id, refusal)
