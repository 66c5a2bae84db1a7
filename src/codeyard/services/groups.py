"""Groups: namespaces of kind 'group' that hold projects and have members of their own."""

from __future__ import annotations

import functools
import re
from typing import Any

from sqlalchemy import Integer, bindparam, func, or_, select
from sqlalchemy.orm import Session, joinedload

from ..db.models import (
    INTERNAL,
    OWNER,
    PUBLIC,
    GroupMember,
    Namespace,
    Project,
    Tombstone,
    is_id,
    parse_id,
    utcnow,
)
from ..db.queries import like_pattern, matches_pattern, page_statements, read_page
from ..errors import Conflict, Forbidden, Invalid, NotFound, RecordNotFound
from ..policies import groups as group_policy
from . import project_reads, projects, users, visibility
from . import settings as settings_service
from .naming import format_errors
from .users import namespace_path_errors, namespace_path_taken

GROUP_KIND = "group"
NAME_PATTERN = re.compile(r"[\w\-\u2010-\u2015. ]*")
NAME_MESSAGE = "can contain only letters, digits, '_', '.', dash and space."


def name_errors(name: str) -> list[str]:
    return format_errors(name, NAME_PATTERN, NAME_MESSAGE)


def create(session: Session, actor, attrs: dict[str, Any]) -> Namespace:
    """A new group; ACTOR becomes its owner. 403 without the right to create groups, 400 for invalid
    fields, 409 when the path is taken by a user or another group."""
    if not (actor.is_admin or actor.can_create_group):
        raise Forbidden()
    name, path = attrs["name"], attrs["path"]
    errors = {}
    if found := name_errors(name):
        errors["name"] = found
    if found := namespace_path_errors(path):
        errors["path"] = found
    if errors:
        raise Invalid(errors)
    if namespace_path_taken(session, path):
        raise Conflict({"path": ["has already been taken"]})
    settings = settings_service.load(session)
    level = attrs.get("visibility_level")
    if level is None:
        level = settings.default_group_visibility
    if not actor.is_admin and settings_service.restricted_level(settings, level):
        raise Invalid({"visibility_level": [f"{settings_service.VISIBILITY_NAMES[level]} has been restricted by your GitLab administrator"]})
    now = utcnow()
    group = Namespace(
        kind=GROUP_KIND,
        name=name,
        path=path,
        description=attrs.get("description") or "",
        visibility_level=level,
        owner_id=None,
        created_at=now,
        updated_at=now,
    )
    session.add(group)
    session.flush()
    session.add(GroupMember(namespace_id=group.id, user_id=actor.id, access_level=OWNER, created_by_id=actor.id))
    session.flush()
    return group


# --- finding and reading --------------------------------------------------------------------------


def find(session: Session, ident: str) -> Namespace | None:
    """The group named by an id or a path (any case)."""
    query = select(Namespace).where(Namespace.kind == GROUP_KIND)
    number = parse_id(ident)
    if number is not None:
        return session.scalars(query.where(Namespace.id == number)).first()
    return session.scalars(query.where(func.lower(Namespace.path) == ident.lower())).first()


# The read path (GET requests, no session: awaited on the loop's own connections on PostgreSQL).
_GROUP_COLUMNS = (
    Namespace.id, Namespace.name, Namespace.path, Namespace.description, Namespace.visibility_level, Namespace.created_at,
)  # fmt: skip
_CALLER_LEVEL = (
    select(GroupMember.access_level)
    .where(GroupMember.namespace_id == Namespace.id, GroupMember.user_id == project_reads.USER_ID)
    .scalar_subquery()
    .label("member_level")
)
_GROUP = select(*_GROUP_COLUMNS, _CALLER_LEVEL).where(Namespace.kind == GROUP_KIND)
GROUP_BY_ID = _GROUP.where(Namespace.id == bindparam("id", type_=Integer))
GROUP_BY_PATH = _GROUP.where(func.lower(Namespace.path) == bindparam("path"))
# One project of the group the caller (not an admin) may read: reading one lets them see the group.
_SEES_A_PROJECT = (
    select(Project.id)
    .where(Project.namespace_id == bindparam("group_id", type_=Integer), visibility.readable(visibility.SIGNED_IN))
    .limit(1)
)


