"""Groups and their members."""

from __future__ import annotations

from ...db.models import GroupMember
from ...entities.common import Revoked, iso
from ...entities.groups import DeletedGroup, Group, GroupDetail
from ...entities.groups import group as group_entity
from ...entities.members import Member
from ...entities.members import member as member_entity
from ...entities.projects import Project
from ...errors import NotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice, Id, Str
from ...http.routing import Routes
from ...policies import groups as group_policy
from ...policies.projects import ACCESS_LEVELS, VISIBILITY_LEVELS
from ...services import groups, members, project_reads, projects
from ..common.groups import NAME, PATH
from ..guards import group_guard, load_project
from .projects import LIST_PARAMS, listing, render

routes = Routes()

READ = (group_guard(),)
ADMIN = (group_guard(group_policy.ADMIN_GROUP),)
ADMIN_MEMBERS = (group_guard(group_policy.ADMIN_GROUP_MEMBER),)
GROUP_FIELDS = (
    Str("description", max_length=2000, nullable=True, multiline=True),
    Choice("visibility_level", VISIBILITY_LEVELS),
)


@routes.post(
    "/groups",
    params=(NAME.as_required(), PATH.as_required(), *GROUP_FIELDS),
    summary="Create a group; the caller becomes its owner",
)
def create_group(ctx: Ctx) -> Group:
    return group_entity(groups.create(ctx.session, ctx.actor, ctx.args), ctx.view)


@routes.get("/groups", paginated=True, params=(Str("search"),), summary="Groups of the caller (all, for admins)")
async def list_groups(ctx: Ctx) -> paging.Page[Group]:
    window = paging.window(ctx)
    total, found = await groups.read_visible(ctx.rt.db, ctx.actor, ctx.args.get("search"), window.offset, window.limit)
    return paging.Page([group_entity(row, ctx.view) for row in found], total, window)


@routes.get("/groups/:id", guards=READ, summary="A group (by id or path) with the projects the caller may read")
async def get_group(ctx: Ctx) -> GroupDetail:
    data = group_entity(ctx.group_row, ctx.view)
    # Every project of the group in one statement, in the reader threads as a page of projects.
    rows = await ctx.off_loop_reads(project_reads.group_rows, ctx.rt.db, ctx.actor, ctx.group_id)
    data["projects"] = render(ctx, rows, permissions=False, in_list=True)
    return data


@routes.get("/groups/:id/projects", guards=READ, paginated=True, params=LIST_PARAMS, summary="Projects of a group the caller may read")
async def list_group_projects(ctx: Ctx) -> paging.Page[Project]:
    return await listing(ctx, project_reads.GROUP, permissions=False, group_id=ctx.group_id)


@routes.post("/groups/:id/projects/:project_id", admin=True, guards=READ, summary="Move a project into the group (admin)")
def transfer_project(ctx: Ctx) -> Group:
    project, _ = load_project(ctx, "project_id")
    projects.transfer(ctx.session, ctx.actor, project, ctx.group)
    return group_entity(ctx.group, ctx.view)


@routes.put(
    "/groups/:id",
    guards=ADMIN,
    params=(NAME, PATH, *GROUP_FIELDS),
    summary="Change a group (owners)",
)
def update_group(ctx: Ctx) -> Group:
    return group_entity(groups.update(ctx.session, ctx.actor, ctx.group, ctx.args), ctx.view)


@routes.delete("/groups/:id", summary="Delete a group with its projects (owners); a second delete answers 200")
async def delete_group(ctx: Ctx) -> Group | DeletedGroup:
    ident = ctx.path_params["id"]
    group = groups.find(ctx.session, ident)
    if group is None:
        tombstone = groups.tombstone(ctx.session, ident)
        if tombstone is not None and (ctx.actor.is_admin or tombstone.deleted_by_id == ctx.actor.id):
            return {"id": tombstone.object_id, "path": tombstone.label, "deleted_at": iso(tombstone.deleted_at)}
        raise NotFound("Group")
    await group_guard(group_policy.ADMIN_GROUP)(ctx)
    rendered = group_entity(group, ctx.view)
    groups.delete(ctx.session, ctx.rt, ctx.actor, group)
    return rendered


# --- members --------------------------------------------------------------------------------------

LEVEL = Choice("access_level", ACCESS_LEVELS, required=True)


def _member(ctx: Ctx, row) -> dict:
    return member_entity(row.user, row.access_level, ctx.view)


@routes.get(
    "/groups/:id/members", guards=READ, paginated=True, params=(Str("query", max_length=255),), summary="Members of a group"
)
async def list_group_members(ctx: Ctx) -> paging.Page[Member]:
    window = paging.window(ctx)
    query = ctx.args.get("query")
    total, rows = await members.read_page(ctx.rt.db.loop, GroupMember, ctx.group_id, query, window.offset, window.limit)
    return paging.Page([member_entity(row, row.access_level, ctx.view) for row in rows], total, window)


@routes.get("/groups/:id/members/:user_id", guards=READ, summary="A member of a group")
async def get_group_member(ctx: Ctx) -> Member:
    row = await members.read_one(ctx.rt.db.loop, GroupMember, ctx.group_id, ctx.path_int("user_id"))
    return member_entity(row, row.access_level, ctx.view)


@routes.post(
    "/groups/:id/members",
    guards=ADMIN_MEMBERS,
    params=(Id("user_id", required=True), LEVEL),
    summary="Add a member to a group (owners); 409 when already a member",
)
def add_group_member(ctx: Ctx) -> Member:
    return _member(ctx, groups.add_member(ctx.session, ctx.actor, ctx.group, ctx.args["user_id"], ctx.args["access_level"]))


@routes.put("/groups/:id/members/:user_id", guards=ADMIN_MEMBERS, params=(LEVEL,), summary="Change a group member's level")
def update_group_member(ctx: Ctx) -> Member:
    row = groups.change_member_level(ctx.session, ctx.group, ctx.path_int("user_id"), ctx.args["access_level"])
    return _member(ctx, row)


@routes.delete("/groups/:id/members/:user_id", guards=ADMIN_MEMBERS, summary="Remove a group member (idempotent)")
def remove_group_member(ctx: Ctx) -> Member | Revoked:
    user_id = ctx.path_int("user_id")
    row = groups.remove_member(ctx.session, ctx.group, user_id)
    return _member(ctx, row) if row is not None else {"message": "Access revoked", "id": user_id}
