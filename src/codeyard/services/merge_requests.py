"""Merge requests: create, list, get, update, close and reopen (reference section 10).

`:id` of create is the source project; the request belongs to its target project (`project_id`),
which numbers its requests (`iid`). A request from a fork targets the fork's upstream only.
Votes are `:+1:` / `:-1:` comments. Accepting a request (and merge when build succeeds) is
services/merge_accept.py.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Integer, String, and_, bindparam, func, literal, or_, select
from sqlalchemy import update as update_rows
from sqlalchemy.orm import Session, aliased, joinedload

from ..db.models import ForkLink, MergeRequest, Note, Project, User, is_id, utcnow
from ..db.models.merge_requests import (
    CAN_BE_MERGED,
    CANNOT_BE_MERGED,
    CLOSED,
    MERGE_REQUEST_NOTE,
    MERGED,
    OPEN_STATES,
    OPENED,
    REOPENED,
    UNCHECKED,
)  # fmt: skip
from ..db.queries import api_text, joined_columns, joined_part, page_statements, read_row
from ..db.queries import read_page as read_page_of
from ..entities import merge_request_hooks as hook_entities
from ..entities.common import View
from ..errors import (
    BadRequest,
    Conflict,
    Invalid,
    NotFound,
    RecordNotFound,
    Unprocessable,
)  # fmt: skip
from ..git import diffs, merge_refs, repo
from ..git.refs import is_branch_name
from ..jobs import queue
from ..policies import projects as policy
from . import access as access_service
from . import events, webhooks
from .identity import CONTACT_FIELDS, Contact
from .repository import path_by_id, path_of, reading

log = logging.getLogger("codeyard.merge_requests")
UPVOTE, DOWNVOTE = ":+1:", ":-1:"
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


# --- reads: statements built once, run by any reader (`db/readers.py`) --------------------------- ------------------------------------------------

_AUTHOR, _ASSIGNEE = aliased(User, name="author"), aliased(User, name="assignee")


def _votes(text: str):
    """The number of the request's comments that are TEXT (a vote), leading and trailing blanks aside."""
    return select(func.count()).where(Note.merge_request_id == MergeRequest.id, func.trim(Note.note) == text).scalar_subquery()


_LIST_COLUMNS = (
    MergeRequest.id, MergeRequest.iid, MergeRequest.target_project_id, MergeRequest.source_project_id,
    MergeRequest.title, MergeRequest.description, MergeRequest.state, MergeRequest.target_branch,
    MergeRequest.source_branch, MergeRequest.labels, MergeRequest.merge_when_build_succeeds, MergeRequest.merge_status,
    api_text(MergeRequest.created_at, "created_at"), api_text(MergeRequest.updated_at, "updated_at"),
    _votes(UPVOTE).label("upvotes"), _votes(DOWNVOTE).label("downvotes"),
    *joined_columns(_AUTHOR, CONTACT_FIELDS, "author_"), *joined_columns(_ASSIGNEE, CONTACT_FIELDS, "assignee_"),
)  # fmt: skip
_LIST_SOURCE = (
    MergeRequest.__table__.outerjoin(_AUTHOR, _AUTHOR.id == MergeRequest.author_id)
    .outerjoin(_ASSIGNEE, _ASSIGNEE.id == MergeRequest.assignee_id)
)  # fmt: skip
# The request `:id` of the project `:project_id`.
_THE_REQUEST = (
    MergeRequest.id == bindparam("id", type_=Integer), MergeRequest.target_project_id == bindparam("project_id", type_=Integer)
)
_ONE = select(*_LIST_COLUMNS).select_from(_LIST_SOURCE).where(*_THE_REQUEST)


@functools.lru_cache(maxsize=256)  # the iid lists' lengths are the client's to choose
def _page_statements(state: str | None, order_by: str, sort: str, iids: int = 0):
    """(count, page) of one project's requests in STATE (any when None), in ORDER_BY then id, SORT;
    with IIDS, only those numbered `:iid_0` ... (a statement per count: readers bind no list)."""
    conditions = [MergeRequest.target_project_id == bindparam("project_id", type_=Integer)]
    if state == OPENED:  # `MergeRequest.open`, without IN's list parameter
        conditions.append(or_(*(MergeRequest.state == each for each in OPEN_STATES)))
    elif state is not None:
        conditions.append(MergeRequest.state == bindparam("state", type_=String))
    if iids:
        conditions.append(MergeRequest.iid.in_([bindparam(f"iid_{at}", type_=Integer) for at in range(iids)]))
    column = MergeRequest.updated_at if order_by == "updated_at" else MergeRequest.created_at
    order = (column.asc(), MergeRequest.id.asc()) if sort == "asc" else (column.desc(), MergeRequest.id.desc())
    return page_statements(_LIST_COLUMNS, _LIST_SOURCE, conditions, order)


