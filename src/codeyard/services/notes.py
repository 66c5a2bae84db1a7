"""Notes: comments on merge requests (their `comments` and their notes resource are the same rows;
`:+1:` / `:-1:` count as votes) and comments on commits, optionally on one line of the commit's
diff (reference 4.8, 10.8; GitLab 8.6 commits API). The system notes a request's changes leave are
written by `merge_requests.trail`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import Integer, String, bindparam, literal
from sqlalchemy import delete as sa_delete
from sqlalchemy.orm import Session, aliased, joinedload

from ..db.models import AwardEmoji, MergeRequest, Note, Project, User, is_id
from ..db.models.merge_requests import MERGE_REQUEST_NOTE, NOTE_AWARDABLE
from ..db.queries import api_text, joined_columns, joined_part, page_statements, read_page, read_row
from ..entities import merge_request_hooks as hook_entities
from ..entities.commits import title as commit_title
from ..errors import Forbidden, RecordNotFound
from ..git import diffs, repo
from ..policies import projects as policy
from . import events, webhooks
from .identity import CONTACT_FIELDS, Contact
from .merge_requests import reads as mr_reads
from .merge_requests import trail
from .repository import ProjectRef, path_of, reading

# --- comments on merge requests ------------------------------------------------------------------

_NOTE_AUTHOR = aliased(User, name="note_author")
_COMMENT_COLUMNS = (
    Note.id, Note.note, Note.system, Note.merge_request_id, literal(MERGE_REQUEST_NOTE).label("noteable_type"),
    api_text(Note.created_at, "created_at"), *joined_columns(_NOTE_AUTHOR, CONTACT_FIELDS, "author_"),
)  # fmt: skip
_COMMENTS = page_statements(
    _COMMENT_COLUMNS, Note.__table__.outerjoin(_NOTE_AUTHOR, _NOTE_AUTHOR.id == Note.author_id),
    [Note.merge_request_id == bindparam("mr_id", type_=Integer)], (Note.id.asc(),),
)  # fmt: skip
_ONE_COMMENT = _COMMENTS[1].order_by(None).limit(None).offset(None).where(Note.id == bindparam("note_id", type_=Integer))


async def read_comments(reader, project_id: int, mr_id: int, offset: int, limit: int) -> tuple[int, list[tuple]]:
    """Project PROJECT_ID's request MR_ID's comments, oldest first (404 `404 Not found` without the
    request): (total, [(row, author)] of one page), the author None or its columns (`Contact`)."""
    await mr_reads.require(reader, project_id, mr_id)
    total, rows = await read_page(reader, _COMMENTS, {"mr_id": mr_id, "offset": offset, "limit": limit})
    return total, [(row, joined_part(Contact, row, "author_")) for row in rows]


async def read_comment(reader, project_id: int, mr_id: int, note_id: int) -> tuple:
    """(row, author) of comment NOTE_ID on project PROJECT_ID's request MR_ID, as `read_comments`
    gives them; 404 `404 Not found` without the request or the comment."""
    await mr_reads.require(reader, project_id, mr_id)
    row = await read_row(reader, _ONE_COMMENT, {"mr_id": mr_id, "note_id": note_id}, note_id, RecordNotFound)
    return row, joined_part(Contact, row, "author_")


@dataclass(frozen=True)
class Thread:
    """Where a note goes in a request's discussions: DISCUSSION_ID's thread, as a note of TYPE
    (`DiscussionNote`, or `DiffNote` at POSITION, JSON text); a thread's notes are resolvable."""

    discussion_id: str
    type: str
    position: str | None = None


def comment_on_merge_request(session: Session, rt, project: Project, actor, mr: MergeRequest, text: str,
                             thread: Thread | None = None) -> Note:  # fmt: skip
    """Add a comment (`:+1:` / `:-1:` count as votes), a discussion of its own or a note of THREAD:
    a `commented on` event and a Note Hook."""
    note = Note(project_id=project.id, merge_request_id=mr.id, author_id=actor.id, note=text)
    if thread is not None:
        note.discussion_id, note.type, note.position = thread.discussion_id, thread.type, thread.position
        note.resolvable = True
    session.add(note)
    session.flush()
    events.record(session, project, actor.id, events.COMMENTED, target_id=note.id, target_type="Note", title=mr.title)
    view = rt.view()
    payload = hook_entities.note_payload(view, actor, project, mr, trail.attributes(session, rt, view, mr), note)
    webhooks.trigger(session, project.id, "note_events", payload)
    return note


def merge_request_note(session: Session, mr: MergeRequest, note_id: int) -> Note:
    """The request's note NOTE_ID, loaded to change it; `404 Not found` otherwise."""
    note = session.get(Note, note_id, options=[joinedload(Note.author)]) if is_id(note_id) else None
    if note is None or note.merge_request_id != mr.id:
        raise RecordNotFound()
    return note


