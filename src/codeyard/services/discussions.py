"""A merge request's notes as discussions (GitLab's Notes and Discussions APIs, v4): every note is in
a discussion, a comment alone in its own (`individual_note`), a thread's notes together; a thread's
notes are resolvable, each or the whole thread at once. A thread on a line of the request's diff
carries its position (`DiffNote`), checked against the request's changes.

The writes go through `notes` (the events and Note Hooks of every comment); the reads here are
the v4 shapes' rows: one prebuilt statement per list (a page of discussions is one statement that
joins the page of their first notes), the notes' authors and resolvers joined in."""

from __future__ import annotations

import functools
import json
import re
from collections import OrderedDict

from sqlalchemy import Integer, String, bindparam, func, literal, select
from sqlalchemy.orm import Session, aliased

from ..db.models import MAX_INTEGER, MergeRequest, Note, Project, User, utcnow
from ..db.models.merge_requests import (
    DIFF_NOTE,
    DISCUSSION_NOTE,
    MERGE_REQUEST_NOTE,
    new_discussion_id,
    unresolved_notes,
)
from ..db.queries import (
    LIMIT,
    OFFSET,
    api_text,
    joined_columns,
    joined_part,
    page_statements,
    read_page,
    read_row,
)
from ..errors import Forbidden, Invalid, NotFound, RecordNotFound
from ..git import diffs
from ..policies import projects as policy
from . import notes
from .identity import CONTACT_FIELDS, Contact
from .merge_requests import comparison

DISCUSSION_ID = re.compile(r"[0-9a-f]{40}")

_AUTHOR, _RESOLVER = aliased(User, name="note_author"), aliased(User, name="note_resolver")
COLUMNS = (
    Note.id, Note.type, Note.note, Note.system, Note.merge_request_id, literal(MERGE_REQUEST_NOTE).label("noteable_type"),
    Note.project_id, MergeRequest.iid.label("noteable_iid"), Note.discussion_id, Note.resolvable, Note.position,
    api_text(Note.resolved_at, "resolved_at"), api_text(Note.created_at, "created_at"),
    api_text(Note.updated_at, "updated_at"),
    *joined_columns(_AUTHOR, CONTACT_FIELDS, "author_"), *joined_columns(_RESOLVER, CONTACT_FIELDS, "resolver_"),
)  # fmt: skip
_SOURCE = (
    Note.__table__.join(MergeRequest, MergeRequest.id == Note.merge_request_id)
    .outerjoin(_AUTHOR, _AUTHOR.id == Note.author_id)
    .outerjoin(_RESOLVER, _RESOLVER.id == Note.resolved_by_id)
)  # fmt: skip
# The notes of request `:mr_id` of project `:project_id` (the project named in the path).
_OF_REQUEST = (
    Note.merge_request_id == bindparam("mr_id", type_=Integer),
    MergeRequest.target_project_id == bindparam("project_id", type_=Integer),
)


def parts(row) -> tuple:
    """(row, author, resolver) of a note's row: what `entities.v4.notes.note` takes."""
    return row, joined_part(Contact, row, "author_"), joined_part(Contact, row, "resolver_")


@functools.cache  # two orders × two directions
def _note_pages(order_by: str, sort: str):
    column = Note.updated_at if order_by == "updated_at" else Note.created_at
    order = (column.asc(), Note.id.asc()) if sort == "asc" else (column.desc(), Note.id.desc())
    return page_statements(COLUMNS, _SOURCE, _OF_REQUEST, order)


async def read_notes(reader, project_id: int, mr_id: int, *, order_by: str, sort: str, offset: int,
                     limit: int) -> tuple[int, list[tuple]]:  # fmt: skip
    """(total, [parts] of one page) of request MR_ID's notes in ORDER_BY (`created_at`,
    `updated_at`) then id, SORT (`asc`, `desc`)."""
    params = {"mr_id": mr_id, "project_id": project_id, "offset": offset, "limit": limit}
    total, rows = await read_page(reader, _note_pages(order_by, sort), params)
    return total, [parts(row) for row in rows]


_ONE_NOTE = select(*COLUMNS).select_from(_SOURCE).where(*_OF_REQUEST, Note.id == bindparam("note_id", type_=Integer))


async def read_note(reader, project_id: int, mr_id: int, note_id: int) -> tuple:
    """The parts of request MR_ID's note NOTE_ID; 404 `404 Not found` otherwise."""
    params = {"mr_id": mr_id, "project_id": project_id, "note_id": note_id}
    return parts(await read_row(reader, _ONE_NOTE, params, note_id, RecordNotFound))


