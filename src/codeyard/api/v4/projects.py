"""Projects in v4: lists (every readable project, a group's, a user's, a project's forks) with v4's
filters and keyset pages, one project, create (with a first commit on request), edit, delete, fork
and fork relations, stars and starrers, archiving, transfer and languages."""

from __future__ import annotations

import datetime as dt
from typing import TypedDict
from urllib.parse import parse_qsl, urlencode

from ...db.models import MAX_INTEGER, Namespace, is_id
from ...entities.common import iso
from ...entities.v4 import VISIBILITY_LEVELS
from ...entities.v4 import projects as entities
from ...entities.v4.users import user_basic
from ...errors import Invalid, MethodNotAllowed, NotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, Id, Int, Str, StrList, Url
from ...http.replies import Reply
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import access as access_service
from ...services import files, namespaces, project_reads, projects, users
from ..guards import ADMIN, READ, find_project, group_guard, load_project, project_guard, users_guard

routes = Routes()

KEYSET = "keyset"
ACCESS_WORDS = ("disabled", "private", "enabled")


def _time_errors(text: str) -> list[str]:
    return [] if _time(text) is not None else ["is invalid"]


def _time(text: str) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


FILTER_PARAMS = (
    Bool("archived", doc="Only archived (true) or only active (false) projects"),
    Choice("order_by", project_reads.ORDERABLE, doc="Default created_at (id with keyset pages)"),
    Choice("sort", ("asc", "desc"), doc="Default desc"),
    Str("search", max_length=255, doc="Part of the path, name or description, or of the namespace name"),
    Bool("search_namespaces", doc="The namespace's name is always searched too"),
    Choice("visibility", tuple(VISIBILITY_LEVELS)),
    Bool("simple", doc="The short form of each project"),
    Bool("owned", doc="Only projects the caller owns"),
    Bool("membership", doc="Only projects the caller is a member of"),
    Bool("starred", doc="Only projects the caller starred"),
    Choice("min_access_level", policy.ACCESS_LEVELS, doc="Only projects where the caller's level is this or more"),
    Int("id_after", minimum=0, maximum=MAX_INTEGER, doc="Only projects with a greater id"),
    Int("id_before", minimum=0, maximum=MAX_INTEGER, doc="Only projects with a smaller id"),
    Str("last_activity_after", max_length=64, check=_time_errors, doc="ISO 8601 time"),
    Str("last_activity_before", max_length=64, check=_time_errors, doc="ISO 8601 time"),
    Choice("pagination", (KEYSET, "offset"), doc="keyset: pages follow ids (order_by=id); Link carries the next"),
)
FLAG_PARAMS = (
    *(Bool(flag) for flag in projects.FEATURES),
    Bool("jobs_enabled", doc="v3's builds_enabled"),
    Bool("public_jobs", doc="v3's public_builds"),
    *(Choice(level, ACCESS_WORDS, doc="enabled or disabled (private is refused)") for level in entities.ACCESS_LEVEL_FLAGS),
)
COMMON_PARAMS = (
    Str("description", max_length=2000, nullable=True, multiline=True),
    Choice("visibility", tuple(VISIBILITY_LEVELS)),
    *FLAG_PARAMS,
    StrList("tag_list", item_pattern=r"[^,\n]{1,255}", doc="Deprecated: topics"),
    StrList("topics", item_pattern=r"[^,\n]{1,255}"),
)
NAME = Str("name", max_length=255, check=projects.name_errors)
PATH = Str("path", max_length=255, check=projects.path_errors)
CREATE_PARAMS = (
    NAME,
    PATH,
    *COMMON_PARAMS,
    Str("default_branch", max_length=255),
    Bool("initialize_with_readme", doc="A first commit with a README.md on the default branch (main)"),
    Url("import_url", schemes=("http", "https", "git", "ssh")),
)
UPDATE_PARAMS = (NAME, PATH, Str("default_branch", max_length=255), *COMMON_PARAMS)
INITIAL_BRANCH = "main"  # a v4 project's first branch (GitLab's default since 14)


