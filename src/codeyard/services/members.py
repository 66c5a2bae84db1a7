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

from sqlalchemy import BigInteger, Integer, bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, contains_eager, joinedload

from ..db.models import Project, ProjectMember, User, is_id
from ..db.queries import counted_page, like_pattern, matches_pattern, matches_text
from ..errors import Forbidden, NotFound, RecordNotFound
from ..policies import projects as policy
from . import events, users

OWNER_REMOVED = "the owner of a personal project cannot be removed"
OWNER_DOWNGRADED = "the owner of a personal project must keep at least master access"


def owns_namespace(project: Project, user_id: int) -> bool:
    """Whether USER_ID owns the personal namespace PROJECT lives in."""
    namespace = project.namespace
    return namespace.kind == "user" and namespace.owner_id == user_id


def membership_page(session: Session, model, of, query: str | None, offset: int, limit: int):
    """(total, one page) of the MODEL rows (project or group memberships) that OF selects, in the
    order they were made, with their users; QUERY keeps usernames or names containing it."""
    statement = select(model).join(User, User.id == model.user_id).where(of).options(contains_eager(model.user))
    if query:
        statement = statement.where(matches_text(query, User.username, User.name))
    return counted_page(session, statement, offset, limit, model.id.asc())


def page(session: Session, project: Project, query: str | None, offset: int, limit: int) -> tuple[int, list[ProjectMember]]:
    """PROJECT's direct members (see `membership_page`)."""
    return membership_page(session, ProjectMember, ProjectMember.project_id == project.id, query, offset, limit)


# --- the read path: GET requests, no session (`Database.loop_all`: on PostgreSQL the round trip
# does not hold the loop) ----------------------------------------------------------------------------

_MEMBER_COLUMNS = (User.id, User.username, User.email, User.name, User.state, User.created_at, ProjectMember.access_level)
_MEMBERS = ProjectMember.__table__.join(User.__table__, User.id == ProjectMember.user_id)
_OF_PROJECT = ProjectMember.project_id == bindparam("project_id", type_=Integer)
_ONE = select(*_MEMBER_COLUMNS).select_from(_MEMBERS).where(_OF_PROJECT, ProjectMember.user_id == bindparam("user_id", type_=Integer))


@functools.cache
def _page_statements(search: bool):
    """(count, page) of a project's members, oldest membership first; each row of the page carries
    the total (a count is needed only past the last page). SEARCH: usernames or names containing
    `:pattern`."""
    conditions = [_OF_PROJECT]
    if search:
        conditions.append(matches_pattern("pattern", User.username, User.name))
    count = select(func.count()).select_from(_MEMBERS).where(*conditions)
    page = (
        select(*_MEMBER_COLUMNS, count.correlate(None).scalar_subquery().label("total")).select_from(_MEMBERS).where(*conditions)
        .order_by(ProjectMember.id).limit(bindparam("limit", type_=Integer))
        .offset(bindparam("offset", type_=BigInteger))  # a page number up to 2**31 - 1 times 100
    )  # fmt: skip
    return count, page


async def read_page(db, project_id: int, query: str | None, offset: int, limit: int) -> tuple[int, list]:
    """(total, rows of one page) of PROJECT_ID's direct members (`member_entity` renders a row)."""
    count, page = _page_statements(bool(query))
    params = {"project_id": project_id, "pattern": like_pattern(query) if query else None, "offset": offset, "limit": limit}
    rows = await db.loop_all(page, params)
    if rows:
        return rows[0].total, rows
    return ((await db.loop_first(count, params))[0] if offset else 0), rows


async def read_one(db, project_id: int, user_id: int):
    """The row of USER_ID's membership of PROJECT_ID; 404 `404 Not found` when there is none."""
    row = await db.loop_first(_ONE, {"project_id": project_id, "user_id": user_id}) if is_id(user_id) else None
    if row is None:
        raise RecordNotFound()
    return row


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
