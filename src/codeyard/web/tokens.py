"""The signed-in user's personal access tokens: create one (name, scopes, expiry date), see its
secret once, in the answer to the form; list and revoke them. Through the service the API uses
(`services.credentials`), with the API's rules: scopes from GitLab's list, an expiry date from today
to a year ahead."""

from __future__ import annotations

from starlette.responses import Response

from ..http.context import Ctx
from ..http.params import Str, validate
from ..services import credentials
from .core import Pages, form, redirect, render, signed_in

pages = Pages()

TOKENS = "/-/user_settings/personal_access_tokens"
SCOPE_NOTES = {
    credentials.API: "Read and write everything you may: the API, and git (clone and push)",
    credentials.READ_API: "Read what you may through the API; clone repositories",
    credentials.READ_USER: "Read your profile and the user directory (/user, /users)",
    credentials.READ_REPOSITORY: "Clone and fetch repositories with git over HTTP",
    credentials.WRITE_REPOSITORY: "Clone, fetch and push with git over HTTP",
    credentials.SUDO: "Act as another user with the API's sudo (admins only)",
}
NAME = Str("name", required=True, max_length=255)


def _page(ctx: Ctx, new_token: str | None = None, status: int = 200) -> Response:
    user = signed_in(ctx)
    _total, found = credentials.scoped_page(ctx.session, credentials.PERSONAL, user.id, None, None, 0, 1000)
    listed = [{"token": token, "active": credentials.is_active(token), "expires_on": credentials.expiry_date(token)}
              for token in reversed(found)]  # fmt: skip
    response = render(ctx, "personal_access_tokens.html", status, tokens=listed, scopes=SCOPE_NOTES, new_token=new_token,
                      action=TOKENS)  # fmt: skip
    if new_token is not None:
        response.headers["cache-control"] = "no-store"  # the secret is shown once: never kept by a cache
    return response


@pages.page(TOKENS)
def tokens_page(ctx: Ctx) -> Response:
    return _page(ctx)


@pages.action(TOKENS)
def create_token(ctx: Ctx) -> Response:
    user = signed_in(ctx)
    name = validate((NAME,), {"name": form(ctx, "name")})["name"]
    chosen = ctx.body.get("scopes")
    scopes = [scope for scope in chosen if isinstance(scope, str)] if isinstance(chosen, list) else []
    _token, secret = credentials.issue_scoped(ctx.session, user.id, credentials.PERSONAL, name, scopes,
                                              credentials.parse_expiry(form(ctx, "expires_at")))  # fmt: skip
    return _page(ctx, new_token=secret)


@pages.action(TOKENS + "/:token_id/revoke")
def revoke_token(ctx: Ctx) -> Response:
    user = signed_in(ctx)
    credentials.revoke(ctx.session, credentials.scoped_token(ctx.session, (credentials.PERSONAL,), ctx.path_int("token_id"), user.id))
    return redirect(TOKENS)
