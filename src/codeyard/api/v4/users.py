"""Users in v4: the caller, the directory, admin management (create, edit, block, deactivate,
delete) and secondary e-mails. The services are v3's; v4's names, statuses and shapes are here."""

from __future__ import annotations

from ...entities.v4 import users as entities
from ...errors import MissingParam, NotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, Email, Str
from ...http.routing import Routes
from ...services import groups, users
from ..common.users import CREATE_PARAMS, EMAIL, NAME, PASSWORD, PROFILE_PARAMS, USERNAME, fields_from
from ..guards import users_guard

routes = Routes()

# GitLab v4: a new user gets a password, or none until an admin sets one (codeyard sends no mail,
# so `reset_password` and `force_random_password` both leave the account without a password).
PASSWORD_CHOICES = ("password", "reset_password", "force_random_password")
V4_CREATE_PARAMS = (
    *(param for param in CREATE_PARAMS if param.name != "password"),
    PASSWORD,
    Bool("reset_password", doc="No password is set; an admin sets one later (codeyard sends no mail)"),
    Bool("force_random_password", doc="As reset_password"),
    Bool("skip_confirmation", doc="Accounts are confirmed when created (codeyard sends no mail)"),
)
ORDER = (
    Choice("order_by", tuple(users.DIRECTORY_ORDERS), doc="Admins only; default id"),
    Choice("sort", ("asc", "desc"), doc="Admins only; default desc"),
)


def not_found() -> NotFound:
    return NotFound("User")


def _target(ctx: Ctx, param: str = "id"):
    """The user named by the path parameter PARAM, in the request's session; 404 `404 User Not Found`."""
    return users.get(ctx.session, ctx.path_int(param, not_found=not_found))


def _admin_view(ctx: Ctx, user) -> entities.UserV4:
    return entities.user_self(user, ctx.view, users.can_create_project(ctx.session, user))


async def _password_digest(ctx: Ctx) -> str | None:
    password = ctx.args.get("password")
    return await ctx.rt.password_gate.hash(password) if password else None


@routes.get("/user", summary="The authenticated user")
def current_user(ctx: Ctx) -> entities.UserV4:
    return entities.user_self(ctx.actor, ctx.view, users.caller_can_create_project(ctx.actor))


@routes.get(
    "/users",
    auth="optional",
    guards=(users_guard(),),
    paginated=True,
    summary="Users, newest first (full records for admins)",
    params=(Str("search"), Str("username"), Bool("active"), Bool("blocked"), Bool("external"), *ORDER),
)
async def list_users(ctx: Ctx) -> paging.Page[entities.UserV4 | entities.UserV4Basic]:
    window = paging.window(ctx)
    admin = ctx.by_admin
    # GitLab reads order_by and sort from admins only; everyone else gets the newest first.
    order = (ctx.args.get("order_by", "id"), ctx.args.get("sort", "desc") == "desc") if admin else ("id", True)
    total, rows = await users.read_directory(
        ctx.rt.db,
        text=ctx.args.get("search"),
        username=ctx.args.get("username"),
        active_only=ctx.args.get("active", False),
        blocked_only=ctx.args.get("blocked", False),
        external_only=ctx.args.get("external", False),
        order=order,
        offset=window.offset,
        limit=window.limit,
    )
    if admin:
        items = [entities.user_self(row, ctx.view, users.caller_can_create_project(row)) for row in rows]
    else:
        items = [entities.user_basic(row, ctx.view) for row in rows]
    return paging.Page(items, total, window)


@routes.get("/users/:id", auth="optional", guards=(users_guard(not_found),), summary="A single user (the full record for admins)")
async def get_user(ctx: Ctx) -> entities.UserV4 | entities.UserV4Public:
    row = await users.read_record(ctx.rt.db, ctx.path_int("id", not_found=not_found), missing=not_found)
    if ctx.by_admin:
        return entities.user_self(row, ctx.view, users.caller_can_create_project(row))
    return entities.user_public(row, ctx.view)


@routes.post("/users", admin=True, summary="Create a user (admin)", params=V4_CREATE_PARAMS)
async def create_user(ctx: Ctx) -> entities.UserV4:
    if not any(ctx.args.get(name) for name in PASSWORD_CHOICES):
        raise MissingParam("password")
    digest = await _password_digest(ctx)
    return _admin_view(ctx, users.create(ctx.session, fields_from(ctx.args), digest))


