"""Looking a caller up: the prepared statements both the API and the git transport authenticate with.

They run on `Database.fast_first` (one indexed query, no transaction). A token's user row is kept
by the process while no user, token, namespace or project row may have changed since it was read
(`db/changes.py`: exact on SQLite, as soon as the notification arrives on PostgreSQL); the token's
expiry is checked on every use.
"""

from __future__ import annotations

from collections import namedtuple

from sqlalchemy import bindparam, func, or_, select

from ..db.models import Namespace, Project, Token, User, utcnow
from ..db.models.base import UtcDateTime
from ..db.queries import api_text
from . import credentials

# A user joined into a read path's row (`db.queries.joined_columns`): what
# `entities.users.user_contact` (and `user_basic`) read.
CONTACT_FIELDS = ("id", "username", "email", "name", "state", "created_at")
Contact = namedtuple("Contact", CONTACT_FIELDS)

# What entities and policies read of a user; the password digest never leaves the database. Its
# timestamps come as the API's text (`api_text`): a kept caller's row is formatted once, not at
# every request (`datetime.isoformat` was a good share of GET /user's entity; docs/MEASUREMENTS.md).
USER_COLUMNS = tuple(
    api_text(column, column.key) if isinstance(column.type, UtcDateTime) else column
    for column in User.__table__.c
    if column.key not in ("password_digest", "updated_at", "sign_in_count")
)

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

# One statement finds a token of any kind the way it was presented allows (`PRESENTED`), with what
# the request must know of it: its id, kind and scopes (`credentials.scopes_of`). A revoked token
# names nobody.
USER_BY_TOKEN = (
    select(
        *USER_COLUMNS, PERSONAL_PROJECTS, _tokens.c.expires_at.label("token_expires_at"),
        _tokens.c.id.label("token_id"), _tokens.c.kind.label("token_kind"), _tokens.c.scopes.label("token_scopes"),
    )
    .join_from(_users, _tokens, _tokens.c.user_id == _users.c.id)
    .where(_tokens.c.digest == bindparam("digest"), _tokens.c.kind != bindparam("other_kind"), _tokens.c.revoked.is_(False))
)  # fmt: skip
# A secret presented as a private token (PRIVATE-TOKEN, `private_token`, a git password) may be a
# private, personal or impersonation token; one presented as a bearer token (Authorization: Bearer,
# `access_token`, git's `oauth2` user) an OAuth, personal or impersonation token.
PRESENTED = {credentials.PRIVATE: credentials.OAUTH, credentials.OAUTH: credentials.PRIVATE}
USER_BY_ID_OR_USERNAME = select(*USER_COLUMNS, PERSONAL_PROJECTS).where(
    or_(_users.c.id == bindparam("id"), func.lower(_users.c.username) == bindparam("username"))
)


def user_by_token(db, secret: str, kind: str):
    """The user row (active or not) the token presented as KIND (`PRESENTED`) belongs to, or None
    (unknown, revoked or expired). The row carries the token's `token_id`, `token_kind` and
    `token_scopes`."""
    params = {"digest": credentials.digest(secret), "other_kind": PRESENTED[kind]}
    user = db.identity.cached((params["digest"], kind), lambda: db.fast_first(USER_BY_TOKEN, params))
    if user is None or (user.token_expires_at is not None and user.token_expires_at <= utcnow()):
        return None
    return user


def user_by_id(db, user_id: int):
    return db.fast_first(USER_BY_ID_OR_USERNAME, {"id": user_id, "username": None})


def user_by_id_or_username(db, identifier: int | str):
    return db.fast_first(
        USER_BY_ID_OR_USERNAME,
        {"id": identifier if isinstance(identifier, int) else None, "username": str(identifier).lower()},
    )
