"""Browser sessions of the web pages: a random secret in a cookie, only its SHA-256 digest stored.

A sign-in (after `signin.check_password`) starts one; signing out deletes its row, so the cookie
stops working at once. Sessions live `session_expire_delay` minutes (0: until signed out). Each
page looks its session up with one prebuilt statement (`Database.fast_first`), like API tokens.
"""

from __future__ import annotations

import hashlib
import hmac

from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import Session

from ..db.models import User, WebSession, utcnow
from . import credentials, signin, users
from .identity import USER_COLUMNS

SECRET_LENGTH = 32

_sessions = WebSession.__table__
USER_BY_SESSION = (
    select(*USER_COLUMNS, _sessions.c.expires_at.label("session_expires_at"))
    .join_from(User.__table__, _sessions, _sessions.c.user_id == User.__table__.c.id)
    .where(_sessions.c.digest == bindparam("digest"))
)


def start(session: Session, user_id: int) -> tuple[User, str]:
    """Record the sign-in of USER_ID and open a session; returns the user and the cookie's secret.
    Refused (401) when password sign-in is disabled or the user is not active."""
    user = signin.signing_in(session, user_id)
    now = utcnow()
    session.execute(delete(WebSession).where(WebSession.user_id == user.id, WebSession.expires_at < now))
    users.record_sign_in(user, now)
    secret = credentials.new_secret(SECRET_LENGTH)
    lifetime = signin.session_lifetime(session)
    session.add(WebSession(user_id=user.id, digest=credentials.digest(secret), created_at=now,
                           expires_at=now + lifetime if lifetime else None))  # fmt: skip
    session.flush()
    return user, secret


def user_for(db, secret: str | None):
    """The active user whose unexpired session SECRET opens, or None."""
    if not secret or len(secret) != SECRET_LENGTH:
        return None
    row = db.fast_first(USER_BY_SESSION, {"digest": credentials.digest(secret)})
    if row is None or row.state != "active":
        return None
    if row.session_expires_at is not None and row.session_expires_at <= utcnow():
        return None
    return row


def end(session: Session, secret: str | None) -> None:
    if secret:
        session.execute(delete(WebSession).where(WebSession.digest == credentials.digest(secret)))


def form_token(secret_key: bytes, basis: str) -> str:
    """The CSRF token of forms shown to the holder of BASIS (a session's secret, or the random
    value of an anonymous visitor's cookie): an HMAC only the server can compute."""
    return hmac.new(secret_key, b"form\0" + basis.encode(), hashlib.sha256).hexdigest()


def token_matches(secret_key: bytes, basis: str | None, presented) -> bool:
    if not basis or not isinstance(presented, str):
        return False
    return hmac.compare_digest(form_token(secret_key, basis), presented)
