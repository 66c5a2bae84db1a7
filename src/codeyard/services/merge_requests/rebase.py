"""Rebasing a request's source branch onto its target branch (API v4's `PUT .../rebase`).

Asked in the request's transaction: the checks (open, the caller may force-push the source branch
under its protection), `rebase_in_progress` noted in the request's merge parameters and the job
queued. The job replays the branch with no transaction open (`git.rebase`), then records the
outcome: the branch moved as a push to it (events, hooks, pipelines, the heads of its requests),
or `merge_error` when a commit did not apply.
"""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session

from ...db.models import MergeRequest, Project, User
from ...errors import Conflict, Forbidden, MethodNotAllowed
from ...git import rebase as git_rebase
from ...git.file_commits import clean_identity
from ...git.merge_refs import MergeConflict, RefMoved
from ...git.refs import HEADS
from ...jobs import queue
from ...policies import branches as branch_policy
from ...policies import projects as policy
from .. import access as access_service
from .. import protected_branches, pushes
from ..ref_updates import RefUpdate
from ..repository import path_of
from .trail import source_of

log = logging.getLogger("codeyard.merge_requests")

KIND = "merge_request.rebase"
IN_PROGRESS, ERROR = "rebase_in_progress", "merge_error"
CONFLICT = "Rebase failed: Rebase locally, resolve all conflicts, then push the branch."
MOVED = "Rebase failed: the source branch changed during the rebase. Try again."


def in_progress(mr) -> bool:
    """Is a rebase of MR (a model or a `reads` row) asked and not yet done?"""
    return bool((mr.merge_params or {}).get(IN_PROGRESS))


def _may_rebase(session: Session, actor, source: Project, branch: str) -> str | None:
    """Why ACTOR may not rewrite BRANCH of SOURCE (a force push under its protection), or None."""
    access = access_service.access(session, actor, source)
    if not access.can(policy.DOWNLOAD_CODE):
        return branch_policy.NO_PUSH
    protection = protected_branches.protections(session, source).get(branch)
    return branch_policy.refusal(access, HEADS + branch, "rebased", "onto", protection, forced=True,
                                 admin=bool(actor.is_admin))  # fmt: skip


def request(session: Session, actor, mr: MergeRequest) -> None:
    """Queue the rebase of MR's source branch by ACTOR: 405 when the request is not open (or its
    fork is gone), 403 when ACTOR may not rewrite the branch, 409 when one is under way."""
    source = source_of(session, mr)
    if not mr.open or source is None:
        raise MethodNotAllowed()
    if (why := _may_rebase(session, actor, source, mr.source_branch)) is not None:
        raise Forbidden(why)
    if in_progress(mr):
        raise Conflict("Rebase already in progress")
    params = {key: value for key, value in (mr.merge_params or {}).items() if key != ERROR}
    mr.merge_params = {**params, IN_PROGRESS: True}
    session.flush()
    queue.enqueue(session, KIND, {"merge_request_id": mr.id, "user_id": actor.id})


def rebase_later(rt, job) -> None:
    """The job: the source branch replayed onto the target's tip, as the user who asked (still
    allowed to), then the outcome recorded."""
    with rt.db.transaction(write=False) as session:
        mr = session.get(MergeRequest, job.payload["merge_request_id"])
        if mr is None or not in_progress(mr):
            return
        source, target = source_of(session, mr), session.get(Project, mr.target_project_id)
        actor = session.get(User, job.payload["user_id"])
        refused = None if source is None or actor is None else _may_rebase(session, actor, source, mr.source_branch)
        if source is None or actor is None or refused is not None or not mr.open:
            plan = None
        else:
            plan = (path_of(rt, source), path_of(rt, target), mr.source_branch, mr.target_branch, mr.iid,
                    clean_identity(actor.name or "") or actor.username, clean_identity(actor.email or "") or f"{actor.username}@localhost")  # fmt: skip
    moved, error = None, refused if plan is None else None
    if plan is not None:
        moved, error = _replay(*plan)
    with rt.db.transaction() as session:
        mr = session.get(MergeRequest, job.payload["merge_request_id"])
        if mr is None:
            return
        params = {key: value for key, value in (mr.merge_params or {}).items() if key not in (IN_PROGRESS, ERROR)}
        mr.merge_params = {**params, ERROR: error} if error else (params or None)
        session.flush()
        if moved is not None and moved[0] != moved[1]:
            project, actor = session.get(Project, mr.source_project_id), session.get(User, job.payload["user_id"])
            pushes.post_push(session, rt, project, actor, [RefUpdate(HEADS + mr.source_branch, *moved)])


def _replay(source, target, branch: str, onto_branch: str, iid: int, name: str, email: str):
    """(the move, None) or (None, why not) of git's part, run with no transaction open."""
    try:
        if source == target:
            onto = git_rebase.open_repository(source).references.get(HEADS + onto_branch)
            onto = str(onto.target) if onto is not None else None
        else:
            onto = git_rebase.fetch_onto(source, target, onto_branch, iid)
        if onto is None:
            return None, f"Rebase failed: the target branch {onto_branch} does not exist"
        try:
            return git_rebase.rebase(source, branch, onto, name, email), None
        finally:
            if source != target:
                git_rebase.drop_onto(source, iid)
    except MergeConflict:
        return None, CONFLICT
    except RefMoved:
        return None, MOVED
