"""Which projects a caller may read, in SQL: the one condition every list of projects filters by.

It states `policies.projects.project_access`'s READ_PROJECT for a list (tests/db/test_visibility_lists.py
holds the two together over every role, visibility and list): admins read every project; anybody
else the projects they are a member of (personal, through a group, directly) and those open to
them (`:min_level` up: internal and public, public only for external users); anonymous visitors
the public ones. Statements built with it bind the caller as `:user_id` and `:min_level` (`params`).
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Integer, bindparam, or_, true

from ..db.models import Project
from ..policies import projects as policy
from . import projects as project_service

USER_ID = bindparam("user_id", type_=Integer)
MIN_LEVEL = bindparam("min_level", type_=Integer)
# Who reads a list: the shapes of the condition (a statement is built once per shape).
ANONYMOUS, SIGNED_IN, ADMIN = "anonymous", "signed in", "admin"


def viewer(user, admin_reads_every: bool = True) -> str:
    """USER's shape of the condition; an admin reads as SIGNED_IN where a list treats admins as
    anybody else (not ADMIN_READS_EVERY: GitLab's name search)."""
    if user is None:
        return ANONYMOUS
    return ADMIN if user.is_admin and admin_reads_every else SIGNED_IN


def readable(shape: str) -> ColumnElement[bool]:
    """The condition on projects a caller of SHAPE (`viewer`) may read."""
    if shape == ADMIN:
        return true()
    if shape == ANONYMOUS:  # no memberships, and public the only open level
        return Project.visibility_level == policy.PUBLIC
    return or_(Project.id.in_(project_service.authorized(USER_ID)), Project.visibility_level >= MIN_LEVEL)


def params(user) -> dict:
    """The caller's parameters of `readable` (USER None: anonymous)."""
    return {"user_id": None if user is None else user.id, "min_level": policy.lowest_open_level(user)}
