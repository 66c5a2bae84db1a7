"""The project entity (spec: Project; reference 4.2), and the short forms other entities embed."""

from __future__ import annotations

from typing import TypedDict

from .common import View, iso
from .users import avatar_url, web_url


class ProjectNamespace(TypedDict):
    id: int
    name: str
    path: str
    kind: str
    owner_id: int | None
    description: str
    visibility_level: int
    created_at: str | None
    updated_at: str | None


class UserOwner(TypedDict):
    id: int
    name: str
    created_at: str | None
    username: str
    state: str
    avatar_url: str
    web_url: str


class GroupOwner(TypedDict):
    id: int
    name: str
    created_at: str | None
    path: str
    kind: str


class ProjectBasic(TypedDict):
    id: int
    name: str
    name_with_namespace: str
    path: str
    path_with_namespace: str


class Membership(TypedDict):
    access_level: int
    notification_level: int


class Permissions(TypedDict):
    project_access: Membership | None
    group_access: Membership | None


class ProjectFields(TypedDict):
    id: int
    description: str | None
    default_branch: str | None
    tag_list: list[str]
    public: bool
    archived: bool
    visibility_level: int
    ssh_url_to_repo: str
    http_url_to_repo: str
    web_url: str
    owner: UserOwner | GroupOwner
    name: str
    name_with_namespace: str
    path: str
    path_with_namespace: str
    issues_enabled: bool
    merge_requests_enabled: bool
    wiki_enabled: bool
    builds_enabled: bool
    snippets_enabled: bool
    created_at: str | None
    last_activity_at: str | None
    shared_runners_enabled: bool
    creator_id: int | None
    namespace: ProjectNamespace
    avatar_url: str | None
    star_count: int
    forks_count: int
    open_issues_count: int
    runners_token: str


class Project(ProjectFields, total=False):
    forked_from_project: ProjectBasic
    public_builds: bool
    permissions: Permissions


class DeletedProjectFields(TypedDict):
    id: int
    path_with_namespace: str


class DeletedProject(DeletedProjectFields, total=False):
    deleted: bool  # deleted by this request
    deleted_at: str | None  # deleted before


class ForkLink(TypedDict):
    id: int
    forked_to_project_id: int
    forked_from_project_id: int
    created_at: str | None
    updated_at: str | None


def urls(project, view: View) -> dict[str, str]:
    path = project.path_with_namespace
    web = f"{view.base_url}/{path}"
    return {"ssh_url_to_repo": f"git@{view.host}:{path}.git", "http_url_to_repo": f"{web}.git", "web_url": web}


def namespace(row) -> ProjectNamespace:
    return {
        "id": row.id,
        "name": row.name,
        "path": row.path,
        "kind": row.kind,
        "owner_id": row.owner_id,
        "description": row.description or "",
        "visibility_level": row.visibility_level,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
    }


def human_namespace_name(row) -> str:
    """A user namespace reads as its owner's display name, a group as its name."""
    if row.kind == "user" and row.owner is not None:
        return row.owner.name
    return row.name


def owner(project, view: View) -> UserOwner | GroupOwner:
    """The user owning a personal project; for a group project, the group (GitLab's Project#owner)."""
    ns = project.namespace
    if ns.kind == "user" and ns.owner is not None:
        user = ns.owner
        return {
            "id": user.id,
            "name": user.name,
            "created_at": iso(user.created_at),
            "username": user.username,
            "state": user.state,
            "avatar_url": avatar_url(user, view),
            "web_url": web_url(user, view),
        }
    return {"id": ns.id, "name": ns.name, "created_at": iso(ns.created_at), "path": ns.path, "kind": ns.kind}


def basic(project) -> ProjectBasic:
    """`forked_from_project` and other references: id, names and paths."""
    return {
        "id": project.id,
        "name": project.name,
        "name_with_namespace": f"{human_namespace_name(project.namespace)} / {project.name}",
        "path": project.path,
        "path_with_namespace": project.path_with_namespace,
    }


def membership(found) -> Membership | None:
    if found is None:
        return None
    return {"access_level": found.access_level, "notification_level": found.notification_level}


def project(
    p,
    view: View,
    details,
    *,
    permissions: bool = False,
    runners_token: str = "",
    in_list: bool = False,
) -> Project:
    """DETAILS is `services.projects.Details` for a set of projects including P. RUNNERS_TOKEN is
    empty for callers who may not administer P (C27)."""
    data = {
        "id": p.id,
        "description": p.description,
        "default_branch": p.head_branch,
        "tag_list": list(p.tag_list or []),
        "public": p.visibility_level == 20,
        "archived": p.archived,
        "visibility_level": p.visibility_level,
        **urls(p, view),
        "owner": owner(p, view),
        "name": p.name,
        "name_with_namespace": f"{human_namespace_name(p.namespace)} / {p.name}",
        "path": p.path,
        "path_with_namespace": p.path_with_namespace,
        "issues_enabled": p.issues_enabled,
        "merge_requests_enabled": p.merge_requests_enabled,
        "wiki_enabled": p.wiki_enabled,
        "builds_enabled": p.builds_enabled,
        "snippets_enabled": p.snippets_enabled,
        "created_at": iso(p.created_at),
        "last_activity_at": iso(p.last_activity_at),
        "shared_runners_enabled": p.shared_runners_enabled,
        "creator_id": p.creator_id,
        "namespace": namespace(p.namespace),
    }
    source = details.forked_from.get(p.id)
    if source is not None:
        data["forked_from_project"] = basic(source)
    data["avatar_url"] = None
    data["star_count"] = details.star_counts.get(p.id, 0)
    data["forks_count"] = details.fork_counts.get(p.id, 0)
    data["open_issues_count"] = 0  # codeyard has no issue tracker: no issue can be open
    data["runners_token"] = runners_token
    if in_list:
        data["public_builds"] = p.public_builds
    if permissions:
        group = details.via_group.get(p.namespace_id) if p.namespace.kind == "group" else None
        data["permissions"] = {
            "project_access": membership(details.direct.get(p.id)),
            "group_access": membership(group),
        }
    return data
