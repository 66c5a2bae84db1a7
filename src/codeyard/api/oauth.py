"""`POST /oauth/token`: the OAuth 2 resource owner password grant (RFC 6749, section 4.3).

Errors follow RFC 6749 (`error`, `error_description`) and carry the API's `message` too.
"""

from __future__ import annotations

from ..http.context import Ctx
from ..http.params import Str
from ..http.refusals import error_of
from ..http.replies import Reply
from ..http.routing import Routes
from ..services import credentials, signin
from ..services.outcomes import Refusal

routes = Routes()


def _oauth_error(status: int, error: str, description: str) -> Reply:
    return Reply(
        {"error": error, "error_description": description, "message": f"{status} {error}"},
        status=status,
        headers={"cache-control": "no-store", "pragma": "no-cache"},
    )


def _refused(refusal: Refusal) -> Reply:
    """RFC 6749's invalid_grant for refused credentials; a refusal for load is the API's 429 or 503."""
    if refusal.reason in signin.FOR_LOAD:
        raise error_of(refusal)
    return _oauth_error(401, "invalid_grant", "The provided authorization grant is invalid, expired or revoked.")


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
    checked = await signin.check_sign_in(ctx.rt, username, password, ctx.client_address)
    signed_in = checked
    if not isinstance(checked, Refusal):
        signed_in = signin.complete_sign_in(ctx.session, checked.id, credentials.OAUTH, "oauth")
    if isinstance(signed_in, Refusal):
        return _refused(signed_in)
    _user, token, secret = signed_in
    body = {
        "access_token": secret,
        "token_type": "bearer",
        "scope": "api",
        "created_at": int(token.created_at.timestamp()),
    }
    if token.expires_at is not None:
        body["expires_in"] = int((token.expires_at - token.created_at).total_seconds())
    return Reply(body, status=200, headers={"cache-control": "no-store", "pragma": "no-cache"})