@routes.put(
    "/users/:id",
    admin=True,
    summary="Edit a user (admin)",
    params=(EMAIL, PASSWORD, NAME, USERNAME, *PROFILE_PARAMS, Bool("skip_reconfirmation")),
)
async def update_user(ctx: Ctx) -> entities.UserV4:
    user_id = ctx.path_int("id", not_found=not_found)
    digest = await _password_digest(ctx)
    user = users.get(ctx.session, user_id)
    return _admin_view(ctx, users.update(ctx.session, user, fields_from(ctx.args), digest))


@routes.delete(
    "/users/:id",
    admin=True,
    status=204,
    params=(Bool("hard_delete", doc="Also delete the groups the user alone owns"),),
    summary="Delete a user with their personal projects (admin)",
)
def delete_user(ctx: Ctx) -> None:
    user = _target(ctx)
    users.delete(ctx.session, ctx.rt, user, ctx.actor, solely_owned=groups.delete if ctx.args.get("hard_delete") else None)


@routes.post("/users/:id/block", admin=True, summary="Block a user (admin); null when already blocked")
def block_user(ctx: Ctx) -> bool | None:
    return users.block(ctx.session, _target(ctx), ctx.actor)


@routes.post("/users/:id/unblock", admin=True, summary="Unblock a user (admin); false when not blocked")
def unblock_user(ctx: Ctx) -> bool:
    return users.unblock(ctx.session, _target(ctx))


@routes.post("/users/:id/deactivate", admin=True, summary="Deactivate a user (admin); null when already deactivated")
def deactivate_user(ctx: Ctx) -> bool | None:
    return users.deactivate(ctx.session, _target(ctx), ctx.actor)


@routes.post("/users/:id/activate", admin=True, summary="Activate a deactivated user (admin); false when active")
def activate_user(ctx: Ctx) -> bool:
    return users.activate(ctx.session, _target(ctx))


# --- secondary e-mails ------------------------------------------------------------------------------

NEW_EMAIL = (Email("email", required=True), Bool("skip_confirmation", doc="Addresses are confirmed when added"))


async def _emails(ctx: Ctx, user_id: int) -> paging.Page[entities.Email]:
    window = paging.window(ctx)
    total, rows = await users.read_emails(ctx.rt.db.loop, user_id, window.offset, window.limit)
    return paging.Page([entities.email(row) for row in rows], total, window)


def _email_of(ctx: Ctx, user) -> entities.Email:
    found = users.find_email(ctx.session, user, ctx.path_int("email_id", not_found=lambda: NotFound("Email")))
    if found is None:
        raise NotFound("Email")
    return entities.email(found)


@routes.get("/user/emails", paginated=True, summary="The caller's secondary e-mails")
async def list_own_emails(ctx: Ctx) -> paging.Page[entities.Email]:
    return await _emails(ctx, ctx.actor.id)


@routes.get("/user/emails/:email_id", summary="One of the caller's secondary e-mails")
def get_own_email(ctx: Ctx) -> entities.Email:
    return _email_of(ctx, ctx.actor)


@routes.post("/user/emails", params=NEW_EMAIL, summary="Add a secondary e-mail to the caller")
def add_own_email(ctx: Ctx) -> entities.Email:
    return entities.email(users.add_email(ctx.session, ctx.actor, ctx.args["email"]))


@routes.delete("/user/emails/:email_id", status=204, summary="Remove one of the caller's secondary e-mails")
def delete_own_email(ctx: Ctx) -> None:
    users.delete_email(ctx.session, ctx.actor, ctx.path_int("email_id", not_found=lambda: NotFound("Email")))


@routes.get("/users/:id/emails", admin=True, paginated=True, summary="A user's secondary e-mails (admin)")
async def list_user_emails(ctx: Ctx) -> paging.Page[entities.Email]:
    user = await users.read_record(ctx.rt.db, ctx.path_int("id", not_found=not_found), missing=not_found)
    return await _emails(ctx, user.id)


@routes.post("/users/:id/emails", admin=True, params=NEW_EMAIL, summary="Add a secondary e-mail to a user (admin)")
def add_user_email(ctx: Ctx) -> entities.Email:
    return entities.email(users.add_email(ctx.session, _target(ctx), ctx.args["email"]))


@routes.delete("/users/:id/emails/:email_id", admin=True, status=204, summary="Remove a user's secondary e-mail (admin)")
def delete_user_email(ctx: Ctx) -> None:
    users.delete_email(ctx.session, _target(ctx), ctx.path_int("email_id", not_found=lambda: NotFound("Email")))

