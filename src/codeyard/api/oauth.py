"""`POST /oauth/token`: the OAuth 2 resource owner password grant (RFC 6749, section 4.3).

Errors follow RFC 6749 (`error`, `error_description`) and carry the API's `message` too.
"""

from __future__ import annotations

from ..errors import CodeyardError, Unauthorized
from ..http.context import Ctx
from ..http.params import Str
from ..http.replies import Reply
from ..http.routing import Routes
from ..services import credentials, signin

routes = Routes()


def _oauth_error(status: int, error: str, description: str) -> Reply:
    return Reply(
        {"error": error, "error_description": description, "message": f"{status} {error}"},
        status=status,
        headers={"cache-control": "no-store", "pragma": "no-cache"},
    )


@routes.post(
    "/oauth/token",
    auth="none",
    summary="Issue an OAuth access token for a username and password (grant_type=password)",
    params=(Str("grant_type"), Str("username"), Str("password", verbatim=True), Str("scope")),
)
async def issue_token(ctx: Ctx):
    grant_type, username, password = (ctx.args.get(k) for k in ("grant_type", "username", "password"))
    if grant_type is None:
        return _oauth_error(400, "invalid_request", "The request is missing a required parameter: grant_type.")
    if grant_type != "password":
        return _oauth_error(400, "unsupported_grant_type", "The authorization grant type is not supported.")
    if not username or not password:
        return _oauth_error(400, "invalid_request", "The request is missing a required parameter: username or password.")
    try:
        checked = await signin.check_sign_in(ctx.rt, username, password, ctx.client_address)
        _user, token, secret = signin.complete_sign_in(ctx.session, checked.id, credentials.OAUTH, "oauth")
    except Unauthorized:
        return _oauth_error(401, "invalid_grant", "The provided authorization grant is invalid, expired or revoked.")
    except CodeyardError:
        raise
    body = {
        "access_token": secret,
        "token_type": "bearer",
        "scope": "api",
        "created_at": int(token.created_at.timestamp()),
    }
    if token.expires_at is not None:
        body["expires_in"] = int((token.expires_at - token.created_at).total_seconds())
    return Reply(body, status=200, headers={"cache-control": "no-store", "pragma": "no-cache"})