async def read_guarded(db, ident: str, user) -> tuple[Any, frozenset[str]]:
    """(row, what USER may do on it) of the group named by an id or a path (any case), or (None,
    nothing). The row has the group entity's columns and the caller's `member_level`."""
    number = parse_id(ident)
    statement, params = (GROUP_BY_ID, {"id": number}) if number is not None else (GROUP_BY_PATH, {"path": ident.lower()})
    params["user_id"] = None if user is None else user.id
    row = await db.loop.first(statement, params)
    if row is None:
        return None, frozenset()
    found = group_policy.group_abilities(user, row, row.member_level)
    if group_policy.READ_GROUP in found or user is None:
        return row, found
    params = {"group_id": row.id, **visibility.params(user)}
    sees = await db.loop.first(_SEES_A_PROJECT, params)
    return row, group_policy.group_abilities(user, row, row.member_level, sees_a_project=sees is not None)


# Which groups a list holds (`read_listed`): the caller's (MEMBER), every one (EVERY, an admin's),
# theirs and those they may see for their visibility (AVAILABLE), those where their level is at
# least `min_level` (AT_LEAST; owned groups are those at OWNER).
MEMBER, EVERY, AVAILABLE, AT_LEAST = "member", "every", "available", "at_least"
# The orders a list may be read in (v4's `order_by`), each ending with the id.
ORDERS = {"id": (Namespace.id,), "name": (Namespace.name, Namespace.id), "path": (Namespace.path, Namespace.id)}


def _memberships(level: bool):
    query = select(GroupMember.namespace_id).where(GroupMember.user_id == project_reads.USER_ID)
    if level:
        query = query.where(GroupMember.access_level >= bindparam("min_level", type_=Integer))
    return Namespace.id.in_(query)


@functools.cache
def _visible_statements(scope: str, search: bool, order: tuple[str, bool] = ("id", False)):
    """(count, page) of the groups of SCOPE for the caller (`:user_id`), in ORDER (a key of ORDERS
    and whether descending); SEARCH: names or paths containing `:pattern`."""
    conditions = [Namespace.kind == GROUP_KIND]
    if scope == MEMBER:
        conditions.append(_memberships(level=False))
    elif scope == AT_LEAST:
        conditions.append(_memberships(level=True))
    elif scope == AVAILABLE:
        visible = Namespace.visibility_level >= bindparam("min_visibility", type_=Integer)
        conditions.append(or_(_memberships(level=False), visible))
    if search:
        conditions.append(matches_pattern("pattern", Namespace.name, Namespace.path))
    key, descending = order
    columns = ORDERS[key]
    return page_statements(_GROUP_COLUMNS, Namespace.__table__, conditions, [c.desc() for c in columns] if descending else columns)


async def read_visible(db, user, search: str | None, offset: int, limit: int) -> tuple[int, list]:
    """(total, rows of one page) of the groups USER belongs to (every group for admins), oldest first."""
    return await read_listed(db, user, EVERY if user.is_admin else MEMBER, search=search, offset=offset, limit=limit)


async def read_listed(db, user, scope: str, *, search: str | None, offset: int, limit: int, min_level: int = 0,
                      order: tuple[str, bool] = ("id", False)) -> tuple[int, list]:  # fmt: skip
    """(total, rows of one page) of the groups of SCOPE for USER (MIN_LEVEL: AT_LEAST's level). A
    group AVAILABLE to a user is theirs, public, or internal when they are not external; to an
    anonymous caller (USER None), public."""
    params = {
        "user_id": None if user is None else user.id,  # None: anonymous, a member of nothing
        "pattern": like_pattern(search) if search else None,
        "min_level": min_level,
        "min_visibility": PUBLIC if user is None or user.external else INTERNAL,
        "offset": offset,
        "limit": limit,
    }
    return await read_page(db.loop, _visible_statements(scope, bool(search), order), params)


# --- changing -------------------------------------------------------------------------------------


