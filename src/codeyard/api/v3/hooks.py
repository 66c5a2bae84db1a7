"""Project hooks (`/projects/:id/hooks`) and their deliveries: masters, owners and admins only (403
for readers below master, 404 for callers who cannot see the project)."""

from __future__ import annotations

from ...entities.hooks import Delivery, DeliveryDetail, Hook, Queued, queued
from ...entities.hooks import delivery as delivery_entity
from ...entities.hooks import hook as hook_entity
from ...entities.pushes import push_payload
from ...git.refs import HEADS, ZERO_SHA
from ...http import paging
from ...http.context import Ctx
from ...http.hook_params import HOOK_PARAMS
from ...http.routing import Routes
from ...services import hooks, webhooks
from ...services.ref_updates import RefUpdate
from ..guards import ADMIN

routes = Routes()


def hook_exists(ctx: Ctx) -> None:
    """Guard: the hook is looked up before the parameters are checked (404 before 400)."""
    hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id"))


def _flags(ctx: Ctx) -> dict:
    return {name: ctx.args[name] for name in hooks.FLAGS if name in ctx.args}


@routes.get("/projects/:id/hooks", guards=(ADMIN,), paginated=True, summary="Hooks of a project")
def list_hooks(ctx: Ctx) -> paging.Page[Hook]:
    window = paging.window(ctx)
    total, found = hooks.page(ctx.session, ctx.project, window.offset, window.limit)
    return paging.Page([hook_entity(hook) for hook in found], total, window)


@routes.get("/projects/:id/hooks/:hook_id", guards=(ADMIN,), summary="One hook of a project")
def get_hook(ctx: Ctx) -> Hook:
    return hook_entity(hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id")))


@routes.post("/projects/:id/hooks", guards=(ADMIN,), params=HOOK_PARAMS, summary="Add a hook to a project")
def add_hook(ctx: Ctx) -> Hook:
    return hook_entity(hooks.create(ctx.session, ctx.project, ctx.args["url"], _flags(ctx), ctx.args.get("token")))


@routes.put("/projects/:id/hooks/:hook_id", guards=(ADMIN, hook_exists), params=HOOK_PARAMS, summary="Edit a hook")
def update_hook(ctx: Ctx) -> Hook:
    hook = hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id"))
    token = ctx.args.get("token", hooks.KEEP)
    return hook_entity(hooks.update(ctx.session, hook, ctx.args["url"], _flags(ctx), token))


@routes.delete("/projects/:id/hooks/:hook_id", guards=(ADMIN,), summary="Delete a hook; null when there was none")
def delete_hook(ctx: Ctx) -> Hook | None:
    hook = hooks.delete(ctx.session, ctx.project, ctx.path_int("hook_id"))
    return hook_entity(hook) if hook is not None else None


# --- deliveries ------------------------------------------------------------------------------------


def _hook(ctx: Ctx):
    return hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id"))


@routes.get("/projects/:id/hooks/:hook_id/deliveries", guards=(ADMIN,), paginated=True,
         summary="Delivery attempts of a hook, newest first")  # fmt: skip
def list_deliveries(ctx: Ctx) -> paging.Page[Delivery]:
    hook = _hook(ctx)
    window = paging.window(ctx)
    total, found = webhooks.page(ctx.session, hook, window.offset, window.limit)
    return paging.Page([delivery_entity(row) for row in found], total, window)


@routes.get("/projects/:id/hooks/:hook_id/deliveries/:delivery_id", guards=(ADMIN,),
         summary="One delivery attempt with its request and response")  # fmt: skip
def get_delivery(ctx: Ctx) -> DeliveryDetail:
    return delivery_entity(webhooks.get(ctx.session, _hook(ctx), ctx.path_int("delivery_id")), full=True)


@routes.post("/projects/:id/hooks/:hook_id/deliveries/:delivery_id/redeliver", guards=(ADMIN,),
          summary="Send a delivery's body again (same delivery id)")  # fmt: skip
def redeliver(ctx: Ctx) -> Queued:
    return queued(webhooks.redeliver(ctx.session, _hook(ctx), ctx.path_int("delivery_id")))


@routes.post("/projects/:id/hooks/:hook_id/test", guards=(ADMIN,),
          summary="Send the latest push's payload (or a sample) to the hook")  # fmt: skip
def test_hook(ctx: Ctx) -> Queued:
    hook = _hook(ctx)
    branch = ctx.project.default_branch or "master"
    sample = push_payload(ctx.view, ctx.project, ctx.actor, RefUpdate(HEADS + branch, ZERO_SHA, ZERO_SHA), tag=False,
                          commits=[], total=0, checkout_sha=None, message=None)  # fmt: skip
    return queued(webhooks.test(ctx.session, hook, sample))
