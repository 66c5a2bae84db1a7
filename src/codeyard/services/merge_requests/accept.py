"""Accepting a merge request, one way for the API, the web pages and the merge-when-build-succeeds job.

The phases: the checks (`may_accept`, `begin_merge`, in GitLab's order), the trial merge run with
no transaction open, the request locked (`lock`, with the job that settles a lock whose accept
never finished), git writing the merge commit (`write_merge`) with no transaction open, and the
merge recorded (`finish_merge`) or the request unlocked (`abandon_merge`). `accept` runs them with
the commits between; its answer is an `Outcome`, and a refusal carries its reason (`Refused`),
which each caller turns into its own answer: the API and the pages a status and message
(http/refusals.py), the job a log line. The job that merges once a build succeeds is queued by
`reactions.pipeline_succeeded`.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from sqlalchemy.orm import Session

from ...db.models import MergeRequest, Project, User, utcnow
from ...db.models.ci import SUCCESS
from ...db.models.merge_requests import (
    CAN_BE_MERGED,
    CANNOT_BE_MERGED,
    FORCE_REMOVE,
    LOCKED,
    MERGED,
    OPENED,
    is_draft,
    kept_merge_params,
)
from ...errors import CodeyardError, Forbidden
from ...git import merge_refs
from ...git.file_commits import clean_identity
from ...git.refs import HEADS
from ...jobs import queue
from ...policies import branches as branch_policy
from ...policies import projects as policy
from .. import access as access_service
from .. import branches, events, protected_branches, pushes
from ..ci import pipelines
from ..outcomes import Refusal
from ..ref_updates import RefUpdate
from ..repository import path_of, reading
from .comparison import keep_comparison
from .status import check_status
from .trail import record, source_of, system_note

log = logging.getLogger("codeyard.merge_requests")

# --- the phases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergePlan:
    """What the merge needs, as plain values: git works on it after the first transaction ended."""

    mr_id: int
    previous_state: str
    path: Path
    target_branch: str
    head: str
    message: str
    name: str
    email: str
    remove_source: bool


def default_message(mr: MergeRequest) -> str:
    return (f"Merge branch '{mr.source_branch}' into '{mr.target_branch}'\n\n{mr.title}\n\n"
            f"{mr.description or ''}\n\nSee merge request !{mr.iid}")  # fmt: skip


def may_merge(session: Session, project: Project, access, mr: MergeRequest, admin: bool = False) -> bool:
    """May the caller merge into the target branch (protected: its merge access level admits the
    caller; ADMIN: an instance admin)?"""
    return may_merge_under(protected_branches.protections(session, project), access, mr.target_branch, admin)


def may_merge_under(protections, access, branch: str, admin: bool = False) -> bool:
    """`may_merge` with the project's PROTECTIONS read already (on the read path: no session)."""
    return branch_policy.may_merge_to(access, protections.get(branch), admin)


@dataclass(frozen=True)
class Trial:
    """A trial merge run before the accept's transaction: the head and target branch it merged."""

    head: str | None
    target_branch: str
    mergeable: bool


def trial_merge(rt, project: Project, mr: MergeRequest) -> Trial:
    """Git's part of an accept's checks, run with no transaction open."""
    path = path_of(rt, project)
    with reading(project.id, "Repository"):
        head = merge_refs.head_sha(path, mr.iid)
        return Trial(head, mr.target_branch, merge_refs.can_merge(path, mr.target_branch, head))


class Refused(enum.Enum):
    """Why an accept, or the cancel of an automatic merge, was refused; each edge says it its own way
    (`http/refusals.py` for the API and the pages, a log line for the jobs)."""

    GONE = "the request is gone"
    MAY_NOT_MERGE = "the caller may not push to the target branch"
    NOT_OPEN = "the request is not open, or is work in progress"
    SHA_MOVED = "the source head is not the sha given"  # the refusal's detail: the head
    CANNOT_MERGE = "the branch cannot be merged"
    NOT_AUTOMATIC = "the request does not merge when its build succeeds"


