"""Project activity: one function records every kind of event; GitLab's action codes and names."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, joinedload

from ..db.models import Event, Note, Project, User, utcnow
from ..db.queries import counted_page
from ..git.refs import ZERO_SHA

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


def page(session: Session, project: Project, offset: int, limit: int) -> tuple[int, list[Event]]:
    """Events of PROJECT with an author, newest first."""
    query = (
        select(Event)
        .join(User, User.id == Event.author_id)
        .where(Event.project_id == project.id)
        .options(joinedload(Event.author))
    )
    return counted_page(session, query, offset, limit, Event.id.desc())


def notes_of(session: Session, rows: list[Event]) -> dict[int, Note]:
    """{note id: note} of the comment events among ROWS (one query)."""
    ids = {row.target_id for row in rows if row.target_type == "Note" and row.target_id is not None}
    if not ids:
        return {}
    found = session.scalars(select(Note).where(Note.id.in_(ids)).options(joinedload(Note.author)))
    return {note.id: note for note in found}
