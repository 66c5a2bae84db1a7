"""Namespaces: the personal namespaces of users and the groups that hold projects."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..db.models import GroupMember, Namespace, parse_id
from ..db.queries import counted_page, matches_text


def visible_to(session: Session, actor, search: str | None, offset: int, limit: int):
    """(total, page) of the namespaces ACTOR may see: all for admins, else their own and their groups'."""
    query = select(Namespace)
    if not actor.is_admin:
        own = (Namespace.owner_id == actor.id) & (Namespace.kind == "user")
        member_of = Namespace.id.in_(select(GroupMember.namespace_id).where(GroupMember.user_id == actor.id))
        query = query.where(own | member_of)
    if search:
        query = query.where(matches_text(search, Namespace.path, Namespace.name))
    return counted_page(session, query, offset, limit, Namespace.id)


def find(session: Session, ident: str) -> Namespace | None:
    """The namespace named by an id or a path (any case)."""
    number = parse_id(ident)
    if number is not None:
        return session.get(Namespace, number)
    return session.scalars(select(Namespace).where(func.lower(Namespace.path) == ident.lower())).first()
