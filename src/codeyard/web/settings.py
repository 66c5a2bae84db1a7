"""Project settings for those with `admin_project` (masters, owners, admins): members, webhooks with
their delivery log and redeliver, protected branches. Forms are checked with the API's parameter
declarations and changed through the API's services."""

from __future__ import annotations

from starlette.responses import Response

from ..db.models import ProjectMember
from ..db.readers import now
from ..errors import NotFound
from ..http.context import Ctx
from ..http.hook_params import HOOK_PARAMS
from ..http.params import Bool, Choice, validate
from ..policies import projects as policy
from ..services import branches, hooks, identity, members, protected_branches, webhooks
from .core import Pages, form, redirect, shown
from .projects import load
from .repository import PER_PAGE, PROJECT, _page_number, _render

pages = Pages()

MEMBERS = PROJECT + "/project_members"
HOOKS = PROJECT + "/hooks"
PROTECTED = PROJECT + "/protected_branches"
LEVEL = Choice("access_level", policy.ACCESS_LEVELS, required=True)


def _admin(ctx: Ctx):
    return load(ctx, policy.ADMIN_PROJECT)


# --- members ------------------------------------------------------------------------------------


@pages.page(MEMBERS)
def members_page(ctx: Ctx) -> Response:
    p = _admin(ctx)
    _total, found = now(members.read_page(ctx.reader, ProjectMember, p.project.id, None, 0, 1000))
    listed = [shown(row, user=row, user_id=row.id) for row in found]
    return _render(ctx, "members.html", p, "members", members=listed, levels=policy.ACCESS_NAMES)


@pages.action(MEMBERS)
def add_member(ctx: Ctx) -> Response:
    p = _admin(ctx)
    level = validate((LEVEL,), {"access_level": form(ctx, "access_level")})["access_level"]
    user = identity.user_by_id_or_username(ctx.rt.db, form(ctx, "username").strip().lstrip("@"))
    if user is None:
        raise NotFound("User")
    members.add(ctx.session, ctx.actor, p.project, user.id, level)
    return redirect(p.url + "/project_members")


@pages.action(MEMBERS + "/:user_id/remove")
def remove_member(ctx: Ctx) -> Response:
    p = _admin(ctx)
    members.remove(ctx.session, p.project, ctx.path_int("user_id"))
    return redirect(p.url + "/project_members")


# --- webhooks -----------------------------------------------------------------------------------


@pages.page(HOOKS)
def hooks_page(ctx: Ctx) -> Response:
    p = _admin(ctx)
    _total, found = hooks.page(ctx.session, p.project, 0, 1000)
    return _render(ctx, "hooks.html", p, "hooks", hooks=found, flags=hooks.FLAGS)


@pages.action(HOOKS)
def add_hook(ctx: Ctx) -> Response:
    p = _admin(ctx)
    fields = {name: "1" if form(ctx, name) == "1" else "0" for name in hooks.FLAGS}
    fields["url"] = form(ctx, "url")
    if form(ctx, "token"):
        fields["token"] = form(ctx, "token")
    args = validate(HOOK_PARAMS, fields)
    flags = {name: args[name] for name in hooks.FLAGS}
    hooks.create(ctx.session, p.project, args["url"], flags, args.get("token"))
    return redirect(p.url + "/hooks")


@pages.action(HOOKS + "/:hook_id/remove")
def remove_hook(ctx: Ctx) -> Response:
    p = _admin(ctx)
    hooks.delete(ctx.session, p.project, ctx.path_int("hook_id"))
    return redirect(p.url + "/hooks")


@pages.page(HOOKS + "/:hook_id")
def hook_page(ctx: Ctx) -> Response:
    p = _admin(ctx)
    hook = hooks.get(ctx.session, p.project, ctx.path_int("hook_id"))
    number = _page_number(ctx)
    total, found = webhooks.page(ctx.session, hook, (number - 1) * PER_PAGE, PER_PAGE)
    return _render(ctx, "hook.html", p, "hooks", hook=hook, deliveries=found, page=number,
                   pages=max(1, -(-total // PER_PAGE)), flags=hooks.FLAGS)  # fmt: skip


@pages.action(HOOKS + "/:hook_id/deliveries/:delivery_id/redeliver")
def redeliver(ctx: Ctx) -> Response:
    p = _admin(ctx)
    hook = hooks.get(ctx.session, p.project, ctx.path_int("hook_id"))
    webhooks.redeliver(ctx.session, hook, ctx.path_int("delivery_id"))
    return redirect(f"{p.url}/hooks/{hook.id}")


# --- protected branches -------------------------------------------------------------------------


@pages.page(PROTECTED)
def protected_page(ctx: Ctx) -> Response:
    p = _admin(ctx)
    found = sorted(protected_branches.protections(ctx.session, p.project).values(), key=lambda row: row.name)
    return _render(ctx, "protected_branches.html", p, "protected", protected=found)


@pages.action(PROTECTED)
def protect(ctx: Ctx) -> Response:
    p = _admin(ctx)
    args = validate((Bool("developers_can_push"),), {"developers_can_push": "1" if form(ctx, "developers_can_push") == "1" else "0"})
    branches.protect(ctx.session, ctx.rt, p.project, form(ctx, "name"), args["developers_can_push"])
    return redirect(p.url + "/protected_branches")


@pages.action(PROTECTED + "/unprotect")
def unprotect(ctx: Ctx) -> Response:
    p = _admin(ctx)
    branches.unprotect(ctx.session, ctx.rt, p.project, form(ctx, "name"))
    return redirect(p.url + "/protected_branches")
