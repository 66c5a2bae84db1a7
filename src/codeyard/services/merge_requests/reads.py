"""The read path of merge requests: a page of a project's requests, one request, what its
comparison needs; statements built once, run by any reader (`db/readers.py`). Votes are the
request's `:+1:` / `:-1:` comments and its `thumbsup` / `thumbsdown` award emoji."""

from __future__ import annotations

import datetime as dt
import functools
import json
from dataclasses import dataclass

from sqlalchemy import Integer, String, Text, bindparam, cast, func, or_, select, union
from sqlalchemy.orm import aliased

from ...db.models import AwardEmoji, Event, MergeRequest, Namespace, Note, Project, User, is_id
from ...db.models.ci import Pipeline
from ...db.models.merge_requests import (
    CLOSED,
    LOCKED,
    MERGE_REQUEST_AWARDABLE,
    MERGED,
    OPEN_STATES,
    OPENED,
    unresolved_notes,
)
from ...db.queries import api_text, joined_columns, joined_part, page_statements, read_row
from ...db.queries import read_page as read_page_of
from ...errors import RecordNotFound
from .. import events, visibility
from ..identity import CONTACT_FIELDS, Contact

UPVOTE, DOWNVOTE = ":+1:", ":-1:"
_AWARDED = {UPVOTE: "thumbsup", DOWNVOTE: "thumbsdown"}

_AUTHOR, _ASSIGNEE = aliased(User, name="author"), aliased(User, name="assignee")


def _votes(text: str):
    """The request's votes TEXT (`:+1:` or `:-1:`): its comments that are TEXT, leading and trailing
    blanks aside, and the emoji of that name awarded to it (`thumbsup`, `thumbsdown`), as GitLab
    8.9+ counted both."""
    comments = select(func.count()).where(Note.merge_request_id == MergeRequest.id, func.trim(Note.note) == text)
    awards = select(func.count()).where(
        AwardEmoji.awardable_type == MERGE_REQUEST_AWARDABLE, AwardEmoji.awardable_id == MergeRequest.id,
        AwardEmoji.name == _AWARDED[text],
    )  # fmt: skip
    return comments.scalar_subquery() + awards.scalar_subquery()


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


@functools.cache  # a few shapes: states × orders × iid slots (powers of two, `_iid_params`)
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
    params = {"project_id": project_id, "state": state, "offset": offset, "limit": limit}
    slots = 0
    if iids:
        wanted = sorted({iid for iid in iids if is_id(iid)})
        if not wanted:
            return 0, []
        slots = _iid_params(wanted, params)
    total, rows = await read_page_of(reader, _page_statements(state, order_by, sort, slots), params)
    return total, [_parts(row) for row in rows]


def _iid_params(wanted: list[int], params: dict) -> int:
    """Binds WANTED as `:iid_0` ... into PARAMS, the last repeated up to the next power of two, and
    gives that number: the lists' lengths are the client's to choose, so a statement (compiled and
    kept for good by the database) is made per power of two, not per length."""
    slots = 1 << (len(wanted) - 1).bit_length()
    params.update((f"iid_{at}", wanted[min(at, len(wanted) - 1)]) for at in range(slots))
    return slots


async def read_one(reader, project_id: int, mr_id: int):
    """(row, author, assignee) as `read_page` gives them, of project PROJECT_ID's request MR_ID (the
    global id); 404 `404 Not found` otherwise."""
    return _parts(await read_row(reader, _ONE, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound))


def _parts(row) -> tuple:
    return row, joined_part(Contact, row, "author_"), joined_part(Contact, row, "assignee_")



_IN_PROJECT = select(MergeRequest.id).where(*_THE_REQUEST)


async def require(reader, project_id: int, mr_id: int) -> None:
    """404 `404 Not found` unless project PROJECT_ID has the request MR_ID (the global id)."""
    await read_row(reader, _IN_PROJECT, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound)


_BY_IID = select(MergeRequest.id).where(
    MergeRequest.iid == bindparam("iid", type_=Integer), MergeRequest.target_project_id == bindparam("project_id", type_=Integer)
)


async def id_of_iid(reader, project_id: int, iid: int) -> int:
    """The global id of project PROJECT_ID's request numbered IID (API v4 names requests so);
    404 `404 Not found` otherwise."""
    return (await read_row(reader, _BY_IID, {"iid": iid, "project_id": project_id}, iid, RecordNotFound)).id


_COMPARED = select(
    MergeRequest.iid, MergeRequest.target_branch, MergeRequest.diff_base_sha, MergeRequest.diff_head_sha
).where(*_THE_REQUEST)


