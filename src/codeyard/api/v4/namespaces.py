"""Namespaces in v4: where the caller may put projects (every namespace, for admins), one namespace,
and whether a path is taken. The reads are v3's (services/namespaces.py)."""

from __future__ import annotations

from ...entities.v4.namespaces import Exists, NamespaceV4, namespace
from ...errors import NotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Id, Str
from ...http.routing import Routes
from ...services import namespaces, users

routes = Routes()


@routes.get(
    "/namespaces",
    paginated=True,
    params=(Str("search"), Bool("owned_only", doc="Only the caller's own and the groups they own")),
    summary="Namespaces of the caller (all, for admins)",
)
async def list_namespaces(ctx: Ctx) -> paging.Page[NamespaceV4]:
    window = paging.window(ctx)
    total, rows = await namespaces.read_visible(
        ctx.rt.db, ctx.actor, ctx.args.get("search"), window.offset, window.limit, owned_only=ctx.args.get("owned_only", False)
    )
    return paging.Page([namespace(row, ctx.view) for row in rows], total, window)


@routes.get("/namespaces/:id", summary="A namespace (by id or path) the caller sees")
async def get_namespace(ctx: Ctx) -> NamespaceV4:
    row = await namespaces.read_one(ctx.rt.db, ctx.actor, ctx.path_params["id"])
    if row is None:
        raise NotFound("Namespace")
    return namespace(row, ctx.view)


@routes.get(
    "/namespaces/:id/exists",
    params=(Id("parent_id", nullable=True, doc="Subgroups are not served: a parent names nothing"),),
    summary="Whether a namespace path is taken, with a free one when it is",
)
def namespace_exists(ctx: Ctx) -> Exists:
    path = ctx.path_params["id"]
    if ctx.args.get("parent_id"):  # no subgroups: nothing exists under a parent
        return {"exists": False, "suggests": []}
    if len(path) > 255 or users.namespace_path_errors(path):  # no namespace can have it
        return {"exists": False, "suggests": []}
    taken = users.namespace_path_taken(ctx.session, path)
    return {"exists": taken, "suggests": namespaces.suggestions(ctx.session, path) if taken else []}
