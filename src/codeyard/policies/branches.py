"""Who may change which ref: the rules the git transport enforces on push and the branches API
applies to branch creation and deletion, and merge request acceptance to the target branch.

A protected branch names an access level for each right (GitLab's ProtectedBranch access levels):
0 no one (not even maintainers or the owner), 30 developers and maintainers, 40 maintainers (and
owners), 60 instance admins only. Rights are:

- push: add commits to it (a push, an API commit, branch creation at it);
- merge: accept a merge request into it;
- unprotect: remove the protection (besides administering the project);
- force push (`allow_force_push`): those who may push may also rewrite it.

Nobody deletes a protected branch by a push; maintainers may through the v4 API. Any other branch
takes pushes, force pushes and deletions from developers. Creating a tag needs push rights;
moving or deleting an existing tag needs admin_project (maintainer).
"""

from __future__ import annotations

from ..git.refs import TAGS, ZERO_SHA
from .projects import ADMIN_PROJECT, PUSH_CODE, PUSH_PROTECTED, Access

NO_ONE, DEVELOPERS, MAINTAINERS, ADMINS = 0, 30, 40, 60
PUSH_LEVELS = MERGE_LEVELS = (NO_ONE, DEVELOPERS, MAINTAINERS, ADMINS)
PERMISSIVE_FIRST = (DEVELOPERS, MAINTAINERS, ADMINS, NO_ONE)  # each admits everyone the next does
UNPROTECT_LEVELS = (DEVELOPERS, MAINTAINERS, ADMINS)

NO_PUSH = "You are not allowed to push code to this project."
NO_PROTECTED_PUSH = "You are not allowed to push code to protected branches on this project."
NO_FORCE_PUSH = "You are not allowed to force push code to a protected branch on this project."
NO_PROTECTED_DELETE = "You are not allowed to delete protected branches from this project."
NO_TAG_CHANGE = "You are not allowed to change existing tags on this project."
NO_UNPROTECT = "You are not allowed to unprotect this branch."


def matches(pattern: str, name: str) -> bool:
    """Does the protected branch name PATTERN cover branch NAME? `*` stands for any text (slashes
    too), as in GitLab's wildcard protected branches; any other character for itself."""
    if "*" not in pattern:
        return pattern == name
    first, *middle, last = pattern.split("*")
    if not name.startswith(first) or len(name) < len(first) + len(last):
        return False
    at, end = len(first), len(name) - len(last)
    for part in middle:
        found = name.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return name.endswith(last)


class Combined:
    """The protection of a branch that several rows cover (its own name and wildcards): the most
    permissive push and merge levels of them (GitLab's rule), force pushes only when every row
    allows them."""

    __slots__ = ("allow_force_push", "id", "merge_access_level", "name", "push_access_level", "unprotect_access_level")

    def __init__(self, rows: list):
        rank = lambda level: PERMISSIVE_FIRST.index(level) if level in PERMISSIVE_FIRST else len(PERMISSIVE_FIRST)  # noqa: E731
        self.id, self.name = getattr(rows[0], "id", None), getattr(rows[0], "name", None)
        self.push_access_level = min((row.push_access_level for row in rows), key=rank)
        self.merge_access_level = min((getattr(row, "merge_access_level", NO_ONE) for row in rows), key=rank)
        self.unprotect_access_level = max(getattr(row, "unprotect_access_level", MAINTAINERS) for row in rows)
        self.allow_force_push = all(row.allow_force_push for row in rows)

    @property
    def developers_can_push(self) -> bool:
        return self.push_access_level == DEVELOPERS

    @property
    def developers_can_merge(self) -> bool:
        return self.merge_access_level == DEVELOPERS


def applicable(protected: dict, name: str):
    """The protection of branch NAME among PROTECTED (name or wildcard -> row): None, a row, or the
    `Combined` protection of several."""
    found = [row for pattern, row in protected.items() if pattern == name or ("*" in pattern and matches(pattern, name))]
    if len(found) <= 1:
        return found[0] if found else None
    return Combined(found)


def grants(access: Access, level: int, admin: bool = False) -> bool:
    """Does access LEVEL of a protected branch admit the caller (ACCESS; ADMIN: an instance admin)?
    Everyone it admits must be able to push code to the project at all."""
    if not access.can(PUSH_CODE):
        return False
    if level == DEVELOPERS:
        return True
    if level == MAINTAINERS:
        return access.can(PUSH_PROTECTED)
    if level == ADMINS:
        return admin
    return False  # NO_ONE, or a level this code does not know


def may_push_to(access: Access, protection, admin: bool = False) -> bool:
    """May the caller add commits to a branch with PROTECTION (a protected branch row or None)?"""
    if not access.can(PUSH_CODE):
        return False
    return protection is None or grants(access, protection.push_access_level, admin)


def may_merge_to(access: Access, protection, admin: bool = False) -> bool:
    """May the caller merge a merge request into a branch with PROTECTION (a row or None)?"""
    if not access.can(PUSH_CODE):
        return False
    return protection is None or grants(access, protection.merge_access_level, admin)


def may_unprotect(access: Access, protection, admin: bool = False) -> bool:
    """May the caller, who administers the project, remove PROTECTION?"""
    return access.can(ADMIN_PROJECT) and grants(access, max(protection.unprotect_access_level, MAINTAINERS), admin)


def may_delete(access: Access, protection) -> bool:
    """May the caller delete a branch with PROTECTION through the API (never by a push)?"""
    return access.can(PUSH_CODE) and (protection is None or access.can(ADMIN_PROJECT))


def must_move_forward(old: str, new: str, protection) -> bool:
    """Does the update move a protected branch that takes no force push from one commit to another
    (so that whether NEW descends from OLD decides it)?"""
    return bool(protection) and not protection.allow_force_push and old != ZERO_SHA and new != ZERO_SHA


def refusal(access: Access, ref: str, old: str, new: str, protection, forced: bool, admin: bool = False) -> str | None:
    """Why the update of REF from OLD to NEW is refused, or None when it is allowed.

    PROTECTION is the branch's protected branch row (None when unprotected); FORCED is true when NEW
    does not descend from OLD (the caller asks git when `must_move_forward`); ADMIN: the caller is
    an instance admin."""
    if not access.can(PUSH_CODE):
        return NO_PUSH
    if ref.startswith(TAGS):
        if old != ZERO_SHA and not access.can(ADMIN_PROJECT):
            return NO_TAG_CHANGE
        return None
    if protection is None:
        return None
    if new == ZERO_SHA:
        return NO_PROTECTED_DELETE
    if forced and old != ZERO_SHA and not protection.allow_force_push:
        return NO_FORCE_PUSH
    if not may_push_to(access, protection, admin):
        return NO_PROTECTED_PUSH
    return None