# A page of discussions: their first notes' ids (the discussions' order), then all their notes.
_HEADS = (
    select(Note.discussion_id.label("discussion_id"), func.min(Note.id).label("head_id"))
    .where(Note.merge_request_id == bindparam("mr_id", type_=Integer))
    .group_by(Note.discussion_id).order_by(func.min(Note.id)).limit(LIMIT).offset(OFFSET)
    .subquery("heads")
)  # fmt: skip
_DISCUSSION_COUNT = (
    select(func.count(Note.discussion_id.distinct())).select_from(_SOURCE).where(*_OF_REQUEST)
)  # fmt: skip
_DISCUSSION_PAGE = (
    select(*COLUMNS, _DISCUSSION_COUNT.scalar_subquery().label("total"))
    .select_from(_SOURCE.join(_HEADS, _HEADS.c.discussion_id == Note.discussion_id))
    .where(*_OF_REQUEST).order_by(_HEADS.c.head_id, Note.id)
)  # fmt: skip
_ONE_DISCUSSION = (
    select(*COLUMNS).select_from(_SOURCE)
    .where(*_OF_REQUEST, Note.discussion_id == bindparam("discussion_id", type_=String)).order_by(Note.id)
)  # fmt: skip


def _grouped(rows) -> list[list[tuple]]:
    threads: OrderedDict[str, list[tuple]] = OrderedDict()
    for row in rows:
        threads.setdefault(row.discussion_id, []).append(parts(row))
    return list(threads.values())


async def read_discussions(reader, project_id: int, mr_id: int, offset: int, limit: int) -> tuple[int, list[list[tuple]]]:
    """(total, one page) of request MR_ID's discussions in the order they started, each the parts
    of its notes, oldest first: one statement."""
    params = {"mr_id": mr_id, "project_id": project_id, "offset": offset, "limit": limit}
    total, rows = await read_page(reader, (_DISCUSSION_COUNT, _DISCUSSION_PAGE), params)
    return total, _grouped(rows)


async def read_discussion(reader, project_id: int, mr_id: int, discussion_id: str) -> list[tuple]:
    """The parts of discussion DISCUSSION_ID's notes on request MR_ID, oldest first; 404
    `404 Discussion Not Found` when it has none."""
    found = []
    if DISCUSSION_ID.fullmatch(discussion_id):
        found = await reader.all(_ONE_DISCUSSION, {"mr_id": mr_id, "project_id": project_id, "discussion_id": discussion_id})
    if not found:
        raise NotFound("Discussion")
    return [parts(row) for row in found]


async def unresolved_count(reader, mr_id: int) -> int:
    """How many of request MR_ID's resolvable notes nobody has resolved (0: GitLab's
    `blocking_discussions_resolved`). In a statement of requests, `unresolved_notes(MergeRequest.id)`
    (db.models.merge_requests) counts the same per row."""
    return (await reader.first(_UNRESOLVED, {"mr_id": mr_id}))[0]


_UNRESOLVED = select(unresolved_notes(bindparam("mr_id", type_=Integer)))


# --- threads -------------------------------------------------------------------------------------


def start(session: Session, rt, project: Project, actor, mr: MergeRequest, body: str, position: str | None) -> Note:
    """Start a thread on MR with BODY (on a line of its diff at POSITION, `checked_position`'s JSON)."""
    thread = notes.Thread(new_discussion_id(), DIFF_NOTE if position else DISCUSSION_NOTE, position)
    return notes.comment_on_merge_request(session, rt, project, actor, mr, body, thread)


def thread_notes(session: Session, mr: MergeRequest, discussion_id: str) -> list[Note]:
    """The notes of MR's discussion DISCUSSION_ID, oldest first, loaded to change them; 404
    `404 Discussion Not Found` when it has none."""
    found = []
    if DISCUSSION_ID.fullmatch(discussion_id):
        found = list(session.scalars(
            select(Note).where(Note.merge_request_id == mr.id, Note.discussion_id == discussion_id).order_by(Note.id)
        ))  # fmt: skip
    if not found:
        raise NotFound("Discussion")
    return found


def reply(session: Session, rt, project: Project, actor, mr: MergeRequest, discussion_id: str, body: str) -> Note:
    """Add BODY to MR's discussion DISCUSSION_ID. A reply to a comment makes a thread of it (the
    comment becomes its first note, resolvable, as GitLab does); a system note takes no reply
    (400)."""
    found = thread_notes(session, mr, discussion_id)
    first = found[0]
    if first.system:
        raise Invalid.field("discussion_id", "a system note takes no replies")
    if first.type is None:
        first.type, first.resolvable = DISCUSSION_NOTE, True
    thread = notes.Thread(discussion_id, first.type, first.position)
    return notes.comment_on_merge_request(session, rt, project, actor, mr, body, thread)