class Accepted(TypedDict):
    message: str


class Storage(TypedDict):
    project_id: int
    disk_path: str
    created_at: str | None
    repository_storage: str


# --- rendering --------------------------------------------------------------------------------------


def _listed(ctx: Ctx, rows: list) -> list:
    view, shared = ctx.view, {}
    if ctx.args.get("simple"):
        return [entities.simple(row, view, shared) for row in rows]
    return [entities.project(row, view, shared) for row in rows]


def _single(ctx: Ctx, row, empty: bool, shared: list, statistics: dict | None = None) -> entities.ProjectV4:
    data = entities.project(row, ctx.view)
    data["permissions"] = entities.permissions(row)
    data["empty_repo"] = empty
    data["shared_with_groups"] = entities.shared_with_groups(shared)
    if project_reads.administers(ctx.actor, row):
        data["runners_token"] = projects.runners_token(ctx.rt.secret_key, row)
    if statistics is not None:
        data["statistics"] = {
            **statistics, "wiki_size": 0, "lfs_objects_size": 0, "job_artifacts_size": 0, "pipeline_artifacts_size": 0,
            "packages_size": 0, "snippets_size": 0, "uploads_size": 0, "container_registry_size": 0,
        }  # fmt: skip
    return data


def _written(ctx: Ctx, project) -> entities.ProjectV4:
    """The entity of PROJECT (a model just written) as this request's transaction sees it."""
    (row,) = project_reads.rows_for(ctx.session, ctx.actor, [project.id])
    shared = projects.shared_with(ctx.session.execute, project.id)
    return _single(ctx, row, projects.is_empty(ctx.rt, project.id), shared)


# --- lists --------------------------------------------------------------------------------------------


class KeysetPage(paging.Page):
    """A page of a keyset list: no totals, and a Link to the next page (the same query, the page
    after the last id) while the page is full."""

    def __init__(self, items: list, window: paging.Window, next_key: tuple[str, int] | None):
        super().__init__(items, 0, window)
        self.next_key = next_key

    def headers(self, ctx: Ctx) -> list[tuple[str, str]]:
        headers = [("x-per-page", str(self.window.per_page))]
        if self.next_key is not None:
            dropped = ("page", "id_after", "id_before", self.next_key[0])
            kept = [(k, v) for k, v in parse_qsl(ctx.query_string, keep_blank_values=True) if k not in dropped]
            query = urlencode(sorted([*kept, (self.next_key[0], str(self.next_key[1]))]))
            headers.append(("link", f'<{ctx.absolute_url(ctx.raw_path)}?{query}>; rel="next"'))
        return headers


def _filters(ctx: Ctx, keyset: bool) -> projects.Filters:
    args = ctx.args
    visibility = args.get("visibility")
    order_by = args.get("order_by", "id" if keyset else "created_at")
    if keyset and order_by != "id":
        raise MethodNotAllowed("405 Method Not Allowed - Keyset pagination is only available ordered by id")
    times = {name: _time(args[name]) for name in ("last_activity_after", "last_activity_before") if name in args}
    return projects.Filters(
        archived=args.get("archived"),
        search=args.get("search") or None,
        visibility=VISIBILITY_LEVELS[visibility] if visibility else None,
        order_by=order_by,
        sort=args.get("sort", "desc"),
        id_after=args.get("id_after"),
        id_before=args.get("id_before"),
        min_access_level=args.get("min_access_level", policy.GUEST if args.get("membership") else None),
        **times,
    )


