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

from sqlalchemy import Integer, bindparam, func, literal, select, union_all
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload

from ..db.models import GroupMember, Project, ProjectMember, User, is_id
from ..db.queries import joined_columns, joined_part, like_pattern, matches_pattern, page_statements, read_row
from ..db.queries import read_page as read_page_of
from ..errors import Forbidden, NotFound, RecordNotFound
from ..policies import projects as policy
from . import events, users
from .identity import CONTACT_FIELDS, Contact

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


# --- v4's reads: the membership's own time and who made it; a project's members with its group's ------

# Whose memberships a v4 list reads: a project's (PROJECT), a group's (GROUP), or a project's with
# its group's, each user once at their highest level (PROJECT_ALL: `/projects/:id/members/all`).
PROJECT, GROUP, PROJECT_ALL = "project", "group", "project_all"
CREATOR = "creator_"  # the prefix of the columns of who made the membership (`joined_part`)


def _memberships(model, owner: str):
    columns = model.project_id if model is ProjectMember else model.namespace_id
    return select(model.id, model.user_id, model.access_level, model.created_at, model.created_by_id).where(
        columns == bindparam(owner, type_=Integer)
    )


def _source(kind: str):
    """The memberships of KIND as a subquery (id, user_id, access_level, created_at, created_by_id)
    and the conditions that keep one row per user."""
    if kind == PROJECT:
        return _memberships(ProjectMember, "owner_id").subquery("m"), ()
    if kind == GROUP:
        return _memberships(GroupMember, "owner_id").subquery("m"), ()
    both = union_all(
        _memberships(ProjectMember, "owner_id").add_columns(literal(0).label("source")),
        _memberships(GroupMember, "namespace_id").add_columns(literal(1).label("source")),
    ).subquery("both")
    rank = func.row_number().over(partition_by=both.c.user_id, order_by=(both.c.access_level.desc(), both.c.source))
    ranked = select(*both.c, rank.label("rank")).subquery("m")
    return ranked, (ranked.c.rank == 1,)


def _v4_parts(kind: str):
    members, conditions = _source(kind)
    users_table, creator = User.__table__, User.__table__.alias("creator")
    source = members.join(users_table, users_table.c.id == members.c.user_id).outerjoin(
        creator, creator.c.id == members.c.created_by_id
    )
    columns = (
        users_table.c.id, users_table.c.username, users_table.c.email, users_table.c.name, users_table.c.state,
        members.c.access_level, members.c.created_at.label("member_created_at"),
        *joined_columns(creator.c, CONTACT_FIELDS, CREATOR),
    )  # fmt: skip
    return members, source, columns, conditions, users_table


@functools.cache
def _v4_page_statements(kind: str, search: bool):
    """(count, page) of the memberships of KIND (`:owner_id`, and `:namespace_id` for
    PROJECT_ALL), oldest first; SEARCH: usernames or names containing `:pattern`."""
    members, source, columns, conditions, users_table = _v4_parts(kind)
    if search:
        conditions = (*conditions, matches_pattern("pattern", users_table.c.username, users_table.c.name))
    order = (members.c.user_id,) if kind == PROJECT_ALL else (members.c.id,)
    return page_statements(columns, source, conditions, order)


@functools.cache
def _v4_one_statement(kind: str):
    members, source, columns, conditions, _ = _v4_parts(kind)
    return select(*columns).select_from(source).where(*conditions, members.c.user_id == bindparam("user_id", type_=Integer))


def _v4_params(kind: str, owner_id: int, namespace_id: int | None) -> dict:
    return {"owner_id": owner_id, "namespace_id": namespace_id} if kind == PROJECT_ALL else {"owner_id": owner_id}


async def read_v4_page(reader, kind: str, owner_id: int, query: str | None, offset: int, limit: int,
                       namespace_id: int | None = None) -> tuple[int, list]:  # fmt: skip
    """(total, (row, creator) of one page) of the memberships of KIND of project or group OWNER_ID
    (NAMESPACE_ID: the project's namespace, for PROJECT_ALL); `entities.v4.members.member` renders
    them. CREATOR is a `Contact`, or None when unknown."""
    params = {**_v4_params(kind, owner_id, namespace_id), "pattern": like_pattern(query) if query else None, "offset": offset, "limit": limit}
    total, rows = await read_page_of(reader, _v4_page_statements(kind, bool(query)), params)
    return total, [(row, joined_part(Contact, row, CREATOR)) for row in rows]


async def read_v4_one(reader, kind: str, owner_id: int, user_id: int, namespace_id: int | None = None):
    """USER_ID's membership of KIND, as `read_v4_page` gives it; 404 `404 Not found` when none."""
    params = {**_v4_params(kind, owner_id, namespace_id), "user_id": user_id}
    row = await read_row(reader, _v4_one_statement(kind), params, user_id, RecordNotFound)
    return row, joined_part(Contact, row, CREATOR)


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