def may_resolve(access, actor, mr: MergeRequest) -> None:
    """403 unless ACTOR resolves MR's threads: the request's author, or a developer and above."""
    if mr.author_id != actor.id and not access.can(policy.RESOLVE_NOTE):
        raise Forbidden()


def resolve(session: Session, access, actor, mr: MergeRequest, found: list[Note], resolved: bool) -> None:
    """Resolve (RESOLVED) or unresolve the resolvable notes of FOUND (a thread's, or one of them) on
    MR; notes resolved before keep who resolved them. 400 when none of them is resolvable."""
    may_resolve(access, actor, mr)
    resolvable = [note for note in found if note.resolvable]
    if not resolvable:
        raise Invalid.field("resolved", "the discussion is not resolvable")
    moment = utcnow()
    for note in resolvable:
        if not resolved:
            note.resolved_at = note.resolved_by_id = None
        elif note.resolved_at is None:
            note.resolved_at, note.resolved_by_id = moment, actor.id
    session.flush()


# --- a thread's position on the diff -------------------------------------------------------------

_SHA = re.compile(r"[0-9a-f]{40}")
MAX_PATH = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _path(position: dict, key: str, errors: list[str]) -> str | None:
    value = position.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_PATH or _CONTROL.search(value) or value.startswith("/"):
        errors.append(f"{key} is invalid")
        return None
    if any(part in ("", ".", "..") for part in value.split("/")):
        errors.append(f"{key} is invalid")
        return None
    return value


def _line(position: dict, key: str, errors: list[str]) -> int | None:
    value = position.get(key)
    if value is None or value == "":
        return None
    try:
        number = int(value) if not isinstance(value, bool) and isinstance(value, int | str) else None
    except ValueError:
        number = None
    if number is None or not 1 <= number <= MAX_INTEGER:
        errors.append(f"{key} is invalid")
        return None
    return number


def parsed_position(position) -> dict:
    """A diff thread's POSITION (the request's `position[...]` parameters) checked for shape: a
    `text` position, three full SHAs, a relative path without `.` or `..` (old, new or both)
    and a line number on a side or both; 400 with every reason otherwise. Paths and lines are
    checked against the diff by `checked_position`."""
    if not isinstance(position, dict):
        raise Invalid.field("position", "is invalid")
    errors: list[str] = []
    if position.get("position_type", "text") != "text":
        errors.append("position_type does not have a valid value (only text)")
    shas = {}
    for key in ("base_sha", "start_sha", "head_sha"):
        value = position.get(key)
        if not isinstance(value, str) or not _SHA.fullmatch(value.lower()):
            errors.append(f"{key} is missing or invalid")
        else:
            shas[key] = value.lower()
    old_path, new_path = _path(position, "old_path", errors), _path(position, "new_path", errors)
    old_line, new_line = _line(position, "old_line", errors), _line(position, "new_line", errors)
    if old_path is None and new_path is None and not errors:
        errors.append("new_path is missing")
    if old_line is None and new_line is None and not errors:
        errors.append("new_line or old_line is missing")
    if errors:
        raise Invalid({"position": errors})
    return {
        **shas, "old_path": old_path or new_path, "new_path": new_path or old_path, "position_type": "text",
        "old_line": old_line, "new_line": new_line,
    }  # fmt: skip


def checked_position(rt, project, mr, position) -> str:
    """POSITION (`parsed_position`) as the JSON a DiffNote keeps, if it names a line of request MR's
    changes (MR a `reads.compared` row; git only, no database): its `head_sha` is the request's
    head and its file's patch has that line (an added line has only a new number, a removed one
    only an old one, a context line both; a side not given is not compared). 400 otherwise."""
    wanted = parsed_position(position)
    found = comparison.comparison(rt, project, mr, commits=False)
    if found.head is None or found.head.id != wanted["head_sha"]:
        raise Invalid({"position": ["head_sha is not the merge request's head"]})
    for change in found.diffs:
        if wanted["new_path"] == change.new_path or wanted["old_path"] == change.old_path:
            if _has_line(change.diff, wanted["old_line"], wanted["new_line"]):
                return json.dumps(wanted)
            break
    raise Invalid({"position": ["line_code must be a valid line code of the merge request's diff"]})


def _has_line(patch: str, old_line: int | None, new_line: int | None) -> bool:
    """Whether PATCH shows a line numbered OLD_LINE on the old side and NEW_LINE on the new (either
    None: not compared); an added line has no old number, a removed one no new number."""
    for kind, old, new in diffs.numbered_lines(patch):
        at_old, at_new = (None if kind == "new" else old), (None if kind == "old" else new)
        if (old_line is None or at_old == old_line) and (new_line is None or at_new == new_line):
            return True
    return False
