"""Load a caller's memberships and ask the policies what they may do.

The rules live in `policies/`; this module only fetches what they need: one query for one project
or for a whole page of projects.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import literal_column, select, union_all
from sqlalchemy.orm import Session

from ..db.models import GroupMember, Namespace, Project, ProjectMember
from ..policies import groups as group_policy
from ..policies.projects import NO_ACCESS, Access, anonymous_access, project_access


class Membership(NamedTuple):
    access_level: int
    notification_level: int


def project_levels(session: Session, user_id: int, project: Project) -> tuple[int | None, int | None]:
    """(direct membership level, group membership level) of the user on PROJECT, in one query."""
    direct = (
        select(ProjectMember.access_level)
        .where(ProjectMember.project_id == project.id, ProjectMember.user_id == user_id)
        .scalar_subquery()
    )
    via_group = (
        select(GroupMember.access_level)
        .where(GroupMember.namespace_id == project.namespace_id, GroupMember.user_id == user_id)
        .scalar_subquery()
    )
    row = session.execute(select(direct, via_group)).one()
    return row[0], row[1] if project.namespace.kind == "group" else None


def access(session: Session, user, project: Project) -> Access:
    """What USER (a user row, or None for anonymous) may do on PROJECT."""
    if user is None:
        return anonymous_access(project)
    if user.state != "active":
        return NO_ACCESS
    project_level, group_level = project_levels(session, user.id, project)
    return project_access(user, project, project.namespace, project_level, group_level)


def memberships(
    session: Session, user_id: int, projects: list[Project]
) -> tuple[dict[int, Membership], dict[int, Membership]]:
    """The user's direct memberships by project id and group memberships by namespace id (one query)."""
    ids = [project.id for project in projects]
    group_ids = list({project.namespace_id for project in projects if project.namespace.kind == "group"})
    direct_rows = select(
        literal_column("1").label("direct"), ProjectMember.project_id, ProjectMember.access_level,
        ProjectMember.notification_level,
    ).where(ProjectMember.user_id == user_id, ProjectMember.project_id.in_(ids))  # fmt: skip
    if group_ids:
        group_rows = select(
            literal_column("0"), GroupMember.namespace_id, GroupMember.access_level, GroupMember.notification_level
        ).where(GroupMember.user_id == user_id, GroupMember.namespace_id.in_(group_ids))
        query = union_all(direct_rows, group_rows)
    else:
        query = direct_rows
    direct, via_group = {}, {}
    for is_direct, key, access_level, notification_level in session.execute(query):
        (direct if is_direct else via_group)[key] = Membership(access_level, notification_level)
    return direct, via_group


def group_memberships(session: Session, user_id: int, namespace_ids) -> dict[int, Membership]:
    if not namespace_ids:
        return {}
    return {
        row.namespace_id: Membership(row.access_level, row.notification_level)
        for row in session.execute(
            select(GroupMember.namespace_id, GroupMember.access_level, GroupMember.notification_level).where(
                GroupMember.user_id == user_id, GroupMember.namespace_id.in_(list(namespace_ids))
            )
        )
    }


def accesses(session: Session, user, projects: list[Project]) -> dict[int, Access]:
    """`access` for many projects in one query."""
    if user is None:
        return {project.id: anonymous_access(project) for project in projects}
    direct, via_group = memberships(session, user.id, projects)
    return combine(user, projects, direct, via_group)


def combine(user, projects, direct: dict[int, Membership], via_group: dict[int, Membership]) -> dict[int, Access]:
    result = {}
    for project in projects:
        own = direct.get(project.id)
        group = via_group.get(project.namespace_id) if project.namespace.kind == "group" else None
        result[project.id] = project_access(
            user, project, project.namespace, own.access_level if own else None, group.access_level if group else None
        )
    return result


def group_level(session: Session, user_id: int, namespace_id: int) -> int | None:
    found = group_memberships(session, user_id, [namespace_id]).get(namespace_id)
    return found.access_level if found else None


def may_create_in(session: Session, user, namespace: Namespace) -> bool:
    level = group_level(session, user.id, namespace.id) if namespace.kind == "group" else None
    return group_policy.can_create_in_namespace(user, namespace, level)
