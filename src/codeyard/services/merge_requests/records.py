"""Merge requests as records: create, edit, close and reopen (reference section 10), and the
request loaded to act on it.

`:id` of create is the source project; the request belongs to its target project (`project_id`),
which numbers its requests (`iid`). A request from a fork targets the fork's upstream only. A new
target branch or a reopen asks for the status again (`status.plan_check`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, joinedload

from ...db.models import ForkLink, MergeRequest, Project, User, is_id, utcnow
from ...db.models.merge_requests import CLOSED, FORCE_REMOVE, OPENED, REOPENED, UNCHECKED
from ...db.readers import SessionReader, now
from ...errors import BadRequest, Conflict, Invalid, NotFound, RecordNotFound, Unprocessable
from ...git import repo
from ...git.refs import is_branch_name
from ...policies import projects as policy
from .. import access as access_service
from .. import award_emoji, events, loader
from ..repository import path_of, reading
from .comparison import keep_comparison
from .status import StatusCheck, plan_check
from .trail import hook, record, source_of

SAME = "You can not use same project/branch for source and target"
NOT_A_FORK = "Source project is not a fork of target project"


def parse_labels(text: str | None) -> list[str]:
    """A comma list as sorted unique titles. GitLab 8.6 checked each title (stripped) as its Label
    model did, present and free of `&` and `?`, and refused the request with every title refused:
    400 `{"labels": {title: {"title": [reasons]}}}`. As Ruby's `split(",")`, empty fields at the
    end are no fields (`"a,b,"` is two titles; `"a,,b"` has a blank one)."""
    fields = (text or "").split(",")
    while fields and fields[-1] == "":
        fields.pop()
    titles = [field.strip() for field in fields]
    refused = {title: {"title": reasons} for title in titles if (reasons := _label_errors(title))}
    if refused:
        raise BadRequest({"labels": refused})
    return sorted(set(titles))


def _label_errors(title: str) -> list[str]:
    if not title:
        return ["can't be blank", "is invalid"]
    return ["is invalid"] if "&" in title or "?" in title else []


def _labels(session: Session, actor, target: Project, text: str | None) -> list[str]:
    """The labels of a new request, kept (like its assignee) only when the caller may administer
    the target's requests; checked for everyone."""
    labels = parse_labels(text)
    if labels and not access_service.access(session, actor, target).can(policy.ADMIN_MERGE_REQUEST):
        return []
    return labels


def find(session: Session, project_id: int, mr_id: int) -> MergeRequest:
    """Project PROJECT_ID's request MR_ID (the global id); 404 `404 Not found` otherwise."""
    options = (joinedload(MergeRequest.author), joinedload(MergeRequest.assignee))  # what its entity shows
    mr = session.get(MergeRequest, mr_id, options=options) if is_id(mr_id) else None
    if mr is None or mr.target_project_id != project_id:
        raise RecordNotFound()
    return mr


def find_by_iid(session: Session, project: Project, iid: int) -> MergeRequest:
    """PROJECT's request number IID, loaded to act on it (its web page's forms); 404 otherwise."""
    mr = session.scalars(
        select(MergeRequest).where(MergeRequest.target_project_id == project.id, MergeRequest.iid == iid)
        .options(joinedload(MergeRequest.author), joinedload(MergeRequest.assignee))
    ).first() if is_id(iid) else None  # fmt: skip
    if mr is None:
        raise RecordNotFound()
    return mr


def _target(session: Session, actor, source: Project, target_id: int | None) -> Project:
    """The project the request goes into: SOURCE unless TARGET_ID names another, which the caller
    must be able to read (the one loader decides, in SESSION's transaction); 404 otherwise."""
    if target_id is None or target_id == source.id:
        return source
    found = now(loader.project(SessionReader(session), str(target_id), actor))
    target = session.get(Project, found.row.id) if found.refusal is None else None
    if target is None:
        raise NotFound()
    return target


def _is_fork_of(session: Session, source: Project, target: Project) -> bool:
    link = select(ForkLink.id).where(
        ForkLink.forked_to_project_id == source.id, ForkLink.forked_from_project_id == target.id
    )
    return session.scalar(link) is not None


def _check(session: Session, rt, mr: MergeRequest, source: Project, target: Project) -> None:
    """422 / 409 as GitLab answered an invalid request."""
    if source.id == target.id and mr.source_branch == mr.target_branch:
        raise Unprocessable([SAME])
    if source.id != target.id and not _is_fork_of(session, source, target):
        raise Unprocessable([NOT_A_FORK])
    if repo.branch(path_of(rt, source), mr.source_branch) is None:
        raise Unprocessable([f'Source branch "{mr.source_branch}" does not exist'])
    duplicate = select(MergeRequest.title).where(
        MergeRequest.source_project_id == source.id,
        MergeRequest.source_branch == mr.source_branch,
        MergeRequest.target_project_id == target.id,
        MergeRequest.target_branch == mr.target_branch,
        MergeRequest.open,
        MergeRequest.id != (mr.id or 0),
    )
    existing = session.scalar(duplicate.limit(1))
    if existing is not None:
        raise Conflict([f'Cannot Create: This merge request already exists: ["{existing}"]'])


def _check_target_branch(rt, target: Project, name: str) -> None:
    """400 unless NAME is a canonical branch name (`refs.is_branch_name`) of a branch TARGET has:
    GitLab 8 stored any text, and the request could then never merge."""
    if not is_branch_name(name):
        raise Invalid({"target_branch": ["is invalid"]})
    with reading(target.id, "Repository"):
        exists = repo.branch(path_of(rt, target), name) is not None
    if not exists:
        raise Invalid({"target_branch": ["does not exist"]})


