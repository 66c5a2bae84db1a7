"""Members of projects and groups in v4, with `/members/all`.

The rules are v3's (services/members.py for projects, services/groups.py for groups) and so are the
guards: reading a project's members needs read_project_member, changing them admin_project_member
(maintainer and up); a group's members are read by whoever reads the group and changed by its
owners; a project or group the caller may not read is 404. v4 answers GitLab's newer statuses: an
existing member is 409, a removal 204, and a missing one 404.

`/projects/:id/members/all` is the project's direct members and its group's, each user once at their
highest level; a group has no ancestors, so its `/members/all` is its own members.
"""

from __future__ import annotations

from ...db.readers import now
from ...entities.v4.members import MemberV4, member
from ...errors import Conflict, Invalid, MissingParam, NotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice, Id, Str
from ...http.routing import Routes
from ...policies import groups as group_policy
from ...policies import projects as policy
from ...services import groups, members, users
from ..guards import group_guard, project_guard

routes = Routes()

READ_PROJECT = (project_guard(policy.READ_MEMBERS),)
ADMIN_PROJECT = (project_guard(policy.ADMIN_MEMBERS),)
READ_GROUP = (group_guard(),)
ADMIN_GROUP = (group_guard(group_policy.ADMIN_GROUP_MEMBER),)

LEVEL = Choice("access_level", policy.ACCESS_LEVELS, doc="10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner")
EXPIRES_AT = Str("expires_at", nullable=True, doc="Not served: only null (no expiry) is accepted")
QUERY = (Str("query", max_length=255, doc="Part of the username or name (any case)"),)
ADD = (Id("user_id"), Str("username", max_length=255), LEVEL.as_required(), EXPIRES_AT)
EDIT = (LEVEL.as_required(), EXPIRES_AT)


def _no_expiry(ctx: Ctx) -> None:
    if ctx.args.get("expires_at") is not None:
        raise Invalid({"expires_at": ["membership expiry is not supported"]})


def _new_member_id(ctx: Ctx) -> int:
    """The user to add: `user_id`, or the user named `username`; 404 `404 User Not Found`."""
    _no_expiry(ctx)
    if "user_id" in ctx.args:
        return ctx.args["user_id"]
    name = ctx.args.get("username")
    if name is None:
        raise MissingParam("user_id")
    found = users.find_by_login(ctx.session, name) if "@" not in name else None
    if found is None:
        raise NotFound("User")
    return found.id


async def _page(ctx: Ctx, kind: str, owner_id: int, namespace_id: int | None = None) -> paging.Page[MemberV4]:
    window = paging.window(ctx)
    total, found = await members.read_v4_page(
        ctx.rt.db.loop, kind, owner_id, ctx.args.get("query"), window.offset, window.limit, namespace_id
    )
    return paging.Page([member(row, creator, ctx.view) for row, creator in found], total, window)


async def _one(ctx: Ctx, kind: str, owner_id: int, namespace_id: int | None = None) -> MemberV4:
    row, creator = await members.read_v4_one(ctx.rt.db.loop, kind, owner_id, ctx.path_int("user_id"), namespace_id)
    return member(row, creator, ctx.view)


def _written(ctx: Ctx, kind: str, owner_id: int, user_id: int) -> MemberV4:
    """The membership just written, read in the request's transaction."""
    row, creator = now(members.read_v4_one(ctx.reader, kind, owner_id, user_id))
    return member(row, creator, ctx.view)


# --- projects ------------------------------------------------------------------------------------


@routes.get("/projects/:id/members", auth="optional", guards=READ_PROJECT, paginated=True, params=QUERY, summary="Direct members of a project")
async def list_project_members(ctx: Ctx) -> paging.Page[MemberV4]:
    return await _page(ctx, members.PROJECT, ctx.project_id)


@routes.get(
    "/projects/:id/members/all",
    auth="optional",
    guards=READ_PROJECT,
    paginated=True,
    params=QUERY,
    summary="Members of a project and of its group, each at their highest level",
)
async def list_all_project_members(ctx: Ctx) -> paging.Page[MemberV4]:
    return await _page(ctx, members.PROJECT_ALL, ctx.project_id, ctx.project_row.namespace_id)


@routes.get("/projects/:id/members/:user_id", auth="optional", guards=READ_PROJECT, summary="A direct member of a project")
async def get_project_member(ctx: Ctx) -> MemberV4:
    return await _one(ctx, members.PROJECT, ctx.project_id)


@routes.get("/projects/:id/members/all/:user_id", auth="optional", guards=READ_PROJECT, summary="A member of a project or of its group")
async def get_any_project_member(ctx: Ctx) -> MemberV4:
    return await _one(ctx, members.PROJECT_ALL, ctx.project_id, ctx.project_row.namespace_id)


