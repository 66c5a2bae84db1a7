"""A project's protected branches: one read, name -> row, run in a session's transaction (it sees
the transaction's changes) or on the event loop, and the writes.

A row carries `id`, `name`, the access levels (`push_access_level`, `merge_access_level`,
`unprotect_access_level`: policies/branches.py says what each grants), `allow_force_push`, and
API v3's flags derived from the levels (`developers_can_push`, `developers_can_merge`).

Everything that asks whether a branch is protected reads it here: the branches APIs and pages,
the push path (on POST only: an advertisement needs no rules), merge request acceptance, the files
service and the default branch a first push adopts.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Integer, Row, bindparam, delete, select, update
from sqlalchemy.orm import Session

from ..db.models import ProtectedBranch
from ..errors import BadRequest, Conflict, Forbidden, NotFound
from ..git.branches import matches
from ..git.refs import is_branch_name
from ..policies import branches as policy
from .repository import ProjectRef

_PROTECTIONS = select(
    ProtectedBranch.id,
    ProtectedBranch.name,
    ProtectedBranch.push_access_level,
    ProtectedBranch.merge_access_level,
    ProtectedBranch.unprotect_access_level,
    ProtectedBranch.allow_force_push,
    ProtectedBranch.developers_can_push.label("developers_can_push"),
    ProtectedBranch.developers_can_merge.label("developers_can_merge"),
).where(ProtectedBranch.project_id == bindparam("project_id", type_=Integer))


class Protections(dict):
    """A project's protections: name (or wildcard) -> row. Asked about a branch, `get(branch)` and
    `branch in` answer with every row that covers it (`policies.branches.applicable`: its own
    name's and its wildcards'); `exact(name)` is the row of that name alone."""

    def get(self, name, default=None):
        found = policy.applicable(self, name)
        return default if found is None else found

    def __contains__(self, name) -> bool:
        return policy.applicable(self, name) is not None

    def exact(self, name: str) -> Row | None:
        return dict.get(self, name)


def protections(session: Session, project: ProjectRef) -> Protections:
    """PROJECT's protected branches, in SESSION's transaction."""
    return _by_name(session.execute(_PROTECTIONS, {"project_id": project.id}))


async def read_protections(db, project_id: int) -> Protections:
    """`protections` on the read path (`Database.loop`)."""
    return _by_name(await db.loop.all(_PROTECTIONS, {"project_id": project_id}))


def _by_name(rows) -> Protections:
    return Protections((row.name, row) for row in rows)


def protect(session: Session, project: ProjectRef, name: str, developers_can_push: bool | None = None) -> None:
    """Protect branch NAME of PROJECT (API v3, the settings page, the default branch of a first
    push); DEVELOPERS_CAN_PUSH: None keeps what it was (false for a new one), otherwise it sets the
    push and merge levels (developers, or maintainers)."""
    if protections(session, project).exact(name) is None:
        session.add(ProtectedBranch(project_id=project.id, name=name, developers_can_push=bool(developers_can_push)))
    elif developers_can_push is not None:
        level = policy.DEVELOPERS if developers_can_push else policy.MAINTAINERS
        session.execute(_one(update(ProtectedBranch), project.id, name)
                        .values(push_access_level=level, merge_access_level=level))  # fmt: skip
    session.flush()


def unprotect(session: Session, project: ProjectRef, name: str) -> None:
    session.execute(_one(delete(ProtectedBranch), project.id, name))


def _one(statement, project_id: int, name: str):
    return statement.where(ProtectedBranch.project_id == project_id, ProtectedBranch.name == name)


# --- API v4: a protection with its levels --------------------------------------------------------


@dataclass(frozen=True)
class Levels:
    """What API v4 sets on a protection; None leaves a level as it is (the default for a new one)."""

    push: int | None = None
    merge: int | None = None
    unprotect: int | None = None
    allow_force_push: bool | None = None

    def values(self) -> dict:
        given = {"push_access_level": self.push, "merge_access_level": self.merge,
                 "unprotect_access_level": self.unprotect, "allow_force_push": self.allow_force_push}  # fmt: skip
        return {column: value for column, value in given.items() if value is not None}


def searched(found: dict[str, Row], search: str | None) -> list[Row]:
    """The rows of FOUND (`protections`) whose names match SEARCH (GitLab's name search), by name."""
    return sorted((row for row in found.values() if matches(row.name, search)), key=lambda row: row.name)


def get(session: Session, project: ProjectRef, name: str) -> Row:
    """The protection of branch NAME; 404 `Protected branch Not Found` without one."""
    found = protections(session, project).exact(name)
    if found is None:
        raise NotFound("Protected branch")
    return found


def create(session: Session, project: ProjectRef, name: str, levels: Levels) -> Row:
    """Protect branch NAME (which need not exist yet; `*` in it stands for any text) with LEVELS; 409
    when that name is protected already (GitLab's `Protected branch 'x' already exists`), 400 for a
    name no branch could match."""
    if not is_branch_name(name.replace("*", "x")):
        raise BadRequest("Branch name is invalid")
    if protections(session, project).exact(name) is not None:
        raise Conflict(f"Protected branch '{name}' already exists")
    session.add(ProtectedBranch(project_id=project.id, name=name, **levels.values()))
    session.flush()
    return protections(session, project)[name]


def change(session: Session, project: ProjectRef, name: str, levels: Levels) -> Row:
    """Change the levels of branch NAME's protection; 404 without one."""
    get(session, project, name)
    if levels.values():
        session.execute(_one(update(ProtectedBranch), project.id, name).values(**levels.values()))
    return protections(session, project)[name]


def remove(session: Session, project: ProjectRef, name: str, access, admin: bool) -> None:
    """Unprotect branch NAME, when the caller's standing meets its unprotect level (403 otherwise);
    404 without a protection."""
    found = get(session, project, name)
    if not policy.may_unprotect(access, found, admin):
        raise Forbidden(policy.NO_UNPROTECT)
    unprotect(session, project, name)