def _may_change(access, actor, note: Note) -> None:
    """403 unless ACTOR may change NOTE: its author, or whoever administers the project's notes
    (master+); nobody changes a system note (the service's record of what happened)."""
    if note.system or (note.author_id != actor.id and not access.can(policy.ADMIN_NOTE)):
        raise Forbidden()


def update(session: Session, access, actor, note: Note, body: str) -> Note:
    """A new text for NOTE, by whoever may change it (`_may_change`)."""
    _may_change(access, actor, note)
    note.note = body
    session.flush()
    return note


def delete(session: Session, access, actor, note: Note) -> None:
    """Delete NOTE and the emoji awarded to it, by whoever may change it (`_may_change`); the rest
    of its discussion stays."""
    _may_change(access, actor, note)
    session.execute(sa_delete(AwardEmoji).where(AwardEmoji.awardable_type == NOTE_AWARDABLE, AwardEmoji.awardable_id == note.id))
    session.delete(note)
    session.flush()


# --- comments on commits -------------------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    """A line of a commit's diff: the file's new path, the line's old and new numbers, its type."""

    path: str
    old_line: int
    new_line: int
    line_type: str

    @property
    def line_code(self) -> str:
        """GitLab's line code: SHA-1 of the path, then the old and new line numbers."""
        return f"{hashlib.sha1(self.path.encode()).hexdigest()}_{self.old_line}_{self.new_line}"


def commit(rt, project: ProjectRef, sha: str) -> repo.CommitInfo:
    """The commit SHA names (a SHA, branch or tag); 404 `404 Commit Not Found`."""
    with reading(project.id, "Commit"):
        return repo.commit(path_of(rt, project), sha)


def locate(rt, project: Project, sha: str, line: tuple[str, int, str] | None) -> tuple[repo.CommitInfo, Position | None]:
    """The commit SHA names (404 `404 Commit Not Found`) and, for LINE = (path, number, type), the line
    of its diff in the file whose new path is PATH, of TYPE (`new`, `old`) at new-side NUMBER, as
    GitLab looked it up; None when there is none (a comment on the commit as a whole)."""
    found = commit(rt, project, sha)
    if line is None:
        return found, None
    path, number, line_type = line
    with reading(project.id, "Commit"):
        changes = diffs.commit_diff(path_of(rt, project), found.id)
    for change in changes:
        if change.new_path == path:
            at = diffs.line_position(change.diff, number, line_type)
            if at is not None:
                return found, Position(path, at[0], at[1], line_type)
    return found, None


_COMMENT_AUTHOR = aliased(User, name="comment_author")
_COMMIT_COMMENTS = page_statements(
    (Note.note, Note.path, Note.line, Note.line_type, api_text(Note.created_at, "created_at"),
     *joined_columns(_COMMENT_AUTHOR, CONTACT_FIELDS, "author_")),
    Note.__table__.outerjoin(_COMMENT_AUTHOR, _COMMENT_AUTHOR.id == Note.author_id),
    [Note.project_id == bindparam("project_id", type_=Integer), Note.commit_id == bindparam("sha", type_=String)],
    (Note.id.asc(),),
)  # fmt: skip


async def read_commit_comments(db, project_id: int, sha: str, offset: int, limit: int) -> tuple[int, list[tuple]]:
    """Project PROJECT_ID's comments on the commit SHA (a full id), oldest first, on the read path:
    (total, [(row, author)] of one page), the author None or its columns (`identity.Contact`)."""
    params = {"project_id": project_id, "sha": sha, "offset": offset, "limit": limit}
    total, rows = await read_page(db.loop, _COMMIT_COMMENTS, params)
    return total, [(row, joined_part(Contact, row, "author_")) for row in rows]


def comment_on_commit(session: Session, rt, project: Project, actor, info: repo.CommitInfo, text: str,
                      at: Position | None) -> Note:  # fmt: skip
    """Add a comment to the commit INFO (on the line AT, if any): a `commented on` event and a Note Hook."""
    note = Note(project_id=project.id, commit_id=info.id, author_id=actor.id, note=text,
                path=at and at.path, line=at and at.new_line, line_type=at and at.line_type)  # fmt: skip
    session.add(note)
    session.flush()
    events.record(session, project, actor.id, events.COMMENTED, target_id=note.id, target_type="Note",
                  title=commit_title(info.message))  # fmt: skip
    payload = hook_entities.commit_note_payload(rt.view(), actor, project, info, note, at and at.line_code)
    webhooks.trigger(session, project.id, "note_events", payload)
    return note