async def compared(reader, project_id: int, mr_id: int):
    """The (iid, target_branch, diff_base_sha, diff_head_sha) row of project PROJECT_ID's request
    MR_ID: what its comparison needs (`comparison.comparer`, `comparison.comparison`), by one prebuilt statement through
    READER; 404 `404 Not found` otherwise."""
    return await read_row(reader, _COMPARED, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound)



# --- the lists of API v4: filters over one project, a group's projects or every readable one ---

# The target project and its namespace, unaliased: `visibility.readable` states its condition on `Project`.
_TARGET, _TARGET_NAMESPACE = Project, Namespace


def _last_event(action: int):
    """When the request's latest event ACTION (merged, closed) was recorded."""
    return (
        select(func.max(Event.created_at))
        .where(Event.project_id == MergeRequest.target_project_id, Event.target_type == "MergeRequest",
               Event.target_id == MergeRequest.id, Event.action == action)
        .scalar_subquery()
    )


def _last_event_author(action: int):
    """Who recorded the request's latest event ACTION (merged, closed)."""
    return (
        select(Event.author_id)
        .where(Event.project_id == MergeRequest.target_project_id, Event.target_type == "MergeRequest",
               Event.target_id == MergeRequest.id, Event.action == action)
        .order_by(Event.id.desc())
        .limit(1)
        .correlate(MergeRequest)
        .scalar_subquery()
    )


_USER_NOTES = (
    select(func.count()).where(Note.merge_request_id == MergeRequest.id, Note.system.is_(False)).scalar_subquery()
)
# Who set the request to merge when its build succeeds (while it waits).
_MERGE_USER = aliased(User, name="merge_user")
# Who merged it, who closed it last (the authors of those events).
_MERGED_BY, _CLOSED_BY = aliased(User, name="merged_by"), aliased(User, name="closed_by")
# v3's columns and what v4's entity adds: the merge's traces, the target's path, the counts.
_WIDE_COLUMNS = (
    *_LIST_COLUMNS, MergeRequest.merge_commit_sha, MergeRequest.merge_user_id, MergeRequest.merge_params,
    MergeRequest.diff_head_sha, MergeRequest.diff_base_sha,
    _TARGET.path.label("target_path"), _TARGET_NAMESPACE.path.label("target_namespace_path"),
    _USER_NOTES.label("user_notes_count"), unresolved_notes(MergeRequest.id).label("unresolved_notes"),
    api_text(_last_event(events.MERGED), "merged_at"), api_text(_last_event(events.CLOSED), "closed_at"),
    *joined_columns(_MERGE_USER, CONTACT_FIELDS, "merger_"), *joined_columns(_MERGED_BY, CONTACT_FIELDS, "merged_by_"),
    *joined_columns(_CLOSED_BY, CONTACT_FIELDS, "closed_by_"),
)  # fmt: skip
_WIDE_SOURCE = (
    _LIST_SOURCE.join(_TARGET, _TARGET.id == MergeRequest.target_project_id)
    .join(_TARGET_NAMESPACE, _TARGET_NAMESPACE.id == _TARGET.namespace_id)
    .outerjoin(_MERGE_USER, _MERGE_USER.id == MergeRequest.merge_user_id)
    .outerjoin(_MERGED_BY, (MergeRequest.state == MERGED) & (_MERGED_BY.id == _last_event_author(events.MERGED)))
    .outerjoin(_CLOSED_BY, (MergeRequest.state == CLOSED) & (_CLOSED_BY.id == _last_event_author(events.CLOSED)))
)  # fmt: skip
_WIDE_ONE = select(*_WIDE_COLUMNS).select_from(_WIDE_SOURCE).where(*_THE_REQUEST)

PROJECT, GROUP, EVERYWHERE = "project", "group", "everywhere"
STATES = {OPENED: OPEN_STATES, CLOSED: (CLOSED,), MERGED: (MERGED,), LOCKED: (LOCKED,)}
ORDERS = {"created_at": MergeRequest.created_at, "updated_at": MergeRequest.updated_at, "title": MergeRequest.title}
TIME_BOUNDS = {  # parameter: (column, compared as)
    "created_after": ("created_at", ">="), "created_before": ("created_at", "<="),
    "updated_after": ("updated_at", ">="), "updated_before": ("updated_at", "<="),
}  # fmt: skip
ANY, NONE = "Any", "None"


