"""v4 protected branch shape: one access level per right, as GitLab lists them (one role each)."""

from __future__ import annotations

from typing import TypedDict

LEVEL_DESCRIPTIONS = {0: "No one", 30: "Developers + Maintainers", 40: "Maintainers", 60: "Admins"}


class AccessLevelV4(TypedDict):
    id: int
    access_level: int
    access_level_description: str
    user_id: int | None
    group_id: int | None
    deploy_key_id: int | None


class ProtectedBranchV4(TypedDict):
    id: int
    name: str
    push_access_levels: list[AccessLevelV4]
    merge_access_levels: list[AccessLevelV4]
    unprotect_access_levels: list[AccessLevelV4]
    allow_force_push: bool
    code_owner_approval_required: bool


def _level(row, level: int) -> list[AccessLevelV4]:
    # One role per right: the level's id is the protection's (GitLab numbers its rows apart).
    return [{"id": row.id, "access_level": level, "access_level_description": LEVEL_DESCRIPTIONS.get(level, str(level)),
             "user_id": None, "group_id": None, "deploy_key_id": None}]  # fmt: skip


def protected_branch(row) -> ProtectedBranchV4:
    """ROW is a row of services.protected_branches' read."""
    return {
        "id": row.id,
        "name": row.name,
        "push_access_levels": _level(row, row.push_access_level),
        "merge_access_levels": _level(row, row.merge_access_level),
        "unprotect_access_levels": _level(row, row.unprotect_access_level),
        "allow_force_push": bool(row.allow_force_push),
        "code_owner_approval_required": False,
    }