async def read_page(reader, project_id: int, *, state: str | None, order_by: str, sort: str, offset: int,
                    limit: int, iids: list[int] = ()) -> tuple[int, list]:  # fmt: skip
    """(total, [(row, author, assignee)] of one page) of project PROJECT_ID's requests (numbered
    IIDS when given), each row the request's columns and its votes, author and assignee None or
    their columns (`Contact`): what `entities.listed_merge_request` takes."""
    state = state if state in (OPENED, CLOSED, MERGED) else None
    wanted = sorted({iid for iid in iids if is_id(iid)})
    if iids and not wanted:
        return 0, []
    params = {"project_id": project_id, "state": state, "offset": offset, "limit": limit}
    params.update((f"iid_{at}", iid) for at, iid in enumerate(wanted))
    total, rows = await read_page_of(reader, _page_statements(state, order_by, sort, len(wanted)), params)
    return total, [_parts(row) for row in rows]


async def read_one(reader, project_id: int, mr_id: int):
    """(row, author, assignee) as `read_page` gives them, of project PROJECT_ID's request MR_ID (the
    global id); 404 `404 Not found` otherwise."""
    return _parts(await read_row(reader, _ONE, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound))


def _parts(row) -> tuple:
    return row, joined_part(Contact, row, "author_"), joined_part(Contact, row, "assignee_")


_NOTE_AUTHOR = aliased(User, name="note_author")
_COMMENT_COLUMNS = (
    Note.id, Note.note, Note.system, Note.merge_request_id, literal(MERGE_REQUEST_NOTE).label("noteable_type"),
    api_text(Note.created_at, "created_at"), *joined_columns(_NOTE_AUTHOR, CONTACT_FIELDS, "author_"),
)  # fmt: skip
_COMMENTS = page_statements(
    _COMMENT_COLUMNS, Note.__table__.outerjoin(_NOTE_AUTHOR, _NOTE_AUTHOR.id == Note.author_id),
    [Note.merge_request_id == bindparam("mr_id", type_=Integer)], (Note.id.asc(),),
)  # fmt: skip
_IN_PROJECT = select(MergeRequest.id).where(*_THE_REQUEST)
_ONE_COMMENT = _COMMENTS[1].order_by(None).limit(None).offset(None).where(Note.id == bindparam("note_id", type_=Integer))


async def read_comments(reader, project_id: int, mr_id: int, offset: int, limit: int) -> tuple[int, list[tuple]]:
    """Project PROJECT_ID's request MR_ID's comments, oldest first (404 `404 Not found` without the
    request): (total, [(row, author)] of one page), the author None or its columns (`Contact`)."""
    await read_row(reader, _IN_PROJECT, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound)
    total, rows = await read_page_of(reader, _COMMENTS, {"mr_id": mr_id, "offset": offset, "limit": limit})
    return total, [(row, joined_part(Contact, row, "author_")) for row in rows]


async def read_comment(reader, project_id: int, mr_id: int, note_id: int) -> tuple:
    """(row, author) of comment NOTE_ID on project PROJECT_ID's request MR_ID, as `read_comments`
    gives them; 404 `404 Not found` without the request or the comment."""
    await read_row(reader, _IN_PROJECT, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound)
    row = await read_row(reader, _ONE_COMMENT, {"mr_id": mr_id, "note_id": note_id}, note_id, RecordNotFound)
    return row, joined_part(Contact, row, "author_")


def _target(session: Session, actor, source: Project, target_id: int | None) -> Project:
    if target_id is None or target_id == source.id:
        return source
    target = session.get(Project, target_id) if is_id(target_id) else None
    if target is None or not access_service.access(session, actor, target).can(policy.READ_PROJECT):
        raise NotFound()
    return target


