"""Users in v4: the caller."""

from __future__ import annotations

from ...entities.v4 import users as entities
from ...http.context import Ctx
from ...http.routing import Routes
from ...services import users

routes = Routes()


@routes.get("/user", summary="The authenticated user")
def current_user(ctx: Ctx) -> entities.UserV4:
    return entities.user_self(ctx.actor, ctx.view, users.caller_can_create_project(ctx.actor))
