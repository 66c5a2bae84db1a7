"""Namespaces: the personal namespaces of users and the groups that hold projects."""

from __future__ import annotations

import functools

from sqlalchemy import Integer, bindparam, func, select
from sqlalchemy.orm import Session

from ..db.models import Namespace, parse_id
from ..db.queries import like_pattern, matches_pattern, page_statements, read_page
from .projects import member_namespaces


@functools.cache
def _visible_statements(every: bool, search: bool):
    """(count, page) of the namespaces the caller (`:user_id`) may see, oldest first: EVERY one (an
    admin's), else their own and their groups'; SEARCH: paths or names containing `:pattern`."""
    conditions = []
    if not every:
        conditions.append(Namespace.id.in_(member_namespaces(bindparam("user_id", type_=Integer))))
    if search:
        conditions.append(matches_pattern("pattern", Namespace.path, Namespace.name))
    columns = (Namespace.id, Namespace.path, Namespace.kind, Namespace.name)
    return page_statements(columns, Namespace.__table__, conditions, (Namespace.id,))


async def read_visible(db, actor, search: str | None, offset: int, limit: int) -> tuple[int, list]:
    """(total, rows of one page) of the namespaces ACTOR may see: all for admins, else their own and
    their groups' (the read path: no session)."""
    params = {"user_id": actor.id, "pattern": like_pattern(search) if search else None, "offset": offset, "limit": limit}
    return await read_page(db.loop, _visible_statements(actor.is_admin, bool(search)), params)


def find(session: Session, ident: str) -> Namespace | None:
    """The namespace named by an id or a path (any case)."""
    number = parse_id(ident)
    if number is not None:
        return session.get(Namespace, number)
    return session.scalars(select(Namespace).where(func.lower(Namespace.path) == ident.lower())).first()