@dataclass(frozen=True)
class Listing:
    """What a v4 list of merge requests asks for. WHERE is PROJECT (`project_id`), GROUP (the
    readable projects of `group_id`) or EVERYWHERE (every project the caller reads); the values
    of the filters are bound, never part of a statement (one statement per shape, `_listing_statements`)."""

    where: str
    project_id: int | None = None
    group_id: int | None = None
    state: str | None = None  # None: all
    order_by: str = "created_at"
    sort: str = "desc"
    author_id: int | None = None
    author_username: str | None = None
    assignee: int | str | None = None  # an id, ANY or NONE
    source_branch: str | None = None
    target_branch: str | None = None
    search: str | None = None
    labels: tuple[str, ...] | str | None = None  # the titles all required, ANY or NONE
    iids: tuple[int, ...] = ()
    times: tuple[tuple[str, dt.datetime], ...] = ()  # (a TIME_BOUNDS name, the bound)
    draft: bool | None = None


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _label_pattern(title: str) -> str:
    """A label in the stored JSON array's text (titles are stored JSON-encoded, each quoted)."""
    return _like(json.dumps(title))


@functools.cache
def _listing_statements(shape: tuple):
    """(count, page) of a `Listing` of SHAPE (`_shape`): its conditions with bound values."""
    (where, viewer, state, order_by, sort, author_id, author_username, assignee, source_branch, target_branch,
     search, labels, iid_slots, times, draft) = shape  # fmt: skip
    conditions = []
    if where == PROJECT:
        conditions.append(MergeRequest.target_project_id == bindparam("project_id", type_=Integer))
    else:
        conditions += [visibility.readable(viewer), _TARGET.merge_requests_enabled.is_(True)]
        if where == GROUP:
            conditions.append(_TARGET.namespace_id == bindparam("group_id", type_=Integer))
    if state is not None:
        conditions.append(or_(*(MergeRequest.state == each for each in STATES[state])))
    if author_id:
        conditions.append(MergeRequest.author_id == bindparam("author_id", type_=Integer))
    if author_username:
        conditions.append(func.lower(_AUTHOR.username) == func.lower(bindparam("author_username", type_=String)))
    if assignee == ANY:
        conditions.append(MergeRequest.assignee_id.is_not(None))
    elif assignee == NONE:
        conditions.append(MergeRequest.assignee_id.is_(None))
    elif assignee:
        conditions.append(MergeRequest.assignee_id == bindparam("assignee_id", type_=Integer))
    for name, given in (("source_branch", source_branch), ("target_branch", target_branch)):
        if given:
            conditions.append(getattr(MergeRequest, name) == bindparam(name, type_=String))
    if search:
        pattern = bindparam("search", type_=String)
        conditions.append(or_(func.lower(MergeRequest.title).like(pattern, escape="\\"),
                              func.lower(func.coalesce(MergeRequest.description, "")).like(pattern, escape="\\")))  # fmt: skip
    labels_text = cast(MergeRequest.labels, Text)
    if labels == ANY:
        conditions.append(labels_text != "[]")
    elif labels == NONE:
        conditions.append(or_(MergeRequest.labels.is_(None), labels_text == "[]"))
    elif labels:
        conditions += [labels_text.like(bindparam(f"label_{at}", type_=String), escape="\\") for at in range(labels)]
    if iid_slots:
        conditions.append(MergeRequest.iid.in_([bindparam(f"iid_{at}", type_=Integer) for at in range(iid_slots)]))
    for name in times:
        column, compared = TIME_BOUNDS[name]
        bound = bindparam(name, type_=MergeRequest.created_at.type)
        conditions.append(getattr(MergeRequest, column) >= bound if compared == ">=" else getattr(MergeRequest, column) <= bound)
    if draft is not None:
        wip = or_(*(func.lower(func.ltrim(MergeRequest.title)).like(prefix, escape="\\") for prefix in DRAFT_PREFIXES))
        conditions.append(wip if draft else ~wip)
    column = ORDERS[order_by]
    order = (column.asc(), MergeRequest.id.asc()) if sort == "asc" else (column.desc(), MergeRequest.id.desc())
    return page_statements(_WIDE_COLUMNS, _WIDE_SOURCE, conditions, order)


# Titles that mark a draft, as lowered LIKE patterns: GitLab's Draft prefixes and GitLab 8's WIP ones.
DRAFT_PREFIXES = ("draft:%", "[draft]%", "(draft)%", "wip:%", "[wip]%", "wip %")


