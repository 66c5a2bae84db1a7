"""v4 project shapes, from the rows v3's project entity reads (`services.project_reads`).

v4 names visibility by word, shows `topics` beside `tag_list`, a namespace with its `full_path` and
`web_url`, `_links`, the feature flags with v4's `*_access_level` words beside them (codeyard's
features are on or off: "enabled" or "disabled"), `jobs_enabled` for v3's `builds_enabled`, and the
owner only for a personal project. `simple=true` lists the short form.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, TypedDict

from ..common import View
from ..projects import Permissions, _membership, _namespace_name
from . import Visibility, visibility
from .namespaces import NamespaceV4
from .users import UserV4Basic, user_basic

AccessLevelWord = Literal["disabled", "private", "enabled"]


class ProjectLinks(TypedDict):
    self: str
    issues: str
    merge_requests: str
    repo_branches: str
    labels: str
    events: str
    members: str
    cluster_agents: str


class ForkedFrom(TypedDict):
    id: int
    name: str
    name_with_namespace: str
    path: str
    path_with_namespace: str
    ssh_url_to_repo: str
    http_url_to_repo: str
    web_url: str


class ProjectV4Simple(TypedDict):
    """`simple=true`: what lists of many projects need."""

    id: int
    description: str | None
    name: str
    name_with_namespace: str
    path: str
    path_with_namespace: str
    created_at: str | None
    default_branch: str | None
    tag_list: list[str]
    topics: list[str]
    ssh_url_to_repo: str
    http_url_to_repo: str
    web_url: str
    readme_url: str | None
    forks_count: int
    avatar_url: str | None
    star_count: int
    last_activity_at: str | None
    namespace: NamespaceV4


class ProjectV4Fields(ProjectV4Simple):
    updated_at: str | None
    _links: ProjectLinks
    archived: bool
    visibility: Visibility
    container_registry_enabled: bool
    issues_enabled: bool
    merge_requests_enabled: bool
    wiki_enabled: bool
    jobs_enabled: bool
    snippets_enabled: bool
    issues_access_level: AccessLevelWord
    repository_access_level: AccessLevelWord
    merge_requests_access_level: AccessLevelWord
    forking_access_level: AccessLevelWord
    wiki_access_level: AccessLevelWord
    builds_access_level: AccessLevelWord
    snippets_access_level: AccessLevelWord
    pages_access_level: AccessLevelWord
    container_registry_access_level: AccessLevelWord
    shared_runners_enabled: bool
    lfs_enabled: bool
    creator_id: int | None
    import_status: str
    public_jobs: bool
    request_access_enabled: bool
    only_allow_merge_if_pipeline_succeeds: bool
    only_allow_merge_if_all_discussions_are_resolved: bool
    remove_source_branch_after_merge: bool
    merge_method: str
    squash_option: str
    emails_disabled: bool


class Statistics(TypedDict):
    commit_count: int
    storage_size: int
    repository_size: int
    wiki_size: int
    lfs_objects_size: int
    job_artifacts_size: int
    pipeline_artifacts_size: int
    packages_size: int
    snippets_size: int
    uploads_size: int
    container_registry_size: int


class SharedWithGroup(TypedDict):
    group_id: int
    group_name: str
    group_full_path: str
    group_access_level: int
    expires_at: str | None


class ProjectV4(ProjectV4Fields, total=False):
    owner: UserV4Basic  # a personal project's
    forked_from_project: ForkedFrom
    permissions: Permissions  # single reads
    empty_repo: bool  # single reads
    runners_token: str  # single reads, for those who administer the project
    statistics: Statistics  # `statistics=true`, for reporters and above
    shared_with_groups: list[SharedWithGroup]  # single reads


class Starrer(TypedDict):
    starred_since: str | None
    user: UserV4Basic


ACCESS_LEVEL_FLAGS = {  # v4's access level -> the flag it stands for
    "issues_access_level": "issues_enabled",
    "merge_requests_access_level": "merge_requests_enabled",
    "wiki_access_level": "wiki_enabled",
    "builds_access_level": "builds_enabled",
    "snippets_access_level": "snippets_enabled",
}


def _word(enabled: bool) -> AccessLevelWord:
    return "enabled" if enabled else "disabled"


def namespace(row, view: View) -> NamespaceV4:
    if row.ns_kind == "user":
        web = f"{view.base_url}/u/{row.ns_path}"
    else:
        web = f"{view.base_url}/groups/{row.ns_path}"
    return {
        "id": row.namespace_id,
        "name": _namespace_name(row),
        "path": row.ns_path,
        "kind": row.ns_kind,
        "full_path": row.ns_path,
        "parent_id": None,
        "avatar_url": None,
        "web_url": web,
    }


def simple(row, view: View, shared: dict | None = None) -> ProjectV4Simple:
    """The short form. SHARED (a dict, empty at first) keeps each namespace's part for a list."""
    found = None if shared is None else shared.get(row.namespace_id)
    if found is None:
        found = (namespace(row, view), _namespace_name(row))
        if shared is not None:
            shared[row.namespace_id] = found
    space, namespace_name = found
    path_with_namespace = f"{row.ns_path}/{row.path}"
    web = f"{view.base_url}/{path_with_namespace}"
    tags = list(row.tag_list or [])
    return {
        "id": row.id,
        "description": row.description,
        "name": row.name,
        "name_with_namespace": f"{namespace_name} / {row.name}",
        "path": row.path,
        "path_with_namespace": path_with_namespace,
        "created_at": row.created_at,
        "default_branch": row.default_branch,  # none before the first push
        "tag_list": tags,
        "topics": list(tags),
        "ssh_url_to_repo": f"git@{view.host}:{path_with_namespace}.git",
        "http_url_to_repo": f"{web}.git",
        "web_url": web,
        "readme_url": None,
        "forks_count": row.forks_count,
        "avatar_url": None,
        "star_count": row.star_count,
        "last_activity_at": row.last_activity_at,
        "namespace": space,
    }


