"""Projects: lists, search, get, create (for oneself or, as admin, for a user), edit, delete, fork,
fork relations, stars, archiving, events."""

from __future__ import annotations

from ...db.models import Namespace, is_id
from ...entities import projects as entities
from ...entities.common import iso
from ...entities.events import Event
from ...entities.events import event as event_entity
from ...errors import Forbidden, Invalid, NotFound, RecordNotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, Id, Str, StrList, Url
from ...http.replies import Reply
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import access as access_service
from ...services import events, namespaces, project_reads, projects, users
from ..guards import ADMIN, READ, find_project, load_project, project_guard

routes = Routes()

VISIBILITY_WORDS = {"private": policy.PRIVATE, "internal": policy.INTERNAL, "public": policy.PUBLIC}
LIST_PARAMS = (
    Bool("archived", doc="Only archived (true) or only active (false) projects"),
    Choice("order_by", projects.ORDERABLE, doc="Default created_at"),
    Choice("sort", ("asc", "desc"), doc="Default desc"),
    Str("search", doc="Part of the path, name or description, or of the namespace name"),
    Choice("visibility", tuple(VISIBILITY_WORDS)),
)
FEATURE_PARAMS = tuple(Bool(flag) for flag in projects.FEATURES)
COMMON_PARAMS = (
    Str("description", max_length=2000, nullable=True, multiline=True),
    *FEATURE_PARAMS,
    Bool("public", doc="true: visibility_level 20; false: 0 (visibility_level wins when both are given)"),
    Choice("visibility_level", policy.VISIBILITY_LEVELS),
    StrList("tag_list", item_pattern=r"[^,\n]{1,255}"),
)
CREATE_PARAMS = (
    Str("name", required=True, max_length=255, check=projects.name_errors),
    Str("path", max_length=255, check=projects.path_errors, doc="Default: derived from the name"),
    Id("namespace_id", doc="Default: the caller's namespace"),
    *COMMON_PARAMS,
    Url("import_url", schemes=("http", "https", "git", "ssh")),
)
UPDATE_PARAMS = (
    Str("name", max_length=255, check=projects.name_errors),
    Str("path", max_length=255, check=projects.path_errors),
    Str("default_branch", max_length=255),
    *COMMON_PARAMS,
)


def render(ctx: Ctx, rows: list, *, permissions: bool, in_list: bool) -> list[dict]:
    """Entities from rows of `services.project_reads`."""
    view, secret_key, shared, rendered = ctx.view, ctx.rt.secret_key, {}, []
    administers = project_reads.administered(ctx.actor)
    for row in rows:
        token = projects.runners_token(secret_key, row) if administers(row) else ""
        rendered.append(
            entities.project(row, view, permissions=permissions, runners_token=token, in_list=in_list, shared=shared)
        )
    return rendered


def render_one(ctx: Ctx, project, *, permissions: bool = False) -> dict:
    """The entity of PROJECT (a model just written) as this request's transaction sees it."""
    (row,) = project_reads.rows_for(ctx.session, ctx.actor, [project.id])
    return render(ctx, [row], permissions=permissions, in_list=False)[0]


def filters(ctx: Ctx) -> projects.Filters:
    visibility = ctx.args.get("visibility")
    return projects.Filters(
        archived=ctx.args.get("archived"),
        search=ctx.args.get("search"),
        visibility=VISIBILITY_WORDS[visibility] if visibility else None,
        order_by=ctx.args.get("order_by", "created_at"),
        sort=ctx.args.get("sort", "desc"),
    )


async def listing(ctx: Ctx, scope: str, *, permissions: bool = True, **query) -> paging.Page:
    return await _page(ctx, project_reads.Query(scope, ctx.actor, filters(ctx), **query), permissions)


async def _page(ctx: Ctx, found: project_reads.Query, permissions: bool) -> paging.Page:
    """One page of FOUND. Its statement runs in the database's reader threads: the database's work
    on a page (a millisecond or more: PostgreSQL's in its server, SQLite's with the GIL released)
    would otherwise hold up every other request."""
    window, db = paging.window(ctx), ctx.rt.db
    total, rows = await ctx.off_loop_reads(project_reads.page, db, found, window.offset, window.limit)
    return paging.Page(render(ctx, rows, permissions=permissions, in_list=True), total, window)