async def _listing(ctx: Ctx, scope: str, **query) -> paging.Page:
    """One page of SCOPE's projects with the request's filters; with `pagination=keyset`, the page
    after `id_after` (or before `id_before`) and a Link to the next."""
    keyset = ctx.args.get("pagination") == KEYSET
    filters = _filters(ctx, keyset)
    window, db = paging.window(ctx), ctx.rt.db
    found = project_reads.Query(scope, ctx.actor, filters, **query)
    offset = 0 if keyset else window.offset
    total, rows = await ctx.off_loop_reads(project_reads.page, db, found, offset, window.limit)
    if not keyset:
        return paging.Page(_listed(ctx, rows), total, window)
    full = len(rows) == window.limit
    next_key = ("id_after" if filters.sort == "asc" else "id_before", rows[-1].id) if full else None
    return KeysetPage(_listed(ctx, rows), paging.Window(1, window.per_page), next_key)


def _scope(ctx: Ctx) -> str:
    """The list `/projects` reads. `membership=true` is every readable project where the caller has
    a level (`min_access_level`, guest by default): that counts the groups a project is shared with,
    which the caller's own list (v3's) does not."""
    if ctx.args.get("owned"):
        return project_reads.OWNED
    if ctx.args.get("starred"):
        return project_reads.STARRED
    return project_reads.VISIBLE


@routes.get("/projects", auth="optional", paginated=True, params=FILTER_PARAMS,
            summary="Every project the caller may read (anonymous: the public ones), filtered")  # fmt: skip
async def list_projects(ctx: Ctx) -> paging.Page[entities.ProjectV4 | entities.ProjectV4Simple]:
    return await _listing(ctx, _scope(ctx))


@routes.get("/groups/:id/projects", auth="optional", guards=(group_guard(),), paginated=True, params=FILTER_PARAMS,
            summary="The projects of a group the caller may read")  # fmt: skip
async def list_group_projects(ctx: Ctx) -> paging.Page[entities.ProjectV4 | entities.ProjectV4Simple]:
    return await _listing(ctx, project_reads.GROUP, group_id=ctx.group_id)


def _user(ctx: Ctx):
    ident = ctx.path_params["id"]
    if ident.isascii() and ident.isdigit():
        user = users.find(ctx.session, int(ident)) if is_id(int(ident)) else None
    else:
        user = users.find_by_login(ctx.session, ident)
    if user is None:
        raise NotFound("User")
    return user


@routes.get("/users/:id/projects", auth="optional", guards=(users_guard(lambda: NotFound("User")),), paginated=True, params=FILTER_PARAMS,
            summary="The personal projects of a user (id or username) the caller may read")  # fmt: skip
async def list_user_projects(ctx: Ctx) -> paging.Page[entities.ProjectV4 | entities.ProjectV4Simple]:
    namespace_id = users.personal_namespace(ctx.session, _user(ctx)).id
    return await _listing(ctx, project_reads.GROUP, group_id=namespace_id)


@routes.get("/projects/:id/forks", auth="optional", guards=(READ,), paginated=True, params=FILTER_PARAMS,
            summary="The forks of a project the caller may read")  # fmt: skip
async def list_forks(ctx: Ctx) -> paging.Page[entities.ProjectV4 | entities.ProjectV4Simple]:
    return await _listing(ctx, project_reads.FORKS, source_id=ctx.project_id)


# --- one project ----------------------------------------------------------------------------------


@routes.get("/projects/:id", auth="optional", summary="A single project (by id or namespace%2Fpath)",
            params=(Bool("statistics", doc="Commit count and repository size (reporters and above)"),
                    Bool("license"), Bool("with_custom_attributes")))  # fmt: skip
async def get_project(ctx: Ctx) -> entities.ProjectV4:
    row, access = await find_project(ctx)
    counted = bool(ctx.args.get("statistics")) and access.level >= policy.REPORTER
    ref = row.default_branch or row.head_branch
    empty, shared, statistics = await ctx.off_loop(_facts, ctx.rt, row.id, ref, counted)
    return _single(ctx, row, empty, shared, statistics)