class _Owner(NamedTuple):
    """A personal project's owner, from the row's owner columns, as `user_basic` reads a user."""

    id: int
    username: str
    name: str
    state: str
    email: str | None


def _owner(row, view: View) -> UserV4Basic:
    return user_basic(_Owner(row.owner_id, row.owner_username, row.owner_name, row.owner_state, row.owner_email), view)


def _forked_from(row, view: View) -> ForkedFrom:
    if row.source_ns_kind == "user" and row.source_owner_name is not None:
        namespace_name = row.source_owner_name
    else:
        namespace_name = row.source_ns_name
    path_with_namespace = f"{row.source_ns_path}/{row.source_path}"
    web = f"{view.base_url}/{path_with_namespace}"
    return {
        "id": row.source_id,
        "name": row.source_name,
        "name_with_namespace": f"{namespace_name} / {row.source_name}",
        "path": row.source_path,
        "path_with_namespace": path_with_namespace,
        "ssh_url_to_repo": f"git@{view.host}:{path_with_namespace}.git",
        "http_url_to_repo": f"{web}.git",
        "web_url": web,
    }


def project(row, view: View, shared: dict | None = None) -> ProjectV4:
    """The full form of ROW (an entity row of `services.project_reads`); single reads add
    `permissions` and the rest (`single`)."""
    data = simple(row, view, shared)
    api = f"{view.base_url}/api/v4/projects/{row.id}"
    data.update({
        "updated_at": row.updated_at,
        "_links": {
            "self": api,
            "issues": f"{api}/issues",
            "merge_requests": f"{api}/merge_requests",
            "repo_branches": f"{api}/repository/branches",
            "labels": f"{api}/labels",
            "events": f"{api}/events",
            "members": f"{api}/members",
            "cluster_agents": f"{api}/cluster_agents",
        },
        "archived": row.archived,
        "visibility": visibility(row.visibility_level),
        "container_registry_enabled": False,
        "issues_enabled": row.issues_enabled,
        "merge_requests_enabled": row.merge_requests_enabled,
        "wiki_enabled": row.wiki_enabled,
        "jobs_enabled": row.builds_enabled,
        "snippets_enabled": row.snippets_enabled,
        **{level: _word(getattr(row, flag)) for level, flag in ACCESS_LEVEL_FLAGS.items()},
        "repository_access_level": "enabled",
        "forking_access_level": "enabled",
        "pages_access_level": "disabled",
        "container_registry_access_level": "disabled",
        "shared_runners_enabled": row.shared_runners_enabled,
        "lfs_enabled": False,
        "creator_id": row.creator_id,
        "import_status": "none",
        "public_jobs": row.public_builds,
        "request_access_enabled": False,
        "only_allow_merge_if_pipeline_succeeds": False,
        "only_allow_merge_if_all_discussions_are_resolved": False,
        "remove_source_branch_after_merge": False,
        "merge_method": "merge",
        "squash_option": "default_off",
        "emails_disabled": False,
    })  # fmt: skip
    if row.ns_kind == "user" and row.owner_id is not None:
        data["owner"] = _owner(row, view)
    if row.source_id is not None:
        data["forked_from_project"] = _forked_from(row, view)
    return data


def permissions(row) -> Permissions:
    return {
        "project_access": _membership(row.member_level, row.member_notification),
        "group_access": _membership(row.group_level, row.group_notification),
    }


def shared_with_groups(rows) -> list[SharedWithGroup]:
    """ROWS: (group_id, name, path, group_access, expires_at) of `services.projects.shared_with`."""
    return [
        {"group_id": group_id, "group_name": name, "group_full_path": path, "group_access_level": level,
         "expires_at": expires_at.isoformat() if expires_at is not None else None}
        for group_id, name, path, level, expires_at in rows
    ]  # fmt: skip
