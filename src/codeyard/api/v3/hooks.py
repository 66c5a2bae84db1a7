"""Project hooks (`/projects/:id/hooks`): masters and owners only (403 for readers below master,
404 for callers who cannot see the project)."""

from __future__ import annotations

from ...entities.hooks import Hook
from ...entities.hooks import hook as hook_entity
from ...services import hooks
from .. import paging
from ..context import Ctx
from ..guards import ADMIN
from ..params import Bool, Url
from ..registry import API

URL_MESSAGE = "must be a valid http or https URL"
HOOK_PARAMS = (
    Url("url", required=True, message=URL_MESSAGE, doc="http or https URL; leading and trailing spaces are removed"),
    Bool("push_events", doc="Default true"),
    Bool("issues_events", doc="Default false"),
    Bool("merge_requests_events", doc="Default false"),
    Bool("tag_push_events", doc="Default false"),
    Bool("note_events", doc="Default false"),
    Bool("build_events", doc="Default false"),
    Bool("enable_ssl_verification", doc="Default true"),
)


def hook_exists(ctx: Ctx) -> None:
    """Guard: the hook is looked up before the parameters are checked (404 before 400)."""
    hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id"))


def _flags(ctx: Ctx) -> dict:
    return {name: ctx.args[name] for name in hooks.FLAGS if name in ctx.args}


@API.get("/projects/:id/hooks", guards=(ADMIN,), paginated=True, summary="Hooks of a project")
def list_hooks(ctx: Ctx) -> paging.Page[Hook]:
    window = paging.window(ctx)
    total, found = hooks.page(ctx.session, ctx.project, window.offset, window.limit)
    return paging.Page([hook_entity(hook) for hook in found], total, window)


@API.get("/projects/:id/hooks/:hook_id", guards=(ADMIN,), summary="One hook of a project")
def get_hook(ctx: Ctx) -> Hook:
    return hook_entity(hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id")))


@API.post("/projects/:id/hooks", guards=(ADMIN,), params=HOOK_PARAMS, summary="Add a hook to a project")
def add_hook(ctx: Ctx) -> Hook:
    return hook_entity(hooks.create(ctx.session, ctx.project, ctx.args["url"], _flags(ctx)))


@API.put("/projects/:id/hooks/:hook_id", guards=(ADMIN, hook_exists), params=HOOK_PARAMS, summary="Edit a hook")
def update_hook(ctx: Ctx) -> Hook:
    hook = hooks.get(ctx.session, ctx.project, ctx.path_int("hook_id"))
    return hook_entity(hooks.update(ctx.session, hook, ctx.args["url"], _flags(ctx)))


@API.delete("/projects/:id/hooks/:hook_id", guards=(ADMIN,), summary="Delete a hook; null when there was none")
def delete_hook(ctx: Ctx) -> Hook | None:
    hook = hooks.delete(ctx.session, ctx.project, ctx.path_int("hook_id"))
    return hook_entity(hook) if hook is not None else None
