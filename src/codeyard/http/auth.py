"""Who is calling: a private token, an OAuth access token, a personal access token, then sudo;
and what the token's scopes let the request do.

Credentials, in GitLab's order: the `private_token` parameter or a `PRIVATE-TOKEN` (or
`PRIVATE_TOKEN`) header; else an OAuth access token from `access_token`/`bearer_token` or an
`Authorization: Bearer` header; else, on routes a browser fetches (auth "browser": uploaded files),
the web session of the `codeyard_session` cookie, as pages find it. A personal (or impersonation)
access token is accepted both ways. Unknown, expired, revoked and blocked all mean "nobody". The
lookup is one prebuilt statement on the process's fast connection (see db/engine.py).

Scopes are checked here for every API route of every version (`check_scope`): `api` may do all,
`read_api` reads (GET and HEAD), `read_user` reads the user endpoints, `read_repository` reads
repository files; otherwise the repository scopes are for git over HTTP. Any token may read and
revoke itself. Sudo with a scoped token needs `sudo` too. The private token, OAuth tokens and web
sessions may do all.
"""

from __future__ import annotations

from ..db.models import parse_id
from ..errors import CodeyardError, Forbidden, NotFound
from ..services import credentials, identity, web_sessions
from .context import Ctx


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None


def presented_credentials(ctx: Ctx) -> list[tuple[str, str]]:
    """(kind, secret) of the credentials the request carries, in the order they are tried."""
    presented = []
    private = (
        _text(ctx.param("private_token")) or ctx.header("private-token") or ctx.header("private_token")
    )
    if private:
        presented.append((credentials.PRIVATE, private))
    bearer = _text(ctx.param("access_token")) or _text(ctx.param("bearer_token"))
    if not bearer:
        scheme, _, value = (ctx.header("authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            bearer = value.strip()
    if bearer:
        presented.append((credentials.OAUTH, bearer))
    return presented


# APIs where a credential that names nobody (unknown, expired, revoked, a blocked user's) is 401
# even on a route open to anonymous callers, as GitLab v4 answers; v3 (GitLab 8.6) reads such a
# caller as anonymous.
STRICT_VERSIONS = ("v4",)


def refuses_a_bad_credential(ctx: Ctx) -> bool:
    """Whether this request, authenticated as nobody, must be 401 rather than read as anonymous."""
    return ctx.api_route is not None and ctx.api_route[0] in STRICT_VERSIONS and bool(presented_credentials(ctx))


def authenticate(ctx: Ctx):
    """The caller's user row (after sudo), or None when the request carries no valid credential."""
    user = kind = secret = None
    for kind, secret in presented_credentials(ctx):
        user = identity.user_by_token(ctx.rt.db, secret, kind)
        if user is not None:  # an OAuth token is tried only when the private token names nobody
            break
    if user is None and ctx.route.auth == "browser" and ctx.method in ("GET", "HEAD"):
        # Reads only: these routes check no form token, and another site may make a browser send
        # its cookie with a request of any method.
        return web_sessions.user_for(ctx.rt.db, ctx.cookies.get(web_sessions.COOKIE))
    if user is None or user.state != "active":
        return None
    if user.token_kind == credentials.PRIVATE:
        ctx.private_token = secret
    elif user.token_kind in credentials.SCOPED:
        ctx.token_id = user.token_id
    ctx.scopes = credentials.scopes_of(user)
    check_scope(ctx)
    identifier = sudo_identifier(ctx)
    if identifier is None or identifier in (user.id, user.username):
        return user
    return _sudo(ctx, user, identifier)


READ_USER_PATHS = ("/user", "/users", "/version", "/metadata")
# GitLab lets `read_repository` read files through the API as through git.
READ_REPOSITORY_PATHS = ("/projects/:id/repository/files",)
# Any token may read and revoke itself, whatever its scopes (GitLab's `SelfInformation`).
ANY_SCOPE = {("GET", "/personal_access_tokens/self"), ("DELETE", "/personal_access_tokens/self")}
READS = ("GET", "HEAD")


def _under(relative: str, paths: tuple[str, ...]) -> bool:
    return any(relative == path or relative.startswith(path + "/") for path in paths)


def check_scope(ctx: Ctx) -> None:
    """403 insufficient_scope unless the scopes of the request's token (`ctx.scopes`; None: all)
    allow its route and method."""
    scopes = ctx.scopes
    if scopes is None or credentials.API in scopes:
        return
    relative = ctx.api_route[1] if ctx.api_route else ""
    if (ctx.method, relative) in ANY_SCOPE:
        return
    if ctx.method not in READS:
        raise InsufficientScope((credentials.API,))
    if credentials.READ_API in scopes:
        return
    user_path = _under(relative, READ_USER_PATHS)
    if user_path and credentials.READ_USER in scopes:
        return
    if credentials.READ_REPOSITORY in scopes and _under(relative, READ_REPOSITORY_PATHS):
        return
    needed = (credentials.READ_USER,) if user_path else ()
    raise InsufficientScope((*needed, credentials.API, credentials.READ_API))


class InsufficientScope(CodeyardError):
    """What GitLab answers to a token whose scopes do not allow the request (RFC 6750)."""

    status = 403
    default_message = "The request requires higher privileges than provided by the access token."

    def __init__(self, scopes: tuple[str, ...]):
        self.scopes = " ".join(scopes)
        header = f'Bearer realm="GitLab", error="insufficient_scope", error_description="{self.default_message}", scope="{self.scopes}"'
        super().__init__(None, {"WWW-Authenticate": header})

    def body(self) -> dict:
        return {"error": "insufficient_scope", "error_description": self.message, "scope": self.scopes}


def sudo_identifier(ctx: Ctx) -> int | str | None:
    value = ctx.param("sudo")
    if value is None:
        value = ctx.header("sudo")
    if value is None or value == "":
        return None
    value = str(value)
    if value.isascii() and value.isdigit():
        return parse_id(value) or value  # digits beyond any id can only be a (non-existent) username
    return value


def _sudo(ctx: Ctx, user, identifier: int | str):
    if not user.is_admin:
        raise SudoForbidden()
    if ctx.scopes is not None and credentials.SUDO not in ctx.scopes:
        raise InsufficientScope((credentials.SUDO,))
    target = identity.user_by_id_or_username(ctx.rt.db, identifier)
    if target is None:
        raise SudoTargetNotFound(identifier)
    if target.state != "active":
        raise Forbidden(f"User {target.username} is blocked")
    ctx.private_token = None
    return target


class SudoForbidden(CodeyardError):
    status = 403
    default_message = "403 Forbidden: Must be admin to use sudo"


class SudoTargetNotFound(NotFound):
    def __init__(self, identifier):
        CodeyardError.__init__(self, f"404 Not Found: No user id or username for: {identifier}")
