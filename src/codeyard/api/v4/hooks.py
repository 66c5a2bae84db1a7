"""Project hooks in v4: list, get, add, edit, delete (204), a test of one event, and the hook's
recent deliveries as its events (maintainers, owners and admins; 404 for callers who cannot see
the project)."""

from __future__ import annotations

from ...entities.pushes import push_payload
from ...entities.v4 import hooks as entities
from ...errors import Invalid, RecordNotFound
from ...git.refs import HEADS, ZERO_SHA
from ...http import paging
from ...http.context import Ctx
from ...http.hook_params import HOOK_PARAMS
from ...http.params import Bool, Str
from ...http.routing import Routes
from ...services import hooks, webhooks
from ...services.ref_updates import RefUpdate
from ..guards import ADMIN

routes = Routes()

URL, TOKEN = HOOK_PARAMS[0], HOOK_PARAMS[-1]
PARAMS = (
    URL,
    TOKEN,
    *(Bool(name) for name in entities.STORED),
    *(Bool(name, doc="Accepted; codeyard never sends these events, so it reads false") for name in entities.NEVER_SENT),
    Str("push_events_branch_filter", max_length=255, nullable=True, doc="Only empty: codeyard sends every branch's pushes"),
    Str("branch_filter_strategy", max_length=32, doc="Only wildcard (with no filter)"),
)
# The events a test may be asked for: v4's flag names -> the stored flag.
TRIGGERS = {**{name: flag for name, flag in entities.STORED.items() if name != "enable_ssl_verification"},
            **{name: name for name in entities.NEVER_SENT}}  # fmt: skip


def _hook(ctx: Ctx):
    return hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id"))


def hook_exists(ctx: Ctx) -> None:
    """Guard: the hook is looked up before the parameters are checked (404 before 400)."""
    _hook(ctx)


def _flags(ctx: Ctx) -> dict:
    if ctx.args.get("push_events_branch_filter"):
        raise Invalid.field("push_events_branch_filter", "is not supported: pushes to every branch are sent")
    if ctx.args.get("branch_filter_strategy", "wildcard") != "wildcard":
        raise Invalid.field("branch_filter_strategy", "is not supported: pushes to every branch are sent")
    return {flag: ctx.args[name] for name, flag in entities.STORED.items() if name in ctx.args}


@routes.get("/projects/:id/hooks", guards=(ADMIN,), paginated=True, summary="Hooks of a project")
def list_hooks(ctx: Ctx) -> paging.Page[entities.ProjectHookV4]:
    window = paging.window(ctx)
    total, found = hooks.page(ctx.session, ctx.project, window.offset, window.limit)
    return paging.Page([entities.hook(hook) for hook in found], total, window)


@routes.get("/projects/:id/hooks/:hook_id", guards=(ADMIN,), summary="One hook of a project")
def get_hook(ctx: Ctx) -> entities.ProjectHookV4:
    return entities.hook(_hook(ctx))


@routes.post("/projects/:id/hooks", guards=(ADMIN,), params=PARAMS, summary="Add a hook to a project")
def add_hook(ctx: Ctx) -> entities.ProjectHookV4:
    return entities.hook(hooks.create(ctx.session, ctx.project, ctx.args["url"], _flags(ctx), ctx.args.get("token")))


@routes.put("/projects/:id/hooks/:hook_id", guards=(ADMIN, hook_exists), params=PARAMS, summary="Edit a hook")
def update_hook(ctx: Ctx) -> entities.ProjectHookV4:
    token = ctx.args.get("token", hooks.KEEP)
    return entities.hook(hooks.update(ctx.session, _hook(ctx), ctx.args["url"], _flags(ctx), token))


@routes.delete("/projects/:id/hooks/:hook_id", guards=(ADMIN,), status=204, summary="Delete a hook")
def delete_hook(ctx: Ctx) -> None:
    if hooks.delete(ctx.session, ctx.project, ctx.path_int("hook_id")) is None:
        raise RecordNotFound()


@routes.post("/projects/:id/hooks/:hook_id/test/:trigger", guards=(ADMIN, hook_exists),
             summary="Send the hook a test of one event: the latest push, tag push, merge request or comment")  # fmt: skip
def test_hook(ctx: Ctx) -> entities.HookTested:
    hook, trigger = _hook(ctx), ctx.path_params["trigger"]
    if trigger not in TRIGGERS:
        raise Invalid.field("trigger", "does not have a valid value")
    branch = ctx.project.default_branch or "master"
    sample = push_payload(ctx.view, ctx.project, ctx.actor, RefUpdate(HEADS + branch, ZERO_SHA, ZERO_SHA), tag=False,
                          commits=[], total=0, checkout_sha=None, message=None)  # fmt: skip
    queued = hooks.test(ctx.session, ctx.rt, ctx.project, hook, ctx.actor, TRIGGERS[trigger], sample)
    return {"message": "201 Created", "hook_id": queued["hook_id"], "event": queued["event"], "delivery": queued["delivery"]}


@routes.get("/projects/:id/hooks/:hook_id/events", guards=(ADMIN,), paginated=True,
            summary="The hook's recent deliveries, newest first")  # fmt: skip
def list_hook_events(ctx: Ctx) -> paging.Page[entities.HookEvent]:
    window = paging.window(ctx)
    total, found = webhooks.page(ctx.session, _hook(ctx), window.offset, window.limit)
    return paging.Page([entities.event(row) for row in found], total, window)
