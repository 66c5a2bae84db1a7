"""Users: the caller, the directory, and admin management (create, edit, block, delete)."""

from __future__ import annotations

from ...entities import users as entities
from ...entities.common import iso
from ...errors import NotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Str
from ...http.routing import Routes
from ...services import users
from ..common.users import CREATE_PARAMS, EMAIL, NAME, PASSWORD, PROFILE_PARAMS, USERNAME, fields_from

routes = Routes()







def _full(ctx: Ctx, user) -> dict:
    return entities.user_full(user, ctx.view, users.can_create_project(ctx.session, user))


async def _password_digest(ctx: Ctx) -> str | None:
    password = ctx.args.get("password")
    return await ctx.rt.password_gate.hash(password) if password else None


@routes.get("/user", summary="The authenticated user, with the private token it used")
def current_user(ctx: Ctx) -> entities.UserLogin:
    can_create = users.caller_can_create_project(ctx.actor)
    return entities.user_login(ctx.actor, ctx.view, can_create, ctx.private_token)


@routes.get(
    "/users",
    paginated=True,
    summary="List users (full records for admins)",
    params=(Str("search"), Str("username"), Bool("active")),
)
async def list_users(ctx: Ctx) -> paging.Page[entities.UserFull | entities.UserBasic]:
    window = paging.window(ctx)
    total, rows = await users.read_directory(
        ctx.rt.db,
        text=ctx.args.get("search"),
        username=ctx.args.get("username"),
        active_only=ctx.args.get("active", False),
        offset=window.offset,
        limit=window.limit,
    )
    if ctx.actor.is_admin:
        items = [entities.user_full(row, ctx.view, users.caller_can_create_project(row)) for row in rows]
    else:
        items = [entities.user_basic(row, ctx.view) for row in rows]
    return paging.Page(items, total, window)


@routes.get("/users/:id", summary="A single user")
async def get_user(ctx: Ctx) -> entities.UserFull | entities.User:
    row = await users.read_record(ctx.rt.db, ctx.path_int("id"))
    if ctx.actor.is_admin:
        return entities.user_full(row, ctx.view, users.caller_can_create_project(row))
    return entities.user(row, ctx.view)


@routes.post(
    "/users",
    admin=True,
    summary="Create a user (admin)",
    params=CREATE_PARAMS,
)
async def create_user(ctx: Ctx) -> entities.UserFull:
    digest = await _password_digest(ctx)
    return _full(ctx, users.create(ctx.session, fields_from(ctx.args), digest))


@routes.put(
    "/users/:id",
    admin=True,
    summary="Edit a user (admin)",
    params=(EMAIL, PASSWORD, NAME, USERNAME, *PROFILE_PARAMS),
)
async def update_user(ctx: Ctx) -> entities.UserFull:
    user_id = ctx.path_int("id")
    digest = await _password_digest(ctx)
    user = users.get_record(ctx.session, user_id)
    return _full(ctx, users.update(ctx.session, user, fields_from(ctx.args), digest))


@routes.delete("/users/:id", admin=True, summary="Delete a user with their personal projects (admin)")
def delete_user(ctx: Ctx) -> entities.UserFull | entities.DeletedUser:
    user_id = ctx.path_int("id", not_found=lambda: NotFound("User"))
    user = users.find(ctx.session, user_id)
    if user is None:
        tombstone = users.tombstone(ctx.session, user_id)
        if tombstone is None:
            raise NotFound("User")
        return {"id": user_id, "username": tombstone.label, "deleted_at": iso(tombstone.deleted_at)}
    rendered = _full(ctx, user)
    users.delete(ctx.session, ctx.rt, user, ctx.actor)
    return rendered


@routes.put("/users/:id/block", admin=True, summary="Block a user (admin); true when the state changed")
def block_user(ctx: Ctx) -> bool:
    user = users.get(ctx.session, ctx.path_int("id", not_found=lambda: NotFound("User")))
    return users.set_state(ctx.session, user, "blocked")


@routes.put("/users/:id/unblock", admin=True, summary="Unblock a user (admin); true when the state changed")
def unblock_user(ctx: Ctx) -> bool:
    user = users.get(ctx.session, ctx.path_int("id", not_found=lambda: NotFound("User")))
    return users.set_state(ctx.session, user, "active")