def _add(ctx: Ctx, kind: str, owner_id: int, existing, add) -> MemberV4:
    """Add the user named (EXISTING(user_id): their membership, ADD(user_id, level): the service's)."""
    user_id = _new_member_id(ctx)
    if existing(user_id) is not None:
        raise Conflict("Member already exists")
    add(user_id, ctx.args["access_level"])
    return _written(ctx, kind, owner_id, user_id)


def _edit(ctx: Ctx, kind: str, owner_id: int, change) -> MemberV4:
    _no_expiry(ctx)
    user_id = ctx.path_int("user_id")
    change(user_id, ctx.args["access_level"])
    return _written(ctx, kind, owner_id, user_id)


def _remove(ctx: Ctx, get, remove) -> None:
    """GET(user_id) raises 404 `404 Not found` for a user who is no member."""
    user_id = ctx.path_int("user_id")
    get(user_id)
    remove(user_id)


@routes.post("/projects/:id/members", guards=ADMIN_PROJECT, params=ADD, summary="Add a member to a project; 409 when already one")
def add_project_member(ctx: Ctx) -> MemberV4:
    session, project = ctx.session, ctx.project
    return _add(
        ctx, members.PROJECT, ctx.project_id,
        lambda user_id: members.find(session, project, user_id),
        lambda user_id, level: members.add(session, ctx.actor, project, user_id, level),
    )  # fmt: skip


@routes.put("/projects/:id/members/:user_id", guards=ADMIN_PROJECT, params=EDIT, summary="Change a project member's level")
def edit_project_member(ctx: Ctx) -> MemberV4:
    return _edit(ctx, members.PROJECT, ctx.project_id, lambda user_id, level: members.change_level(ctx.session, ctx.project, user_id, level))


@routes.delete("/projects/:id/members/:user_id", guards=ADMIN_PROJECT, status=204, summary="Remove a member of a project")
def remove_project_member(ctx: Ctx) -> None:
    session, project = ctx.session, ctx.project
    _remove(ctx, lambda user_id: members.get(session, project, user_id), lambda user_id: members.remove(session, project, user_id))


# --- groups --------------------------------------------------------------------------------------


@routes.get("/groups/:id/members", auth="optional", guards=READ_GROUP, paginated=True, params=QUERY, summary="Members of a group")
async def list_group_members(ctx: Ctx) -> paging.Page[MemberV4]:
    return await _page(ctx, members.GROUP, ctx.group_id)


@routes.get("/groups/:id/members/all", auth="optional", guards=READ_GROUP, paginated=True, params=QUERY, summary="Members of a group (it has no ancestors)")
async def list_all_group_members(ctx: Ctx) -> paging.Page[MemberV4]:
    return await _page(ctx, members.GROUP, ctx.group_id)


@routes.get("/groups/:id/members/:user_id", auth="optional", guards=READ_GROUP, summary="A member of a group")
async def get_group_member(ctx: Ctx) -> MemberV4:
    return await _one(ctx, members.GROUP, ctx.group_id)


@routes.get("/groups/:id/members/all/:user_id", auth="optional", guards=READ_GROUP, summary="A member of a group (it has no ancestors)")
async def get_any_group_member(ctx: Ctx) -> MemberV4:
    return await _one(ctx, members.GROUP, ctx.group_id)


@routes.post("/groups/:id/members", guards=ADMIN_GROUP, params=ADD, summary="Add a member to a group (owners); 409 when already one")
def add_group_member(ctx: Ctx) -> MemberV4:
    session, group = ctx.session, ctx.group
    return _add(
        ctx, members.GROUP, ctx.group_id,
        lambda user_id: groups.find_member(session, group, user_id),
        lambda user_id, level: groups.add_member(session, ctx.actor, group, user_id, level),
    )  # fmt: skip


@routes.put("/groups/:id/members/:user_id", guards=ADMIN_GROUP, params=EDIT, summary="Change a group member's level (owners)")
def edit_group_member(ctx: Ctx) -> MemberV4:
    return _edit(ctx, members.GROUP, ctx.group_id, lambda user_id, level: groups.change_member_level(ctx.session, ctx.group, user_id, level))


@routes.delete("/groups/:id/members/:user_id", guards=ADMIN_GROUP, status=204, summary="Remove a member of a group (owners)")
def remove_group_member(ctx: Ctx) -> None:
    session, group = ctx.session, ctx.group
    _remove(ctx, lambda user_id: groups.get_member(session, group, user_id), lambda user_id: groups.remove_member(session, group, user_id))