def may_accept(session: Session, project: Project, access, mr: MergeRequest, admin: bool = False) -> Refusal | None:
    """The first checks of an accept, in GitLab's order: may the caller merge, then is the request open."""
    if not may_merge(session, project, access, mr, admin):
        return Refusal(Refused.MAY_NOT_MERGE)
    if not mr.open or mr.work_in_progress:
        return Refusal(Refused.NOT_OPEN)
    return None


def begin_merge(session: Session, rt, project: Project, access, actor, mr: MergeRequest, args: dict,
                trial: Trial | None = None) -> MergePlan | Refusal | None:  # fmt: skip
    """The checks of an accept, in GitLab's order (may merge, open, sha, mergeable), then the request
    is locked; the first check that fails is the refusal returned. TRIAL, run before this
    transaction, stands for the trial merge while it merged this head into this branch (else one
    runs here). None when the request waits for its builds instead: merge when build succeeds was
    asked and the source head has unfinished builds (without any, it merges at once)."""
    if refusal := may_accept(session, project, access, mr, bool(actor and actor.is_admin)):
        return refusal
    path = path_of(rt, project)
    with reading(project.id, "Repository"):
        head = merge_refs.head_sha(path, mr.iid)
    if args.get("sha") and args["sha"] != head:
        return Refusal(Refused.SHA_MOVED, head or "")
    if head is None or _merge_status(session, rt, mr, head, trial) != CAN_BE_MERGED:
        return Refusal(Refused.CANNOT_MERGE)
    if args.get("merged_when_build_succeeds") and pipelines.builds_unfinished(session, mr.source_project_id, head):
        _wait_for_builds(session, actor, mr, args)
        return None
    plan = MergePlan(
        mr_id=mr.id, previous_state=mr.state, path=path, target_branch=mr.target_branch, head=head,
        message=args.get("merge_commit_message") or default_message(mr),
        name=_clean(actor.name) or actor.username, email=_clean(actor.email) or f"{actor.username}@localhost",
        remove_source=bool(args.get("should_remove_source_branch") or (mr.merge_params or {}).get(FORCE_REMOVE)),
    )  # fmt: skip
    lock(session, mr, actor)
    return plan


def _merge_status(session: Session, rt, mr: MergeRequest, head: str, trial: Trial | None) -> str:
    if trial is None or (trial.head, trial.target_branch) != (head, mr.target_branch):
        return check_status(session, rt, mr)
    mr.merge_status = CAN_BE_MERGED if trial.mergeable else CANNOT_BE_MERGED
    return mr.merge_status


# A request still `locked` this long after an accept began lost its accept (the process died between
# begin_merge and finish_merge): the job enqueued with the lock settles it then.
LOCK_SECONDS = 600.0
SETTLE_KIND = "merge_request.settle_lock"


def lock(session: Session, mr: MergeRequest, actor) -> None:
    """Lock MR for an accept by ACTOR; the lock's settlement job is written in the same transaction,
    so a lock that commits always has one."""
    stamp = utcnow().isoformat()
    mr.merge_params = {**(mr.merge_params or {}), "locked_from": mr.state, "locked_at": stamp, "locked_by": actor.id}
    mr.state = LOCKED
    session.flush()
    queue.enqueue(session, SETTLE_KIND, {"merge_request_id": mr.id, "locked_at": stamp}, delay=LOCK_SECONDS)


def _unlock(mr: MergeRequest) -> str:
    """Drop MR's lock notes; the state it had before."""
    params = dict(mr.merge_params or {})
    previous = params.pop("locked_from", OPENED)
    for key in ("locked_at", "locked_by"):
        params.pop(key, None)
    mr.merge_params = params or None
    return previous


def _still_locked(mr: MergeRequest | None, stamp: str | None) -> bool:
    return mr is not None and mr.state == LOCKED and (stamp is None or (mr.merge_params or {}).get("locked_at") == stamp)


