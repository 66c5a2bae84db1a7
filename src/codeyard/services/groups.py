"""Groups: namespaces of kind 'group' that hold projects and have members of their own."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.orm import Session

from ..db.models import OWNER, GroupMember, Namespace, utcnow
from ..errors import Conflict, Forbidden, Invalid
from . import settings as settings_service
from .users import namespace_path_errors, namespace_path_taken

GROUP_KIND = "group"
NAME_PATTERN = re.compile(r"[\w\-\u2010-\u2015. ]*")
NAME_MESSAGE = "can contain only letters, digits, '_', '.', dash and space."


def name_errors(name: str) -> list[str]:
    errors = []
    if len(name) > 255:
        errors.append("is too long (maximum is 255 characters)")
    if not NAME_PATTERN.fullmatch(name):
        errors.append(NAME_MESSAGE)
    return errors


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
