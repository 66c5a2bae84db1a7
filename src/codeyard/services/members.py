"""Direct members of a project: list, find, add, change level, remove.

Who may call these is the API's business (abilities read_project_member and admin_project_member);
the rules here are about the membership itself:
- adding someone who is already a member changes nothing (the level is not updated);
- the owner of a personal project (the namespace owner) stays a member with at least master
  access: they cannot be removed, added or set below master;
- joining records a "joined" event (not for the namespace owner), leaving a "left" event, both
  authored by the member.
"""

from __future__ import annotations

import functools

from sqlalchemy import Integer, bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload

from ..db.models import Project, ProjectMember, User, is_id
from ..db.queries import like_pattern, matches_pattern, page_statements, read_row
from ..db.queries import read_page as read_page_of
from ..errors import Forbidden, NotFound, RecordNotFound
from ..policies import projects as policy
from . import events, users

OWNER_REMOVED = "the owner of a personal project cannot be removed"
OWNER_DOWNGRADED = "the owner of a personal project must keep at least master access"


def owns_namespace(project: Project, user_id: int) -> bool:
    """Whether USER_ID owns the personal namespace PROJECT lives in."""
    namespace = project.namespace
    return namespace.kind == "user" and namespace.owner_id == user_id


# --- reads: statements built once, run by any reader (`db/readers.py`) ---------------------------


def _of(model):
    """The condition on MODEL (ProjectMember or GroupMember) naming the memberships of `:owner_id`."""
    return (model.project_id if model is ProjectMember else model.namespace_id) == bindparam("owner_id", type_=Integer)


def _member_columns(model) -> tuple:
    return (User.id, User.username, User.email, User.name, User.state, User.created_at, model.access_level)


@functools.cache
def _page_statements(model, search: bool):
    """(count, page) of the memberships of one project or group (MODEL), oldest first; SEARCH:
    usernames or names containing `:pattern`."""
    conditions = [_of(model)]
    if search:
        conditions.append(matches_pattern("pattern", User.username, User.name))
    source = model.__table__.join(User.__table__, User.id == model.user_id)
    return page_statements(_member_columns(model), source, conditions, (model.id,))


@functools.cache
def _one_statement(model):
    source = model.__table__.join(User.__table__, User.id == model.user_id)
    return select(*_member_columns(model)).select_from(source).where(_of(model), model.user_id == bindparam("user_id", type_=Integer))


async def read_page(reader, model, owner_id: int, query: str | None, offset: int, limit: int) -> tuple[int, list]:
    """(total, rows of one page) of the direct members of project or group OWNER_ID (MODEL:
    ProjectMember or GroupMember); `member_entity` renders a row."""
    params = {"owner_id": owner_id, "pattern": like_pattern(query) if query else None, "offset": offset, "limit": limit}
    return await read_page_of(reader, _page_statements(model, bool(query)), params)


async def read_one(reader, model, owner_id: int, user_id: int):
    """The row of USER_ID's membership of project or group OWNER_ID; 404 `404 Not found` when none."""
    return await read_row(reader, _one_statement(model), {"owner_id": owner_id, "user_id": user_id}, user_id, RecordNotFound)


def find(session: Session, project: Project, user_id: int) -> ProjectMember | None:
    if not is_id(user_id):
        return None
    return session.scalars(
        select(ProjectMember)
        .where(ProjectMember.project_id == project.id, ProjectMember.user_id == user_id)
        .options(joinedload(ProjectMember.user))
    ).first()


def get(session: Session, project: Project, user_id: int) -> ProjectMember:
    """The membership of USER_ID; 404 `404 Not found` when there is none."""
    member = find(session, project, user_id)
    if member is None:
        raise RecordNotFound()
    return member


def _check_owner_level(project: Project, user_id: int, level: int) -> None:
    if level < policy.MASTER and owns_namespace(project, user_id):
        raise Forbidden(OWNER_DOWNGRADED)


def add(session: Session, actor, project: Project, user_id: int, level: int) -> ProjectMember:
    """USER_ID's membership at LEVEL; an existing membership is returned unchanged."""
    existing = find(session, project, user_id)
    if existing is not None:
        return existing
    user = users.find(session, user_id)
    if user is None:
        raise NotFound("User")
    _check_owner_level(project, user_id, level)
    member = ProjectMember(project_id=project.id, user_id=user_id, access_level=level, created_by_id=actor.id, user=user)
    try:
        with session.begin_nested():
            session.add(member)
    except IntegrityError:
        # A concurrent request added the same member first: theirs is the membership.
        existing = find(session, project, user_id)
        if existing is None:
            raise
        return existing
    if not owns_namespace(project, user_id):
        events.record(session, project, user_id, events.JOINED)
    return member


def change_level(session: Session, project: Project, user_id: int, level: int) -> ProjectMember:
    member = get(session, project, user_id)
    _check_owner_level(project, user_id, level)
    member.access_level = level
    session.flush()
    return member


def remove(session: Session, project: Project, user_id: int) -> ProjectMember | None:
    """Remove USER_ID from PROJECT; None when they were not a member."""
    member = find(session, project, user_id)
    if member is None:
        return None
    if owns_namespace(project, user_id):
        raise Forbidden(OWNER_REMOVED)
    session.delete(member)
    session.flush()
    events.record(session, project, user_id, events.LEFT)
    return member
