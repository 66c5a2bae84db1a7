"""Who is calling: a private token, an OAuth access token, then sudo.

Credentials, in GitLab's order: the `private_token` parameter or a `PRIVATE-TOKEN` (or
`PRIVATE_TOKEN`) header; else an OAuth access token from `access_token`/`bearer_token` or an
`Authorization: Bearer` header. Unknown, expired and blocked all mean "nobody". The lookup is one
prebuilt statement on the process's fast connection (see db/engine.py).
"""

from __future__ import annotations

from sqlalchemy import bindparam, func, or_, select

from ..db.models import Namespace, Project, Token, User, utcnow
from ..errors import CodeyardError, Forbidden, NotFound
from ..services import credentials
from .context import Ctx

# What entities and policies read of a user; the password digest never leaves the database.
USER_COLUMNS = tuple(column for column in User.__table__.c if column.key not in ("password_digest", "updated_at", "sign_in_count"))

_users = User.__table__
_tokens = Token.__table__

# The caller's personal project count rides along (GET /user shows can_create_project): a correlated
# count costs less than a second round trip.
PERSONAL_PROJECTS = (
    select(func.count(Project.id))
    .join(Namespace, Namespace.id == Project.namespace_id)
    .where(Namespace.owner_id == _users.c.id, Namespace.kind == "user")
    .scalar_subquery()
    .label("personal_projects")
)

USER_BY_TOKEN = (
    select(*USER_COLUMNS, PERSONAL_PROJECTS, _tokens.c.expires_at.label("token_expires_at"))
    .join_from(_users, _tokens, _tokens.c.user_id == _users.c.id)
    .where(_tokens.c.digest == bindparam("digest"), _tokens.c.kind == bindparam("kind"))
)
USER_BY_ID_OR_USERNAME = select(*USER_COLUMNS, PERSONAL_PROJECTS).where(
    or_(_users.c.id == bindparam("id"), func.lower(_users.c.username) == bindparam("username"))
)


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None


def presented_credentials(ctx: Ctx) -> tuple[str, str] | None:
    """(kind, secret) of the credential the request carries, if any."""
    private = (
        _text(ctx.param("private_token")) or ctx.header("private-token") or ctx.header("private_token")
    )
    if private:
        return credentials.PRIVATE, private
    bearer = _text(ctx.param("access_token")) or _text(ctx.param("bearer_token"))
    if not bearer:
        scheme, _, value = (ctx.header("authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            bearer = value.strip()
    if bearer:
        return credentials.OAUTH, bearer
    return None


def authenticate(ctx: Ctx):
    """The caller's user row (after sudo), or None when the request carries no valid credential."""
    presented = presented_credentials(ctx)
    if presented is None:
        return None
    kind, secret = presented
    user = ctx.rt.db.fast_first(USER_BY_TOKEN, {"digest": credentials.digest(secret), "kind": kind})
    if user is None or user.state != "active":
        return None
    if user.token_expires_at is not None and user.token_expires_at <= utcnow():
        return None
    if kind == credentials.PRIVATE:
        ctx.private_token = secret
    identifier = sudo_identifier(ctx)
    if identifier is None or identifier in (user.id, user.username):
        return user
    return _sudo(ctx, user, identifier)


def sudo_identifier(ctx: Ctx) -> int | str | None:
    value = ctx.param("sudo")
    if value is None:
        value = ctx.header("sudo")
    if value is None or value == "":
        return None
    value = str(value)
    return int(value) if value.isascii() and value.isdigit() else value


def _sudo(ctx: Ctx, user, identifier: int | str):
    if not user.is_admin:
        raise SudoForbidden()
    target = ctx.rt.db.fast_first(
        USER_BY_ID_OR_USERNAME,
        {"id": identifier if isinstance(identifier, int) else None, "username": str(identifier).lower()},
    )
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
