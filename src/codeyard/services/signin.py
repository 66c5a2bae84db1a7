"""Signing in with a password: the lookup, and the tokens a successful sign-in issues.

The password check itself (argon2, tens of milliseconds) is the caller's to run off the event loop,
between `login_candidate` (no transaction held) and `complete_sign_in` (a short write).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.orm import Session

from ..db.engine import Database
from ..db.models import Token, User, utcnow
from ..errors import Unauthorized
from . import credentials, users
from . import settings as settings_service

_users = User.__table__
_BY_USERNAME = select(_users.c.id, _users.c.password_digest, _users.c.state).where(
    func.lower(_users.c.username) == bindparam("login")
)
_BY_EMAIL = select(_users.c.id, _users.c.password_digest, _users.c.state).where(
    func.lower(_users.c.email) == bindparam("login")
)


def login_candidate(db: Database, login: str):
    """(id, password_digest, state) of the user LOGIN names (username, or e-mail when it holds an @)."""
    statement = _BY_EMAIL if "@" in login else _BY_USERNAME
    return db.fast_first(statement, {"login": login.lower()})


def session_lifetime(session: Session) -> dt.timedelta | None:
    """Tokens issued by a sign-in live `session_expire_delay` minutes (0: until revoked)."""
    minutes = settings_service.load(session).session_expire_delay
    return dt.timedelta(minutes=minutes) if minutes > 0 else None


def complete_sign_in(session: Session, user_id: int, kind: str, name: str) -> tuple[User, Token, str]:
    """Record the sign-in and issue a token of KIND; refuses when password sign-in is disabled."""
    if not settings_service.load(session).signin_enabled:
        raise Unauthorized()
    user = session.get(User, user_id)
    if user is None or user.state != "active":
        raise Unauthorized()
    now = utcnow()
    session.execute(delete(Token).where(Token.user_id == user.id, Token.expires_at < now))
    users.record_sign_in(user, now)
    token, secret = credentials.issue_token(session, user.id, kind, name, lifetime=session_lifetime(session))
    return user, token, secret
