"""Namespaces: the personal namespaces of users and the groups that hold projects."""

from __future__ import annotations

import functools

from sqlalchemy import Integer, bindparam, func, select
from sqlalchemy.orm import Session

from ..db.models import OWNER, GroupMember, Namespace, parse_id
from ..db.queries import like_pattern, matches_pattern, page_statements, read_page
from .projects import member_namespaces
from .users import namespace_path_errors, namespace_path_taken

_COLUMNS = (Namespace.id, Namespace.path, Namespace.kind, Namespace.name, Namespace.owner_id)


def _owned(user_id):
    """Ids of USER_ID's personal namespace and of the groups they own."""
    personal = select(Namespace.id).where(Namespace.owner_id == user_id, Namespace.kind == "user")
    groups = select(GroupMember.namespace_id).where(GroupMember.user_id == user_id, GroupMember.access_level == OWNER)
    return personal.union(groups)


def _seen(every: bool, owned_only: bool) -> list:
    """The conditions of the namespaces the caller (`:user_id`) sees: EVERY one (an admin's), else
    their own and their groups'; OWNED_ONLY: their own and the groups they own."""
    user_id = bindparam("user_id", type_=Integer)
    if owned_only:
        return [Namespace.id.in_(_owned(user_id))]
    return [] if every else [Namespace.id.in_(member_namespaces(user_id))]


@functools.cache
def _visible_statements(every: bool, search: bool, owned_only: bool = False):
    """(count, page) of the namespaces the caller sees (`_seen`), oldest first; SEARCH: paths or
    names containing `:pattern`."""
    conditions = _seen(every, owned_only)
    if search:
        conditions.append(matches_pattern("pattern", Namespace.path, Namespace.name))
    return page_statements(_COLUMNS, Namespace.__table__, conditions, (Namespace.id,))


async def read_visible(db, actor, search: str | None, offset: int, limit: int, owned_only: bool = False) -> tuple[int, list]:
    """(total, rows of one page) of the namespaces ACTOR may see: all for admins, else their own and
    their groups'; OWNED_ONLY: their own and the groups they own (the read path: no session)."""
    params = {"user_id": actor.id, "pattern": like_pattern(search) if search else None, "offset": offset, "limit": limit}
    return await read_page(db.loop, _visible_statements(actor.is_admin, bool(search), owned_only), params)


@functools.cache
def _one_statement(every: bool, by_id: bool):
    named = Namespace.id == bindparam("id", type_=Integer) if by_id else func.lower(Namespace.path) == bindparam("path")
    return select(*_COLUMNS).where(named, *_seen(every, owned_only=False))


async def read_one(db, actor, ident: str):
    """The namespace IDENT (an id or a path, any case) if ACTOR may see it (as in `read_visible`), or None."""
    number = parse_id(ident)
    params = {"user_id": actor.id, "id": number} if number is not None else {"user_id": actor.id, "path": ident.lower()}
    return await db.loop.first(_one_statement(actor.is_admin, number is not None), params)


def suggestions(session: Session, path: str, count: int = 1) -> list[str]:
    """Free paths like PATH (PATH1, PATH2, ...), for a client that found PATH taken."""
    found, number = [], 1
    while len(found) < count and number < 1000:
        candidate = f"{path}{number}"
        if not namespace_path_errors(candidate) and not namespace_path_taken(session, candidate):
            found.append(candidate)
        number += 1
    return found


def find(session: Session, ident: str) -> Namespace | None:
    """The namespace named by an id or a path (any case)."""
    number = parse_id(ident)
    if number is not None:
        return session.get(Namespace, number)
    return session.scalars(select(Namespace).where(func.lower(Namespace.path) == ident.lower())).first()