async def read_listing(reader, listing: Listing, actor, offset: int, limit: int) -> tuple[int, list]:
    """(total, [(row, author, assignee)] of one page) of LISTING as ACTOR reads it: each row v3's
    columns (`read_page`) and v4's (`_WIDE_COLUMNS`)."""
    params: dict = {"offset": offset, "limit": limit, "project_id": listing.project_id, "group_id": listing.group_id,
                    "author_id": listing.author_id, "author_username": listing.author_username,
                    "source_branch": listing.source_branch, "target_branch": listing.target_branch}  # fmt: skip
    viewer = None
    if listing.where != PROJECT:
        viewer = visibility.viewer(actor)
        params.update(visibility.params(actor))
    if isinstance(listing.assignee, int):
        params["assignee_id"] = listing.assignee
    if listing.search:
        params["search"] = _like(listing.search.lower())
    labels = listing.labels
    if isinstance(labels, tuple):
        patterns = [_label_pattern(title) for title in labels]
        labels = 1 << (len(patterns) - 1).bit_length()  # a statement per power of two, as `_iid_params`
        params.update((f"label_{at}", patterns[min(at, len(patterns) - 1)]) for at in range(labels))
    slots = 0
    if listing.iids:
        wanted = sorted({iid for iid in listing.iids if is_id(iid)})
        if not wanted:
            return 0, []
        slots = _iid_params(wanted, params)
    params.update(listing.times)
    shape = (listing.where, viewer, listing.state, listing.order_by, listing.sort, bool(listing.author_id),
             bool(listing.author_username), listing.assignee if listing.assignee in (ANY, NONE) else bool(listing.assignee),
             bool(listing.source_branch), bool(listing.target_branch), bool(listing.search), labels, slots,
             tuple(sorted(name for name, _ in listing.times)), listing.draft)  # fmt: skip
    total, rows = await read_page_of(reader, _listing_statements(shape), params)
    return total, [_parts(row) for row in rows]


def people_of(parts) -> tuple:
    """(author, assignee, merge user, merged by, closed by) of PARTS (one of `read_listing`, or
    `read_wide`), each a `Contact` or None: the merge user set the request to merge when its build
    succeeds; merged by and closed by (once merged, closed) recorded those events."""
    row, author, assignee = parts
    return (author, assignee, *(joined_part(Contact, row, prefix) for prefix in ("merger_", "merged_by_", "closed_by_")))


async def read_wide(reader, project_id: int, mr_id: int):
    """`read_one` with v4's columns (`_WIDE_COLUMNS`)."""
    return _parts(await read_row(reader, _WIDE_ONE, {"id": mr_id, "project_id": project_id}, mr_id, RecordNotFound))


_CONTACT_COLUMNS = tuple(
    api_text(getattr(User, name), name) if name.endswith("_at") else getattr(User, name) for name in CONTACT_FIELDS
)
_PARTICIPANT_IDS = union(
    select(MergeRequest.author_id.label("user_id")).where(MergeRequest.id == bindparam("id", type_=Integer)),
    select(MergeRequest.assignee_id).where(MergeRequest.id == bindparam("id", type_=Integer)),
    select(Note.author_id).where(Note.merge_request_id == bindparam("id", type_=Integer), Note.system.is_(False)),
)
_PARTICIPANTS = page_statements(_CONTACT_COLUMNS, User.__table__, (User.id.in_(select(_PARTICIPANT_IDS.subquery().c.user_id)),),
                                (User.id.asc(),))  # fmt: skip


async def read_participants(reader, mr_id: int, offset: int, limit: int) -> tuple[int, list]:
    """(total, one page of `Contact`s) of who takes part in request MR_ID: its author, its assignee
    and whoever commented on it, by id."""
    total, rows = await read_page_of(reader, _PARTICIPANTS, {"id": mr_id, "offset": offset, "limit": limit})
    return total, [Contact._make(row[: len(CONTACT_FIELDS)]) for row in rows]


_PIPELINE_PROJECT, _PIPELINE_NAMESPACE = aliased(Project, name="pipeline_project"), aliased(Namespace, name="pipeline_namespace")
_PIPELINES = page_statements(
    (Pipeline.id, Pipeline.project_id, Pipeline.sha, Pipeline.ref, Pipeline.status,
     api_text(Pipeline.created_at, "created_at"), api_text(Pipeline.updated_at, "updated_at"),
     _PIPELINE_PROJECT.path.label("project_path"), _PIPELINE_NAMESPACE.path.label("namespace_path")),
    Pipeline.__table__.join(_PIPELINE_PROJECT, _PIPELINE_PROJECT.id == Pipeline.project_id)
    .join(_PIPELINE_NAMESPACE, _PIPELINE_NAMESPACE.id == _PIPELINE_PROJECT.namespace_id),
    (Pipeline.project_id == bindparam("project_id", type_=Integer), Pipeline.ref == bindparam("ref", type_=String),
     Pipeline.tag.is_(False)),
    (Pipeline.id.desc(),),
)  # fmt: skip


async def read_pipelines(reader, source_project_id: int | None, source_branch: str, offset: int, limit: int) -> tuple[int, list]:
    """(total, one page, newest first) of the pipelines of a request's source branch in its source
    project (none once its fork is gone)."""
    if source_project_id is None:
        return 0, []
    params = {"project_id": source_project_id, "ref": source_branch, "offset": offset, "limit": limit}
    return await read_page_of(reader, _PIPELINES, params)
