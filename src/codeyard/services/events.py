"""Project activity: one function records every kind of event; GitLab's action codes and names."""

from __future__ import annotations

from collections import namedtuple

from sqlalchemy import Integer, and_, bindparam
from sqlalchemy.orm import Session, aliased

from ..db.models import Event, Note, Project, User, utcnow
from ..db.models.merge_requests import noteable_type_of
from ..db.queries import api_text, joined_columns, joined_part, page_statements
from ..db.queries import read_page as read_page_of
from ..git.refs import HEADS, TAGS, ZERO_SHA
from .identity import CONTACT_FIELDS, Contact

CREATED, UPDATED, CLOSED, REOPENED, PUSHED, COMMENTED, MERGED, JOINED, LEFT, DESTROYED = range(1, 11)
_NAMES = {CLOSED: "closed", MERGED: "accepted", JOINED: "joined", LEFT: "left", DESTROYED: "destroyed", COMMENTED: "commented on"}


def record(
    session: Session,
    project: Project,
    author_id: int | None,
    action: int,
    *,
    target_id: int | None = None,
    target_type: str | None = None,
    title: str | None = None,
    data: dict | None = None,
) -> Event:
    """Store an event and mark the project active."""
    now = utcnow()
    event = Event(
        project_id=project.id,
        author_id=author_id,
        action=action,
        target_id=target_id,
        target_type=target_type,
        title=title,
        data=data,
        created_at=now,
    )
    session.add(event)
    project.last_activity_at = now
    return event


def action_name(event: Event) -> str:
    if event.action == PUSHED:
        data = event.data or {}
        if data.get("before") == ZERO_SHA:
            return "pushed new"
        if data.get("after") == ZERO_SHA:
            return "deleted"
        return "pushed to"
    if event.action == CREATED and event.target_type is None:
        return "created"
    return _NAMES.get(event.action, "opened")


def pushed_ref(event: Event) -> tuple[str, str] | None:
    """(ref type, ref name) of a push event, as GitLab's `ref_type`/`ref_name`: ("branch",
    "master"), ("tag", "v1.0"); None for other events."""
    if event.action != PUSHED:
        return None
    ref = (event.data or {}).get("ref") or ""
    for prefix, kind in ((HEADS, "branch"), (TAGS, "tag")):
        if ref.startswith(prefix):
            return kind, ref[len(prefix) :]
    return None


# --- the read path: a page of a project's events, no session ---------------------------------------

_NOTE_FIELDS = ("id", "note", "system", "merge_request_id", "commit_id", "created_at")
_NoteColumns = namedtuple("NoteColumns", _NOTE_FIELDS)


class EventNote(namedtuple("EventNote", (*_NOTE_FIELDS, "author"))):
    """A comment event's note joined into the row, as `entities.notes.note` reads it (its author a
    `Contact` or None)."""

    __slots__ = ()

    @property
    def noteable_type(self) -> str:
        return noteable_type_of(self.commit_id)


_EVENT_AUTHOR, _NOTE_AUTHOR = aliased(User, name="event_author"), aliased(User, name="note_author")
_NOTE = aliased(Note, name="event_note")
_EVENT_COLUMNS = (
    Event.id, Event.project_id, Event.author_id, Event.action, Event.target_id, Event.target_type, Event.title,
    Event.data, api_text(Event.created_at, "created_at"),
)  # fmt: skip
_PAGE = page_statements(
    (
        *_EVENT_COLUMNS, *joined_columns(_EVENT_AUTHOR, CONTACT_FIELDS, "event_author_"),
        *joined_columns(_NOTE, _NOTE_FIELDS, "note_"), *joined_columns(_NOTE_AUTHOR, CONTACT_FIELDS, "note_author_"),
    ),
    Event.__table__.join(_EVENT_AUTHOR, _EVENT_AUTHOR.id == Event.author_id)
    .outerjoin(_NOTE, and_(Event.target_type == "Note", _NOTE.id == Event.target_id))
    .outerjoin(_NOTE_AUTHOR, _NOTE_AUTHOR.id == _NOTE.author_id),
    [Event.project_id == bindparam("project_id", type_=Integer)],
    (Event.id.desc(),),
)  # fmt: skip


async def read_page(db, project_id: int, offset: int, limit: int) -> tuple[int, list[tuple]]:
    """The project's events with an author, newest first, on the read path: (total, [(row, author,
    note)] of one page); the author a `Contact`, the note of a comment event an `EventNote` (None for
    other events, or when the note is gone)."""
    total, rows = await read_page_of(db.loop, _PAGE, {"project_id": project_id, "offset": offset, "limit": limit})
    return total, [(row, joined_part(Contact, row, "event_author_"), _note_of(row)) for row in rows]


def _note_of(row) -> EventNote | None:
    note = joined_part(_NoteColumns, row, "note_")
    return None if note is None else EventNote(*note, joined_part(Contact, row, "note_author_"))