@routes.get("/projects", paginated=True, params=LIST_PARAMS, summary="Projects the caller is a member of")
async def list_projects(ctx: Ctx) -> paging.Page[entities.Project]:
    return await listing(ctx, project_reads.MEMBER)


@routes.get("/projects/owned", paginated=True, params=LIST_PARAMS, summary="Projects the caller owns")
async def list_owned(ctx: Ctx) -> paging.Page[entities.Project]:
    return await listing(ctx, project_reads.OWNED)


@routes.get("/projects/starred", paginated=True, params=LIST_PARAMS, summary="Projects the caller starred")
async def list_starred(ctx: Ctx) -> paging.Page[entities.Project]:
    return await listing(ctx, project_reads.STARRED, permissions=False)


@routes.get("/projects/all", admin=True, paginated=True, params=LIST_PARAMS, summary="Every project (admin)")
async def list_all(ctx: Ctx) -> paging.Page[entities.Project]:
    return await listing(ctx, project_reads.ALL)


@routes.get(
    "/projects/search/:query",
    paginated=True,
    summary="Readable projects whose name contains the query",
    params=(Choice("order_by", project_reads.SEARCH_ORDERABLE), Choice("sort", ("asc", "desc"))),
)
async def search_projects(ctx: Ctx) -> paging.Page[entities.Project]:
    search = projects.Filters(order_by=ctx.args.get("order_by"), sort=ctx.args.get("sort", "asc"))
    found = project_reads.Query(project_reads.SEARCH, ctx.actor, search, name=ctx.path_params["query"])
    return await _page(ctx, found, permissions=False)


@routes.get("/projects/:id", summary="A single project (by id or namespace%2Fpath)")
async def get_project(ctx: Ctx) -> entities.Project:
    # The read path: one statement loads the project, what the entity shows and the caller's
    # memberships; the READ guard's rules (404 unless readable) are applied to that row.
    row, _access = await find_project(ctx)
    return render(ctx, [row], permissions=True, in_list=False)[0]


def _create_attrs(ctx: Ctx) -> dict:
    if ctx.args.get("import_url"):
        raise Invalid.field("import_url", "importing a repository from a URL is not supported")
    return dict(ctx.args)


@routes.post("/projects", params=CREATE_PARAMS, summary="Create a project (in the caller's or a given namespace)")
def create_project(ctx: Ctx) -> entities.Project:
    attrs = _create_attrs(ctx)
    namespace_id = attrs.pop("namespace_id", None)
    if namespace_id is None:
        namespace = users.personal_namespace(ctx.session, ctx.actor)
    else:
        namespace = ctx.session.get(Namespace, namespace_id) if is_id(namespace_id) else None
        if namespace is None or not access_service.may_create_in(ctx.session, ctx.actor, namespace):
            raise Invalid.field("namespace", "is not valid")
    project = projects.create(ctx.session, ctx.rt, ctx.actor, namespace, attrs)
    return render_one(ctx, project)


@routes.post(
    "/projects/user/:user_id",
    admin=True,
    params=(*CREATE_PARAMS[:1], *CREATE_PARAMS[3:], Str("default_branch", max_length=255)),
    summary="Create a project owned by a user (admin)",
)
def create_project_for_user(ctx: Ctx) -> entities.Project:
    owner = users.find(ctx.session, ctx.path_int("user_id"))
    if owner is None:
        raise RecordNotFound()
    attrs = _create_attrs(ctx)
    # Created as that user (GitLab ran its create service as them): creator, event and the
    # visibility restrictions are theirs.
    project = projects.create(ctx.session, ctx.rt, owner, users.personal_namespace(ctx.session, owner), attrs)
    return render_one(ctx, project)


@routes.put("/projects/:id", guards=(ADMIN,), params=UPDATE_PARAMS, summary="Edit a project")
def update_project(ctx: Ctx) -> entities.Project:
    attrs = dict(ctx.args)
    if "default_branch" in attrs:
        projects.set_default_branch(ctx.session, ctx.rt, ctx.project, attrs.pop("default_branch"))
    project = projects.update(ctx.session, ctx.actor, ctx.access, ctx.project, attrs)
    return render_one(ctx, project)


