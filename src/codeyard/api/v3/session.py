"""`POST /session`: sign in with a password, get the user and a new private token."""

from __future__ import annotations

from ...entities import users as entities
from ...errors import Unauthorized
from ...http.context import Ctx
from ...http.params import Str
from ...http.refusals import accepted
from ...http.routing import Routes
from ...services import credentials, signin, users

routes = Routes()


@routes.post(
    "/session",
    auth="none",
    summary="Sign in with login (username) or email and password; without either, 401 (GitLab 8.6)",
    params=(Str("login"), Str("email"), Str("password", verbatim=True)),
)
async def create_session(ctx: Ctx) -> entities.UserLogin:
    login, password = ctx.args.get("email") or ctx.args.get("login"), ctx.args.get("password")
    if not login or not password:  # bad credentials, as GitLab 8.6 answered; nothing to check or throttle
        raise Unauthorized()
    checked = accepted(await signin.check_sign_in(ctx.rt, login, password, ctx.client_address))  # 401, 429 or 503
    user, _token, secret = accepted(signin.complete_sign_in(ctx.session, checked.id, credentials.PRIVATE, "session"))
    return entities.user_login(user, ctx.view, users.can_create_project(ctx.session, user), secret)
