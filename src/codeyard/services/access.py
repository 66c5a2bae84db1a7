"""Load a caller's memberships of one ORM-loaded project or group and ask the policies what they may do.

The rules live in `policies/`; this module only fetches what they need, in the caller's session:
one query for one project (`access`), one for a group level. Rows of the read path carry their
memberships and are judged by `project_reads.access`; a request's project is loaded by
`services.loader`.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, case, func, or_, select
from sqlalchemy.orm import Session

from ..db.models import GroupMember, Namespace, Project, ProjectGroupLink, ProjectMember
from ..policies import groups as group_policy
from ..policies.projects import NO_ACCESS, Access, anonymous_access, project_access


def project_levels(session: Session, user_id: int, project: Project) -> tuple[int | None, int | None]:
    """(project level, group membership level) of the user on PROJECT, in one query: the project
    level is the higher of the direct membership and what the groups the project is shared with
    give."""
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
    row = session.execute(select(direct, via_group, shared_level(project.id, user_id))).one()
    return project_level(row[0], row[2]), row[1] if project.namespace.kind == "group" else None


def live_link() -> ColumnElement[bool]:
    """A project group link that has not expired (it counts until the day before `expires_at`)."""
    return or_(ProjectGroupLink.expires_at.is_(None), ProjectGroupLink.expires_at > func.current_date())


def shared_level(project_id, user_id):
    """The highest level USER reaches PROJECT with through the groups it is shared with (each the
    lower of their group level and the link's), or NULL: a scalar subquery (of values or columns)."""
    member, link = GroupMember.access_level, ProjectGroupLink.group_access
    level = case((member < link, member), else_=link)
    return (
        select(func.max(level))
        .select_from(ProjectGroupLink)
        .join(GroupMember, GroupMember.namespace_id == ProjectGroupLink.group_id)
        .where(ProjectGroupLink.project_id == project_id, GroupMember.user_id == user_id, live_link())
        .scalar_subquery()
    )


def project_level(direct: int | None, shared: int | None) -> int | None:
    """The caller's project level from their direct membership and the project's group links."""
    if shared is None:
        return direct
    return shared if direct is None else max(direct, shared)


def access(session: Session, user, project: Project) -> Access:
    """What USER (a user row, or None for anonymous) may do on PROJECT."""
    if user is None:
        return anonymous_access(project)
    if user.state != "active":
        return NO_ACCESS
    project_level, group_level = project_levels(session, user.id, project)
    return project_access(user, project, project.namespace, project_level, group_level)


def group_level(session: Session, user_id: int, namespace_id: int) -> int | None:
    """The user's membership level of the group NAMESPACE_ID, or None."""
    return session.scalar(
        select(GroupMember.access_level).where(GroupMember.user_id == user_id, GroupMember.namespace_id == namespace_id)
    )


def may_create_in(session: Session, user, namespace: Namespace) -> bool:
    level = group_level(session, user.id, namespace.id) if namespace.kind == "group" else None
    return group_policy.can_create_in_namespace(user, namespace, level)
