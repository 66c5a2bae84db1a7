"""v4 group shapes: v3's group (`entities/groups.py`) under v4's names, with the fields v4 clients read.

codeyard has no subgroups: `parent_id` is null and `full_path` is the path. The settings GitLab
keeps per group that codeyard does not have answer GitLab's defaults.
"""

from __future__ import annotations

from typing import TypedDict

from ..common import View, iso
from ..groups import group as group_v3
from . import Visibility, visibility


class GroupV4(TypedDict):
    id: int
    web_url: str
    name: str
    path: str
    description: str
    visibility: Visibility
    share_with_group_lock: bool
    require_two_factor_authentication: bool
    two_factor_grace_period: int
    project_creation_level: str
    auto_devops_enabled: bool | None
    subgroup_creation_level: str
    emails_disabled: bool
    emails_enabled: bool
    mentions_disabled: bool | None
    lfs_enabled: bool
    default_branch: str | None
    avatar_url: str | None
    request_access_enabled: bool
    full_name: str
    full_path: str
    created_at: str | None
    parent_id: int | None


class GroupV4Detail(GroupV4):
    """One group (`GET /groups/:id`, and the answer to a create or an edit). Its projects are not
    embedded (`with_projects` is not served): `GET /groups/:id/projects` lists them."""

    shared_with_groups: list[dict]
    prevent_sharing_groups_outside_hierarchy: bool


class Accepted(TypedDict):
    message: str


def group(row, view: View) -> GroupV4:
    """ROW: a group's read-path row or its `Namespace` model."""
    base = group_v3(row, view)
    return {
        "id": base["id"],
        "web_url": base["web_url"],
        "name": base["name"],
        "path": base["path"],
        "description": base["description"],
        "visibility": visibility(base["visibility_level"]),
        "share_with_group_lock": False,
        "require_two_factor_authentication": False,
        "two_factor_grace_period": 48,
        "project_creation_level": "maintainer",
        "auto_devops_enabled": None,
        "subgroup_creation_level": "owner",
        "emails_disabled": False,
        "emails_enabled": True,
        "mentions_disabled": None,
        "lfs_enabled": False,
        "default_branch": None,
        "avatar_url": base["avatar_url"],
        "request_access_enabled": False,
        "full_name": base["name"],
        "full_path": base["path"],
        "created_at": iso(row.created_at),
        "parent_id": None,
    }


def group_detail(row, view: View) -> GroupV4Detail:
    return {**group(row, view), "shared_with_groups": [], "prevent_sharing_groups_outside_hierarchy": False}


ACCEPTED: Accepted = {"message": "202 Accepted"}