def _facts(rt, project_id: int, ref: str, counted: bool) -> tuple[bool, list, dict | None]:
    """What a single read adds to the row: whether the repository is empty, the groups the project
    is shared with (one statement on the fast path) and, when COUNTED, its statistics."""
    statistics = projects.statistics(rt, project_id, ref) if counted else None
    return projects.is_empty(rt, project_id), projects.shared_with(rt.db.fast_all, project_id), statistics


@routes.get("/projects/:id/languages", auth="optional", guards=(project_guard(policy.DOWNLOAD_CODE),),
            summary="The languages of the default branch's files, in percent of their bytes")  # fmt: skip
async def languages(ctx: Ctx) -> dict[str, float]:
    row = ctx.project_row
    return await ctx.off_loop(projects.languages, ctx.rt, row.id, row.default_branch or row.head_branch)


@routes.get("/projects/:id/storage", admin=True, guards=(READ,), summary="Where the repository is stored (admin)")
def storage(ctx: Ctx) -> Storage:
    row = ctx.project_row
    return {"project_id": row.id, "disk_path": f"repositories/{row.id}.git", "created_at": row.created_at,
            "repository_storage": "default"}  # fmt: skip


# --- create, edit, delete -------------------------------------------------------------------------


def _attrs(args: dict) -> dict:
    """v3's attributes (`services.projects`) from v4's parameters."""
    attrs = {key: value for key, value in args.items() if key in ("name", "path", "description", "default_branch",
                                                                  "import_url", "tag_list", *projects.FEATURES)}  # fmt: skip
    if "visibility" in args:
        attrs["visibility_level"] = VISIBILITY_LEVELS[args["visibility"]]
    if "jobs_enabled" in args:
        attrs["builds_enabled"] = args["jobs_enabled"]
    if "public_jobs" in args:
        attrs["public_builds"] = args["public_jobs"]
    if "topics" in args:
        attrs["tag_list"] = args["topics"]
    refused = [level for level in entities.ACCESS_LEVEL_FLAGS if args.get(level) == "private"]
    if refused:
        raise Invalid({level: ["private is not supported: a feature is enabled or disabled"] for level in refused})
    attrs.update((flag, args[level] == "enabled") for level, flag in entities.ACCESS_LEVEL_FLAGS.items() if level in args)
    return attrs


def _create(ctx: Ctx, owner, namespace: Namespace) -> entities.ProjectV4:
    if ctx.args.get("name") is None and ctx.args.get("path") is None:
        raise Invalid({"name": ["name, path are missing, at least one parameter must be provided"]})
    attrs = _attrs(ctx.args)
    if attrs.get("import_url"):
        raise Invalid.field("import_url", "importing a repository from a URL is not supported")
    branch = attrs.get("default_branch") or INITIAL_BRANCH
    project = projects.create(ctx.session, ctx.rt, owner, namespace, attrs, initial_branch=branch)
    if ctx.args.get("initialize_with_readme"):
        readme = f"# {project.name}\n\n{project.description or ''}".rstrip() + "\n"
        access = access_service.access(ctx.session, owner, project)
        files.change(ctx.session, ctx.rt, project, owner, access, files.CREATE, branch, "README.md", readme.encode(),
                     "Initial commit")  # fmt: skip
    return _written(ctx, project)


@routes.post("/projects", params=(*CREATE_PARAMS, Id("namespace_id", doc="Default: the caller's namespace")),
             summary="Create a project (name or path) in the caller's or a given namespace")  # fmt: skip
def create_project(ctx: Ctx) -> entities.ProjectV4:
    namespace_id = ctx.args.get("namespace_id")
    if namespace_id is None:
        namespace = users.personal_namespace(ctx.session, ctx.actor)
    else:
        namespace = ctx.session.get(Namespace, namespace_id) if is_id(namespace_id) else None
        if namespace is None or not access_service.may_create_in(ctx.session, ctx.actor, namespace):
            raise Invalid.field("namespace", "is not valid")
    return _create(ctx, ctx.actor, namespace)


@routes.post("/projects/user/:user_id", admin=True, params=CREATE_PARAMS,
             summary="Create a project owned by a user (admin)")  # fmt: skip