def source_of(session: Session, mr: MergeRequest) -> Project | None:
    """The request's source project; None once a deleted fork took it away."""
    return session.get(Project, mr.source_project_id) if mr.source_project_id else None


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
    (`run_check` with no transaction open, then `finish_check` fires the `open` hook)."""
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
        _hook(session, rt, project, actor, mr, action)
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


# --- the head ref and merge_status, with no transaction open -------------------------------------
# The change is recorded first with merge_status `unchecked` and a CHECK_KIND job due after
# CHECK_SECONDS; git moves the head ref and runs the trial merge with no transaction open; a second
# short transaction records the status while the request still waits for it (a push's job may have
# recorded a newer one meanwhile). A process that dies between leaves the job to do it.

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
            _hook(session, rt, session.get(Project, mr.target_project_id), actor, mr, action)
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


_COMPARED = select(
    MergeRequest.iid, MergeRequest.target_branch, MergeRequest.diff_base_sha, MergeRequest.diff_head_sha
).where(*_THE_REQUEST)


async def compared(reader, project_id: int, mr_id: int):
    """The (iid, target_branch, diff_base_sha, diff_head_sha) row of project PROJECT_ID's request
    MR_ID: what its comparison needs (`comparer`, `comparison`), by one prebuilt statement through
    READER; 404 `404 Not found` otherwise."""
    return await read_row(reader, _COMPARED, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound)


def comparer(rt, project_id: int, mr, *, commits: bool = True, files: bool = True,
             shape: diffs.Shape = None) -> Callable[[], diffs.Comparison]:  # fmt: skip
    """The work of `comparison` for request MR (a model or a `compared` row) of project PROJECT_ID,
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
    showed then (`_keep_comparison`). PROJECT and MR are models or rows (`project_reads`,
    `compared`): only the project's id and the request's `compared` columns are read."""
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


def record(session: Session, rt, project: Project, actor, mr: MergeRequest, action: int, hook_action: str) -> None:
    events.record(session, project, actor.id, action, target_id=mr.id, target_type="MergeRequest", title=mr.title)
    _hook(session, rt, project, actor, mr, hook_action)


def _hook_attributes(session: Session, rt, view: View, mr: MergeRequest) -> dict:
    source = source_of(session, mr)
    target = session.get(Project, mr.target_project_id)
    last = None
    with reading(target.id, "Repository"):
        path = path_of(rt, target)
        head = merge_refs.head_sha(path, mr.iid)
        if head is not None:
            last = repo.commit(path, head)
    return hook_entities.merge_request_attributes(view, mr, source, target, last)


def _hook(session: Session, rt, project: Project, actor, mr: MergeRequest, action: str) -> None:
    view = rt.view()
    attributes = _hook_attributes(session, rt, view, mr)
    payload = hook_entities.merge_request_payload(view, actor, project, mr, attributes, action)
    webhooks.trigger(session, project.id, "merge_requests_events", payload)


def check_status(session: Session, rt, mr: MergeRequest) -> str:
    """merge_status from a trial merge (in memory) of the request's head into its target branch."""
    target = session.get(Project, mr.target_project_id)
    path = path_of(rt, target)
    with reading(target.id, "Repository"):
        mergeable = merge_refs.can_merge(path, mr.target_branch, merge_refs.head_sha(path, mr.iid))
    mr.merge_status = CAN_BE_MERGED if mergeable else CANNOT_BE_MERGED
    return mr.merge_status


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
        mr.merge_when_build_succeeds, mr.merge_user_id, mr.merge_params = False, None, None
        system_note(session, mr, pusher, ABORTED)
    session.flush()


def system_note(session: Session, mr: MergeRequest, author_id: int | None, text: str) -> Note:
    """A note the service writes on MR (caused by AUTHOR_ID): no event, no hook, nobody edits it."""
    note = Note(project_id=mr.target_project_id, merge_request_id=mr.id, author_id=author_id, note=text, system=True)
    session.add(note)
    return note


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
                _hook(session, rt, session.get(Project, mr.target_project_id), user, mr, "update")


# --- merge when build succeeds -------------------------------------------------------------------

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


# --- comments ------------------------------------------------------------------------------------


def comment(session: Session, rt, project: Project, actor, mr: MergeRequest, text: str) -> Note:
    """Add a comment (`:+1:` / `:-1:` count as votes): a `commented on` event and a Note Hook."""
    note = Note(project_id=project.id, merge_request_id=mr.id, author_id=actor.id, note=text)
    session.add(note)
    session.flush()
    events.record(session, project, actor.id, events.COMMENTED, target_id=note.id, target_type="Note", title=mr.title)
    view = rt.view()
    attributes = _hook_attributes(session, rt, view, mr)
    payload = hook_entities.note_payload(view, actor, project, mr, attributes, note)
    webhooks.trigger(session, project.id, "note_events", payload)
    return note
