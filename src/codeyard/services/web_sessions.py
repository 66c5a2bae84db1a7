"""Browser sessions of the web pages: a random secret in a cookie, only its SHA-256 digest stored.

A sign-in (after `signin.check_sign_in`) starts one; signing out deletes its row, so the cookie
stops working at once. Sessions live `session_expire_delay` minutes (0: until signed out). A new
password or a block ends every session of the user (`end_all`, called by `services.users`): the
rows are deleted, so unblocking brings none back; tokens are kept. Each page looks its session up
with one prebuilt statement (`Database.fast_first`, nothing kept between requests): a deleted row
is seen by every process at the next request.
"""

from __future__ import annotations

import hashlib
import hmac

from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import Session

from ..db.models import User, WebSession, utcnow
from . import credentials, signin
from .identity import USER_COLUMNS
from .outcomes import Refusal

COOKIE = "codeyard_session"  # the cookie that carries a session's secret
SECRET_LENGTH = 32

_sessions = WebSession.__table__
USER_BY_SESSION = (
    select(*USER_COLUMNS, _sessions.c.expires_at.label("session_expires_at"))
    .join_from(User.__table__, _sessions, _sessions.c.user_id == User.__table__.c.id)
    .where(_sessions.c.digest == bindparam("digest"))
)


def start(session: Session, checked) -> tuple[User, str] | Refusal:
    """Record the sign-in of CHECKED (the row `signin.check_sign_in` accepted: id, password_digest)
    and open a session; returns the user and the cookie's secret, or `signin.signing_in`'s refusal,
    or WRONG_CREDENTIALS when the password changed since it was checked (the check runs outside any
    transaction: a session of the old password must not open after the change)."""
    user = signin.signing_in(session, checked.id)
    if isinstance(user, Refusal):
        return user
    if user.password_digest != checked.password_digest:
        return Refusal(signin.SignInRefused.WRONG_CREDENTIALS)
    now = utcnow()
    session.execute(delete(WebSession).where(WebSession.user_id == user.id, WebSession.expires_at < now))
    signin.record_sign_in(user, now)
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


def end_all(session: Session, user_id: int) -> None:
    """End every web session of USER_ID (a new password, a block)."""
    session.execute(delete(WebSession).where(WebSession.user_id == user_id))


def form_token(secret_key: bytes, basis: str) -> str:
    """The CSRF token of forms shown to the holder of BASIS (a session's secret, or the random
    value of an anonymous visitor's cookie): an HMAC only the server can compute."""
    return hmac.new(secret_key, b"form\0" + basis.encode(), hashlib.sha256).hexdigest()


def token_matches(secret_key: bytes, basis: str | None, presented) -> bool:
    if not basis or not isinstance(presented, str):
        return False
    return hmac.compare_digest(form_token(secret_key, basis), presented)