def create_project_for_user(ctx: Ctx) -> entities.ProjectV4:
    owner = users.find(ctx.session, ctx.path_int("user_id", lambda: NotFound("User")))
    if owner is None:
        raise NotFound("User")
    # Created as that user, as v3 does: creator, event and visibility restrictions are theirs.
    return _create(ctx, owner, users.personal_namespace(ctx.session, owner))


@routes.put("/projects/:id", guards=(ADMIN,), params=UPDATE_PARAMS, summary="Edit a project")
def update_project(ctx: Ctx) -> entities.ProjectV4:
    attrs = _attrs(ctx.args)
    if "default_branch" in attrs:
        projects.set_default_branch(ctx.session, ctx.rt, ctx.project, attrs.pop("default_branch"))
    return _written(ctx, projects.update(ctx.session, ctx.actor, ctx.access, ctx.project, attrs))


@routes.delete("/projects/:id", guards=(project_guard(policy.REMOVE_PROJECT),), status=202,
               summary="Delete a project with everything it owns")  # fmt: skip
def delete_project(ctx: Ctx) -> Accepted:
    projects.delete(ctx.session, ctx.rt, ctx.actor, ctx.project)
    return {"message": "202 Accepted"}


# --- sharing with groups -------------------------------------------------------------------------


class GroupLink(TypedDict):
    id: int
    project_id: int
    group_id: int
    group_access: int
    expires_at: str | None


def _date_errors(text: str) -> list[str]:
    return [] if _date(text) is not None else ["must be a date (YYYY-MM-DD)"]


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        return None


@routes.post("/projects/:id/share", guards=(ADMIN,),
             params=(Id("group_id", required=True), Choice("group_access", policy.ACCESS_LEVELS, required=True),
                     Str("expires_at", max_length=32, check=_date_errors, doc="YYYY-MM-DD: the first day it counts no more")),
             summary="Share a project with a group: its members reach it at their level, at most group_access")  # fmt: skip
def share_project(ctx: Ctx) -> GroupLink:
    expires_at = _date(ctx.args["expires_at"]) if ctx.args.get("expires_at") else None
    link = projects.share(ctx.session, ctx.actor, ctx.access, ctx.project, ctx.args["group_id"], ctx.args["group_access"],
                          expires_at)  # fmt: skip
    return {"id": link.id, "project_id": link.project_id, "group_id": link.group_id, "group_access": link.group_access,
            "expires_at": link.expires_at.isoformat() if link.expires_at else None}  # fmt: skip


@routes.delete("/projects/:id/share/:group_id", guards=(ADMIN,), status=204,
               summary="Stop sharing a project with a group")  # fmt: skip
def unshare_project(ctx: Ctx) -> None:
    if not projects.unshare(ctx.session, ctx.project, ctx.path_int("group_id")):
        raise NotFound("Group Link")


# --- forks ----------------------------------------------------------------------------------------

FORK_PARAMS = (
    Id("namespace_id"),
    Str("namespace_path", max_length=255),
    Str("namespace", max_length=255, doc="Deprecated: the id or path of the namespace"),
    Str("name", max_length=255, check=projects.name_errors),
    Str("path", max_length=255, check=projects.path_errors),
)


def _fork_namespace(ctx: Ctx) -> Namespace:
    args = ctx.args
    wanted = args.get("namespace_id") or args.get("namespace_path") or args.get("namespace")
    if wanted is None:
        return users.personal_namespace(ctx.session, ctx.actor)
    namespace = namespaces.find(ctx.session, str(wanted))
    if namespace is None or not access_service.may_create_in(ctx.session, ctx.actor, namespace):
        raise NotFound("Target Namespace")
    return namespace


@routes.post("/projects/:id/fork", guards=(project_guard(policy.FORK_PROJECT),), params=FORK_PARAMS,
             summary="Fork a project into the caller's namespace or another they may create projects in")  # fmt: skip
