"""The project entity (spec: Project; reference 4.2), and the short forms other entities embed."""

from __future__ import annotations

from typing import TypedDict

from .common import View
from .users import gravatar


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


def human_namespace_name(row) -> str:
    """A user namespace reads as its owner's display name, a group as its name."""
    if row.kind == "user" and row.owner is not None:
        return row.owner.name
    return row.name


# --- the project entity, from a row of services.project_reads ---------------------------------------


def _owner(row, view: View) -> UserOwner | GroupOwner:
    """The user owning a personal project; for a group project, the group (GitLab's Project#owner)."""
    if row.ns_kind == "user" and row.owner_id is not None:
        return {
            "id": row.owner_id,
            "name": row.owner_name,
            "created_at": row.owner_created_at,
            "username": row.owner_username,
            "state": row.owner_state,
            "avatar_url": gravatar(row.owner_email, view),
            "web_url": f"{view.base_url}/u/{row.owner_username}",
        }
    return {"id": row.namespace_id, "name": row.ns_name, "created_at": row.ns_created_at, "path": row.ns_path, "kind": row.ns_kind}


def _namespace_name(row) -> str:
    return row.owner_name if row.ns_kind == "user" and row.owner_id is not None else row.ns_name


def _source(row) -> ProjectBasic:
    """`forked_from_project`: id, names and paths of the fork source."""
    if row.source_ns_kind == "user" and row.source_owner_name is not None:
        namespace_name = row.source_owner_name
    else:
        namespace_name = row.source_ns_name
    return {
        "id": row.source_id,
        "name": row.source_name,
        "name_with_namespace": f"{namespace_name} / {row.source_name}",
        "path": row.source_path,
        "path_with_namespace": f"{row.source_ns_path}/{row.source_path}",
    }


def _membership(level: int | None, notification: int | None) -> Membership | None:
    return None if level is None else {"access_level": level, "notification_level": notification}


def _namespace_parts(row, view: View) -> tuple[ProjectNamespace, UserOwner | GroupOwner, str]:
    """(namespace, owner, namespace name) of ROW's project: they depend on its namespace alone."""
    namespace: ProjectNamespace = {
        "id": row.namespace_id,
        "name": row.ns_name,
        "path": row.ns_path,
        "kind": row.ns_kind,
        "owner_id": row.ns_owner_id,
        "description": row.ns_description or "",
        "visibility_level": row.ns_visibility_level,
        "created_at": row.ns_created_at,
        "updated_at": row.ns_updated_at,
    }
    return namespace, _owner(row, view), _namespace_name(row)


def project(
    row, view: View, *, permissions: bool = False, runners_token: str = "", in_list: bool = False, shared: dict | None = None
) -> Project:
    """ROW is an entity row of `services.project_reads` (timestamps already the API's text). RUNNERS_TOKEN is empty for callers who may
    not administer the project (C27); PERMISSIONS adds the caller's memberships.

    SHARED (a dict, empty at first) is given by the rendering of a list of rows read by one statement:
    the namespace and owner parts are then built once per namespace and the entities share those
    dicts (they are serialized, never changed)."""
    parts = None if shared is None else shared.get(row.namespace_id)
    if parts is None:
        parts = _namespace_parts(row, view)
        if shared is not None:
            shared[row.namespace_id] = parts
    namespace, owner, namespace_name = parts
    path_with_namespace = f"{row.ns_path}/{row.path}"
    web = f"{view.base_url}/{path_with_namespace}"
    data = {
        "id": row.id,
        "description": row.description,
        "default_branch": row.head_branch,
        "tag_list": list(row.tag_list or []),
        "public": row.visibility_level == 20,
        "archived": row.archived,
        "visibility_level": row.visibility_level,
        "ssh_url_to_repo": f"git@{view.host}:{path_with_namespace}.git",
        "http_url_to_repo": f"{web}.git",
        "web_url": web,
        "owner": owner,
        "name": row.name,
        "name_with_namespace": f"{namespace_name} / {row.name}",
        "path": row.path,
        "path_with_namespace": path_with_namespace,
        "issues_enabled": row.issues_enabled,
        "merge_requests_enabled": row.merge_requests_enabled,
        "wiki_enabled": row.wiki_enabled,
        "builds_enabled": row.builds_enabled,
        "snippets_enabled": row.snippets_enabled,
        "created_at": row.created_at,
        "last_activity_at": row.last_activity_at,
        "shared_runners_enabled": row.shared_runners_enabled,
        "creator_id": row.creator_id,
        "namespace": namespace,
    }
    if row.source_id is not None:
        data["forked_from_project"] = _source(row)
    data["avatar_url"] = None
    data["star_count"] = row.star_count
    data["forks_count"] = row.forks_count
    data["open_issues_count"] = 0  # codeyard has no issue tracker: no issue can be open
    data["runners_token"] = runners_token
    if in_list:
        data["public_builds"] = row.public_builds
    if permissions:
        data["permissions"] = {
            "project_access": _membership(row.member_level, row.member_notification),
            "group_access": _membership(row.group_level, row.group_notification),
        }
    return data