def settle_lock(rt, job) -> None:
    """The job of a lock: if its accept never finished, the request is recorded merged when the target
    branch already contains the head (with the merge commit, event, hook and post-push steps a
    normal accept records), else it is open again as before."""
    with rt.db.transaction() as session:
        mr = session.get(MergeRequest, job.payload["merge_request_id"])
        if not _still_locked(mr, job.payload.get("locked_at")):
            return
        project = session.get(Project, mr.target_project_id)
        actor = session.get(User, (mr.merge_params or {}).get("locked_by") or 0) or session.get(User, mr.author_id)
        path = path_of(rt, project)
        with reading(project.id, "Repository"):
            head = merge_refs.head_sha(path, mr.iid)
            merge = merge_refs.merged_by(path, mr.target_branch, head) if head else None
        if merge is None:
            mr.state = _unlock(mr)
            check_status(session, rt, mr)
            log.warning("merge request %s: an accept that never finished was undone", mr.id)
            return
        log.warning("merge request %s: an accept that never finished is recorded (%s)", mr.id, merge[1])
        if merge[1] is None:  # merged some other way, long ago: no merge commit to name
            _unlock(mr)
            mr.state = MERGED
            record(session, rt, project, actor, mr, events.MERGED, "merge")
            return
        plan = SimpleNamespace(mr_id=mr.id, target_branch=mr.target_branch, head=head, remove_source=False)
        finish_merge(session, rt, project, actor, plan, merge)


def _clean(text: str) -> str:
    return clean_identity(text or "")


# The target moved twice while merging, or the merge has conflicts after all: nothing written.
MERGE_FAILURES = (merge_refs.MergeConflict, merge_refs.RefMoved)


def write_merge(plan: MergePlan) -> tuple[str, str]:
    """The merge commit and the target moved to it; a target that moved meanwhile is merged again once."""
    try:
        return merge_refs.merge(plan.path, plan.target_branch, plan.head, plan.message, plan.name, plan.email)
    except merge_refs.RefMoved:
        return merge_refs.merge(plan.path, plan.target_branch, plan.head, plan.message, plan.name, plan.email)


def abandon_merge(session: Session, plan: MergePlan) -> None:
    mr = session.get(MergeRequest, plan.mr_id)
    if not _still_locked(mr, None):
        return  # settled meanwhile
    mr.state = _unlock(mr)
    mr.merge_status = CANNOT_BE_MERGED
    session.flush()


def finish_merge(session: Session, rt, project: Project, actor, plan: MergePlan, moved: tuple[str, str]) -> MergeRequest:
    """Record the merge: state merged, `accepted` event, hook, post-push steps of the target branch,
    and the source branch removed when asked (not when protected or the default)."""
    mr = session.get(MergeRequest, plan.mr_id)
    if not _still_locked(mr, None):
        return mr  # settled meanwhile (its accept outlived the lock's bound): recorded once
    old, new = moved
    _unlock(mr)
    mr.state, mr.merge_commit_sha = MERGED, new
    keep_comparison(rt, mr, old, plan.head)
    mr.merge_when_build_succeeds, mr.merge_user_id, mr.merge_params = False, None, None
    session.flush()
    record(session, rt, project, actor, mr, events.MERGED, "merge")
    pushes.post_push(session, rt, project, actor, [RefUpdate(HEADS + plan.target_branch, old, new)])
    if plan.remove_source:
        _remove_source(session, rt, actor, mr)
    return mr


def _remove_source(session: Session, rt, actor, mr: MergeRequest) -> None:
    """Delete the source branch under the branches API's rule in the source project (push access
    there, not protected, not its default branch); otherwise keep it and say why in a system note
    (GitLab 8 kept it silently): the acceptor of a fork's request need not be able to write to it."""
    source = source_of(session, mr)
    if source is None:
        return
    access = access_service.access(session, actor, source)
    if not (access.can(policy.DOWNLOAD_CODE) and access.can(policy.PUSH_CODE)):
        _keep_source(session, actor, mr, Forbidden(branch_policy.NO_PUSH).message)
        return
    try:
        branches.delete(session, rt, source, actor, mr.source_branch)
    except CodeyardError as refused:  # protected, the default branch, or already gone
        _keep_source(session, actor, mr, refused.message)