@routes.delete("/projects/:id", summary="Delete a project with everything it owns; a second delete answers 200")
def delete_project(ctx: Ctx) -> entities.DeletedProject:
    ident = ctx.path_params["id"]
    if projects.find(ctx.session, ident) is None:
        tombstone = projects.find_tombstone(ctx.session, ident)
        if tombstone is not None and projects.could_have_deleted(ctx.session, ctx.actor, tombstone):
            return {"id": tombstone.object_id, "path_with_namespace": tombstone.label, "deleted_at": iso(tombstone.deleted_at)}
        raise NotFound("Project")
    project, access = load_project(ctx)
    if not access.can(policy.REMOVE_PROJECT):
        raise Forbidden()
    label = project.path_with_namespace
    projects.delete(ctx.session, ctx.rt, ctx.actor, project)
    return {"id": project.id, "path_with_namespace": label, "deleted": True}


@routes.post(
    "/projects/fork/:id",
    guards=(project_guard(policy.FORK_PROJECT),),
    params=(Str("namespace", doc="Id or path of a namespace the caller may create projects in (default: their own)"),),
    summary="Fork a project into the caller's namespace (or another they may create projects in)",
)
def fork_project(ctx: Ctx) -> entities.Project:
    wanted = ctx.args.get("namespace")
    if wanted is None:
        namespace = users.personal_namespace(ctx.session, ctx.actor)
    else:
        namespace = namespaces.find(ctx.session, wanted)
        if namespace is None or not access_service.may_create_in(ctx.session, ctx.actor, namespace):
            raise Invalid.field("namespace", "is not valid")
    project = projects.fork(ctx.session, ctx.rt, ctx.actor, ctx.project, namespace)
    return render_one(ctx, project)


def _fork_link(link) -> entities.ForkLink:
    return {
        "id": link.id,
        "forked_to_project_id": link.forked_to_project_id,
        "forked_from_project_id": link.forked_from_project_id,
        "created_at": iso(link.created_at),
        "updated_at": iso(link.updated_at),
    }


@routes.post("/projects/:id/fork/:forked_from_id", admin=True, guards=(READ,), summary="Mark a project as a fork of another (admin)")
def create_fork_relation(ctx: Ctx) -> entities.ForkLink:
    source, _ = load_project(ctx, "forked_from_id", not_found="Source Project")
    return _fork_link(projects.link_fork(ctx.session, ctx.project, source))


@routes.delete("/projects/:id/fork", admin=True, guards=(READ,), summary="Remove the forked-from relation (admin)")
def delete_fork_relation(ctx: Ctx) -> entities.ForkLink | None:
    link = projects.unlink_fork(ctx.session, ctx.project)
    return _fork_link(link) if link is not None else None


def _star(ctx: Ctx, starred: bool):
    if not projects.set_star(ctx.session, ctx.actor.id, ctx.project, starred):
        return Reply(None, status=304)
    return render_one(ctx, ctx.project)


@routes.post("/projects/:id/star", guards=(READ,), summary="Star a project (304 when already starred)")
def star_project(ctx: Ctx) -> Reply[entities.Project]:
    return _star(ctx, True)


@routes.delete("/projects/:id/star", guards=(READ,), summary="Unstar a project (304 when not starred)")
def unstar_project(ctx: Ctx) -> Reply[entities.Project]:
    return _star(ctx, False)


@routes.post("/projects/:id/archive", guards=(project_guard(policy.ARCHIVE_PROJECT),), summary="Archive a project")
def archive_project(ctx: Ctx) -> entities.Project:
    projects.set_archived(ctx.project, True)
    return render_one(ctx, ctx.project)


@routes.post("/projects/:id/unarchive", guards=(project_guard(policy.ARCHIVE_PROJECT),), summary="Unarchive a project")
def unarchive_project(ctx: Ctx) -> entities.Project:
    projects.set_archived(ctx.project, False)
    return render_one(ctx, ctx.project)


# python-gitlab 1.4 sends unarchive as DELETE and expects 201.
routes.add(
    "DELETE",
    "/projects/:id/unarchive",
    unarchive_project,
    guards=(project_guard(policy.ARCHIVE_PROJECT),),
    status=201,
    summary="Unarchive a project (the verb python-gitlab 1.4 uses)",
)


@routes.get("/projects/:id/events", guards=(READ,), paginated=True, summary="Project events, newest first")
async def list_events(ctx: Ctx) -> paging.Page[Event]:
    window, view = paging.window(ctx), ctx.view
    total, listed = await events.read_page(ctx.rt.db, ctx.project_id, window.offset, window.limit)
    rendered = [event_entity(row, view, events.action_name(row), author, note) for row, author, note in listed]
    return paging.Page(rendered, total, window)

