"""What a user may do on a group (a namespace of kind 'group')."""

from __future__ import annotations

from .projects import INTERNAL, MASTER, OWNER, PUBLIC

READ_GROUP = "read_group"
CREATE_PROJECTS = "create_projects"
ADMIN_GROUP = "admin_group"
ADMIN_GROUP_MEMBER = "admin_group_member"


def group_abilities(user, group, member_level: int | None, sees_a_project: bool = False) -> frozenset[str]:
    """GitLab 8.6's group rules: readers see it, masters add projects, owners administer it."""
    if user is None or getattr(user, "state", "active") != "active":
        return frozenset({READ_GROUP}) if group.visibility_level == PUBLIC else frozenset()
    rules: set[str] = set()
    visible = group.visibility_level == PUBLIC or (group.visibility_level == INTERNAL and not user.external)
    if user.is_admin or visible or member_level or sees_a_project:
        rules.add(READ_GROUP)
    if user.is_admin or (member_level or 0) >= MASTER:
        rules.add(CREATE_PROJECTS)
    if user.is_admin or member_level == OWNER:
        rules |= {ADMIN_GROUP, ADMIN_GROUP_MEMBER}
    return frozenset(rules)


def can_create_in_namespace(user, namespace, group_level: int | None) -> bool:
    """May USER put projects into NAMESPACE: their own, a group they master, anything for admins."""
    if user.is_admin:
        return True
    if namespace.kind == "user":
        return namespace.owner_id == user.id
    return (group_level or 0) >= MASTER