def _keep_source(session: Session, actor, mr: MergeRequest, why: str) -> None:
    log.info("source branch of merge request %s kept: %s", mr.id, why)
    system_note(session, mr, actor.id, f"did not remove the source branch {mr.source_branch}: {why}")
    session.flush()


def _wait_for_builds(session: Session, actor, mr: MergeRequest, args: dict) -> None:
    """Flag the request: it merges (as ACTOR, with these parameters) once its head's builds pass.
    A `sha` given is kept: then that commit merges, or nothing does."""
    mr.merge_when_build_succeeds, mr.merge_user_id = True, actor.id
    mr.merge_params = {
        **kept_merge_params(mr),
        "merge_commit_message": args.get("merge_commit_message"),
        "should_remove_source_branch": bool(args.get("should_remove_source_branch")),
        "sha": args.get("sha") or None,
    }
    session.flush()


# --- the sequence ---------------------------------------------------------------------------------

ACCEPTED, WAITING, REFUSED = "accepted", "waiting", "refused"


@dataclass(frozen=True)
class Outcome:
    """How an accept ended: ACCEPTED (merged), WAITING (marked to merge when its build succeeds) or REFUSED,
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
        if refusal := may_accept(session, project, access_now, mr, bool(_actor and _actor.is_admin)):
            return _refused(refusal)
    trial = trial_merge(rt, project, mr)
    with rt.db.transaction() as session:
        found = _loaded(session, mr_id, actor_id, access, ready, for_update=True)
        if isinstance(found, Refusal):
            return _refused(found)
        project, actor, access_now, mr = found
        plan = begin_merge(session, rt, project, access_now, actor, mr, args, trial)
    if isinstance(plan, Refusal):
        return _refused(plan)
    if plan is None:
        return Outcome(WAITING)
    try:
        moved = write_merge(plan)
    except BaseException as failed:
        with rt.db.transaction() as session:
            abandon_merge(session, plan)
        if isinstance(failed, MERGE_FAILURES):
            return _refused(Refusal(Refused.CANNOT_MERGE))
        raise
    with rt.db.transaction() as session:
        project, actor = session.get(Project, project.id), session.get(User, actor.id)
        finish_merge(session, rt, project, actor, plan, moved)
    return Outcome(ACCEPTED)


def refuse_drafts(session: Session, mr: MergeRequest) -> Refusal | None:
    """API v4's condition of an accept (`Ready`): a draft (Draft: as well as WIP) is not merged."""
    return Refusal(Refused.NOT_OPEN) if mr.open and is_draft(mr.title) else None


def _loaded(session: Session, mr_id: int, actor_id: int | None, access, ready: Ready | None, for_update: bool = False):
    """(project, actor, access, request) in SESSION, or the refusal when the request is gone or not
    ready. FOR_UPDATE: the request's row is locked first (PostgreSQL; SQLite's write transactions are
    one at a time already), so of two accepts at once the second sees the first one's lock."""
    mr = session.get(MergeRequest, mr_id, with_for_update=for_update)
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


def cancel_merge_when_build_succeeds(session: Session, project: Project, access, actor, mr: MergeRequest) -> Refusal | None:
    """The request merges no longer when its build succeeds; else why not."""
    if not (may_merge(session, project, access, mr) or mr.author_id == actor.id):
        return Refusal(Refused.MAY_NOT_MERGE)
    if not mr.open:
        return Refusal(Refused.NOT_OPEN)
    if not mr.merge_when_build_succeeds:
        return Refusal(Refused.NOT_AUTOMATIC)
    mr.merge_when_build_succeeds, mr.merge_user_id, mr.merge_params = False, None, kept_merge_params(mr) or None
    session.flush()
    return None

