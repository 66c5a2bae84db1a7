"""The read path of merge requests: a page of a project's requests, one request, what its
comparison needs; statements built once, run by any reader (`db/readers.py`). Votes are the
request's `:+1:` / `:-1:` comments and its `thumbsup` / `thumbsdown` award emoji."""

from __future__ import annotations

import functools

from sqlalchemy import Integer, String, bindparam, func, or_, select
from sqlalchemy.orm import aliased

from ...db.models import AwardEmoji, MergeRequest, Note, User, is_id
from ...db.models.merge_requests import CLOSED, MERGE_REQUEST_AWARDABLE, MERGED, OPEN_STATES, OPENED
from ...db.queries import api_text, joined_columns, joined_part, page_statements, read_row
from ...db.queries import read_page as read_page_of
from ...errors import RecordNotFound
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