def fork_project(ctx: Ctx) -> entities.ProjectV4:
    namespace = _fork_namespace(ctx)
    fork = projects.fork(ctx.session, ctx.rt, ctx.actor, ctx.project, namespace, ctx.args.get("name"), ctx.args.get("path"))
    return _written(ctx, fork)


@routes.post("/projects/:id/fork/:forked_from_id", guards=(ADMIN,),
             summary="Mark a project as a fork of another the caller may fork")  # fmt: skip
def create_fork_relation(ctx: Ctx) -> entities.ProjectV4:
    source, access = load_project(ctx, "forked_from_id", not_found="Source Project")
    if not access.can(policy.FORK_PROJECT):
        raise NotFound("Source Project")
    projects.link_fork(ctx.session, ctx.project, source)
    return _written(ctx, ctx.project)


@routes.delete("/projects/:id/fork", guards=(project_guard(policy.REMOVE_FORK),), status=204,
               summary="Remove the forked-from relation (304 when there is none)")  # fmt: skip
def delete_fork_relation(ctx: Ctx) -> Reply[None]:
    if projects.unlink_fork(ctx.session, ctx.project) is None:
        return Reply(None, status=304)
    return Reply(None)


# --- stars, archiving, transfer -------------------------------------------------------------------


def _star(ctx: Ctx, starred: bool) -> Reply[entities.ProjectV4]:
    if not projects.set_star(ctx.session, ctx.actor.id, ctx.project, starred):
        return Reply(None, status=304)
    return Reply(_written(ctx, ctx.project))


@routes.post("/projects/:id/star", guards=(READ,), summary="Star a project (304 when already starred)")
def star_project(ctx: Ctx) -> Reply[entities.ProjectV4]:
    return _star(ctx, True)


@routes.post("/projects/:id/unstar", guards=(READ,), summary="Unstar a project (304 when not starred)")
def unstar_project(ctx: Ctx) -> Reply[entities.ProjectV4]:
    return _star(ctx, False)


@routes.get("/projects/:id/starrers", auth="optional", guards=(READ,), paginated=True, params=(Str("search", max_length=255),),
            summary="The users who starred a project, newest first")  # fmt: skip
def list_starrers(ctx: Ctx) -> paging.Page[entities.Starrer]:
    window, view = paging.window(ctx), ctx.view
    total, found = projects.starrers(ctx.session, ctx.project_id, window.offset, window.limit, ctx.args.get("search"))
    starrers = [{"starred_since": iso(since), "user": user_basic(user, view)} for since, user in found]
    return paging.Page(starrers, total, window)


ARCHIVE = (project_guard(policy.ARCHIVE_PROJECT),)


def _archived(ctx: Ctx, archived: bool) -> entities.ProjectV4:
    projects.set_archived(ctx.project, archived)
    return _written(ctx, ctx.project)


@routes.post("/projects/:id/archive", guards=ARCHIVE, summary="Archive a project")
def archive_project(ctx: Ctx) -> entities.ProjectV4:
    return _archived(ctx, True)


@routes.post("/projects/:id/unarchive", guards=ARCHIVE, summary="Unarchive a project")
def unarchive_project(ctx: Ctx) -> entities.ProjectV4:
    return _archived(ctx, False)


@routes.put("/projects/:id/transfer", guards=(project_guard(policy.CHANGE_NAMESPACE),),
            params=(Str("namespace", required=True, max_length=255, doc="The id or path of the namespace"),),
            summary="Move a project into another namespace the caller may create projects in")  # fmt: skip
def transfer_project(ctx: Ctx) -> entities.ProjectV4:
    namespace = namespaces.find(ctx.session, ctx.args["namespace"])
    if namespace is None or not access_service.may_create_in(ctx.session, ctx.actor, namespace):
        raise NotFound("Namespace")
    return _written(ctx, projects.transfer(ctx.session, ctx.actor, ctx.project, namespace))