def update(session: Session, actor, group: Namespace, attrs: dict[str, Any]) -> Namespace:
    """Rename, move or re-describe a group; invalid or taken values answer 400 with the fields."""
    errors: dict[str, list[str]] = {}
    if "name" in attrs and (found := name_errors(attrs["name"])):
        errors["name"] = found
    if "path" in attrs and attrs["path"].lower() != group.path.lower():
        if found := namespace_path_errors(attrs["path"]):
            errors["path"] = found
        elif namespace_path_taken(session, attrs["path"], except_namespace_id=group.id):
            errors["path"] = ["has already been taken"]
    level = attrs.get("visibility_level")
    if level is not None and level != group.visibility_level:
        settings = settings_service.load(session)
        if not actor.is_admin and settings_service.restricted_level(settings, level):
            errors["visibility_level"] = [f"{settings_service.VISIBILITY_NAMES[level]} has been restricted by your GitLab administrator"]
        widest = session.scalar(select(func.max(Project.visibility_level)).where(Project.namespace_id == group.id))
        if widest is not None and widest > level:
            errors["visibility_level"] = [
                f"{settings_service.VISIBILITY_NAMES[level]} is not allowed since this group contains "
                f"{settings_service.VISIBILITY_NAMES[widest]} projects"
            ]
    if errors:
        raise Invalid(errors)
    for key in ("name", "path", "description", "visibility_level"):
        if key in attrs and attrs[key] is not None:
            setattr(group, key, attrs[key])
    session.flush()
    return group


def delete(session: Session, rt, actor, group: Namespace) -> None:
    """The group with its projects (files removed after commit) and memberships; a tombstone stays."""
    projects.delete_all_in(session, rt, actor, group.id)
    session.add(Tombstone(kind=GROUP_KIND, object_id=group.id, label=group.path, deleted_by_id=actor.id))
    session.delete(group)
    session.flush()


def tombstone(session: Session, ident: str) -> Tombstone | None:
    query = select(Tombstone).where(Tombstone.kind == GROUP_KIND)
    number = parse_id(ident)
    if number is not None:
        query = query.where(Tombstone.object_id == number)
    else:
        query = query.where(func.lower(Tombstone.label) == ident.lower())
    return session.scalars(query.order_by(Tombstone.deleted_at.desc())).first()


# --- members --------------------------------------------------------------------------------------

LAST_OWNER = "a group must keep at least one owner"


def find_member(session: Session, group: Namespace, user_id: int) -> GroupMember | None:
    if not is_id(user_id):
        return None
    return session.scalars(
        select(GroupMember)
        .where(GroupMember.namespace_id == group.id, GroupMember.user_id == user_id)
        .options(joinedload(GroupMember.user))
    ).first()


def get_member(session: Session, group: Namespace, user_id: int) -> GroupMember:
    member = find_member(session, group, user_id)
    if member is None:
        raise RecordNotFound()
    return member


def add_member(session: Session, actor, group: Namespace, user_id: int, level: int) -> GroupMember:
    if find_member(session, group, user_id) is not None:
        raise Conflict("Already exists")
    user = users.find(session, user_id)
    if user is None:
        raise NotFound("User")
    member = GroupMember(namespace_id=group.id, user_id=user_id, access_level=level, created_by_id=actor.id, user=user)
    session.add(member)
    session.flush()
    return member


def _other_owners(session: Session, group: Namespace, user_id: int) -> int:
    return session.scalar(
        select(func.count(GroupMember.id)).where(
            GroupMember.namespace_id == group.id, GroupMember.access_level == OWNER, GroupMember.user_id != user_id
        )
    )


def change_member_level(session: Session, group: Namespace, user_id: int, level: int) -> GroupMember:
    member = get_member(session, group, user_id)
    if member.access_level == OWNER and level != OWNER and _other_owners(session, group, user_id) == 0:
        raise Forbidden(LAST_OWNER)
    member.access_level = level
    session.flush()
    return member


def remove_member(session: Session, group: Namespace, user_id: int) -> GroupMember | None:
    member = find_member(session, group, user_id)
    if member is None:
        return None
    if member.access_level == OWNER and _other_owners(session, group, user_id) == 0:
        raise Forbidden(LAST_OWNER)
    session.delete(member)
    session.flush()
    return member
