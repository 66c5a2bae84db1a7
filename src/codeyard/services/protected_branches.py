"""A project's protected branches: one read, name -> row (`name`, `developers_can_push`), run in
a session's transaction (it sees the transaction's changes) or on the event loop, and the writes.

Everything that asks whether a branch is protected reads it here: the branches API and pages, the
push path (on POST only: an advertisement needs no rules), merge request acceptance, the files
service and the default branch a first push adopts.
"""

from __future__ import annotations

from sqlalchemy import Integer, Row, bindparam, delete, select, update
from sqlalchemy.orm import Session

from ..db.models import ProtectedBranch
from .repository import ProjectRef

_PROTECTIONS = select(ProtectedBranch.name, ProtectedBranch.developers_can_push).where(
    ProtectedBranch.project_id == bindparam("project_id", type_=Integer)
)


def protections(session: Session, project: ProjectRef) -> dict[str, Row]:
    """name -> row of PROJECT's protected branches, in SESSION's transaction."""
    return _by_name(session.execute(_PROTECTIONS, {"project_id": project.id}))


async def read_protections(db, project_id: int) -> dict[str, Row]:
    """`protections` on the read path (`Database.loop`)."""
    return _by_name(await db.loop.all(_PROTECTIONS, {"project_id": project_id}))


def _by_name(rows) -> dict[str, Row]:
    return {row.name: row for row in rows}


def protect(session: Session, project: ProjectRef, name: str, developers_can_push: bool | None = None) -> None:
    """Protect branch NAME of PROJECT; DEVELOPERS_CAN_PUSH: None keeps what it was (false for a new one)."""
    if name not in protections(session, project):
        session.add(ProtectedBranch(project_id=project.id, name=name, developers_can_push=bool(developers_can_push)))
    elif developers_can_push is not None:
        session.execute(_one(update(ProtectedBranch), project.id, name).values(developers_can_push=developers_can_push))
    session.flush()


def unprotect(session: Session, project: ProjectRef, name: str) -> None:
    session.execute(_one(delete(ProtectedBranch), project.id, name))


def _one(statement, project_id: int, name: str):
    return statement.where(ProtectedBranch.project_id == project_id, ProtectedBranch.name == name)