def _assignee(session: Session, actor, target: Project, assignee_id: int | None) -> int | None:
    """The assignee, kept only when it exists and the caller may administer the target's requests."""
    if assignee_id is None or not is_id(assignee_id) or session.get(User, assignee_id) is None:
        return None
    if not access_service.access(session, actor, target).can(policy.ADMIN_MERGE_REQUEST):
        return None
    return assignee_id


def _next_iid(session: Session, target: Project) -> int:
    # Lock the target row (PostgreSQL) so two creations do not pick the same number; SQLite's write
    # transaction already serializes them.
    session.execute(select(Project.id).where(Project.id == target.id).with_for_update())
    return (
        session.scalar(select(func.max(MergeRequest.iid)).where(MergeRequest.target_project_id == target.id))
        or 0
    ) + 1


def create(session: Session, rt, actor, source: Project, fields: dict[str, Any]) -> tuple[MergeRequest, StatusCheck]:
    """Record the request and its `opened` event; its head and status come from the check returned
    (`status.run_check` with no transaction open, then `status.finish_check` fires the `open` hook)."""
    target = _target(session, actor, source, fields.get("target_project_id"))
    mr = MergeRequest(
        source_project_id=source.id,
        target_project_id=target.id,
        source_branch=fields["source_branch"],
        target_branch=fields["target_branch"],
        title=fields["title"],
        description=fields.get("description"),
        state=OPENED,
        author_id=actor.id,
        assignee_id=_assignee(session, actor, target, fields.get("assignee_id")),
        labels=_labels(session, actor, target, fields.get("labels")),
        merge_when_build_succeeds=False,
        merge_status=UNCHECKED,
    )
    _check_target_branch(rt, target, mr.target_branch)
    _check(session, rt, mr, source, target)
    mr.iid = _next_iid(session, target)
    session.add(mr)
    session.flush()
    events.record(session, target, actor.id, events.CREATED, target_id=mr.id, target_type="MergeRequest", title=mr.title)
    return mr, plan_check(session, rt, mr, move_head=True, hooks=("open",))


EDITS = ("title", "description", "target_branch", "assignee_id", "labels")


def update(
    session: Session, rt, actor, project: Project, mr: MergeRequest, fields: dict[str, Any]
) -> tuple[MergeRequest, StatusCheck | None]:
    """Change MR; when its target changes or it is reopened, the check returned computes its status.
    Hooks as GitLab 8.6's UpdateService: `close` or `reopen` for a state change, then `update` when
    any attribute was given (changed or not); each carries the request as the whole change left it."""
    if "source_branch" in fields:
        raise BadRequest("Source branch cannot be changed")
    check = _edit(session, rt, actor, project, mr, fields)
    edited = ("update",) if any(name in fields for name in EDITS) else ()
    event = fields.get("state_event")
    if event == "close" and mr.open:
        mr.state = CLOSED
        keep_comparison(rt, mr)
        record(session, rt, project, actor, mr, events.CLOSED, "close")
    elif event == "reopen" and mr.state == CLOSED:
        mr.state = REOPENED
        mr.diff_base_sha = mr.diff_head_sha = None  # compared with its branches again
        events.record(session, project, actor.id, events.REOPENED, target_id=mr.id, target_type="MergeRequest",
                      title=mr.title)  # fmt: skip
        # The reopen hook waits for the status; the update hook follows it.
        return mr, plan_check(session, rt, mr, move_head=True, hooks=("reopen", *edited))
    for action in edited:
        hook(session, rt, project, actor, mr, action)
    session.flush()
    return mr, check


def _edit(session: Session, rt, actor, project: Project, mr: MergeRequest, fields: dict[str, Any]) -> StatusCheck | None:
    """Apply the attributes FIELDS gives; a new target branch needs the check returned."""
    if "labels" in fields:
        mr.labels = parse_labels(fields["labels"])
    for name in ("title", "description"):
        if name in fields:
            setattr(mr, name, fields[name])
    if "assignee_id" in fields:
        mr.assignee_id = _assignee(session, actor, project, fields["assignee_id"])
    check = None
    if fields.get("target_branch") not in (None, mr.target_branch):
        _check_target_branch(rt, project, fields["target_branch"])
        mr.target_branch = fields["target_branch"]
        source = source_of(session, mr)
        if source is not None:
            _check(session, rt, mr, source, project)
        check = plan_check(session, rt, mr, move_head=False)
    mr.updated_at = utcnow()
    session.flush()
    return check



def force_remove_source_branch(session: Session, mr: MergeRequest, remove: bool) -> None:
    """Remove MR's source branch once it is merged (API v4's `remove_source_branch`), whatever the
    accept asks; kept in its merge parameters."""
    params = {key: value for key, value in (mr.merge_params or {}).items() if key != FORCE_REMOVE}
    mr.merge_params = {**params, FORCE_REMOVE: True} if remove else (params or None)
    session.flush()




def delete(session: Session, mr: MergeRequest) -> None:
    """Delete MR and its notes (API v4; GitLab 8 had no way to). Its head ref stays, as the
    references of any other request gone."""
    award_emoji.forget_request(session, mr.id)  # awards name what they are on with no foreign key
    session.delete(mr)
    session.flush()
