"""`/namespaces`: where the caller may put projects (every namespace, for admins)."""

from __future__ import annotations

from ...entities.namespaces import Namespace, namespace
from ...http import paging
from ...http.context import Ctx
from ...http.params import Str
from ...http.routing import Routes
from ...services import namespaces

routes = Routes()


@routes.get("/namespaces", paginated=True, summary="Namespaces of the caller (all, for admins)", params=(Str("search"),))
async def list_namespaces(ctx: Ctx) -> paging.Page[Namespace]:
    window = paging.window(ctx)
    total, rows = await namespaces.read_visible(ctx.rt.db, ctx.actor, ctx.args.get("search"), window.offset, window.limit)
    return paging.Page([namespace(row) for row in rows], total, window)
