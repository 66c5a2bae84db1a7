"""Signing in with a password: the check, and the tokens a successful sign-in issues.

Every password check (POST /session, POST /oauth/token, git over HTTP) is `check_password`: a slot
at the gate first (BUSY when full, before any lookup), then the throttle (THROTTLED for an account or
address over its failure limit, without argon2), then argon2 on the gate's worker threads, then a short
write of a failure. It holds no transaction across its awaits; `complete_sign_in` (a short write) follows.
A sign-in's check, for the API and the pages alike, is `check_sign_in` (active users only).

A refusal is returned, not raised: a `Refusal` whose reason is a `SignInRefused`; each edge answers it
its own way (`http/refusals.py` for the API, the OAuth error body, the sign-in form's message).
"""

from __future__ import annotations

import datetime as dt
import enum
import logging

from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.orm import Session

from ..db.engine import Database
from ..db.models import ApplicationSetting, Token, User, utcnow
from . import credentials, passwords
from . import settings as settings_service
from .outcomes import Refusal

log = logging.getLogger("codeyard.signin")

_users = User.__table__
_BY_USERNAME = select(_users.c.id, _users.c.password_digest, _users.c.state).where(
    func.lower(_users.c.username) == bindparam("login")
)
_BY_EMAIL = select(_users.c.id, _users.c.password_digest, _users.c.state).where(
    func.lower(_users.c.email) == bindparam("login")
)


class SignInRefused(enum.Enum):
    DISABLED = "password sign-in is disabled"
    WRONG_CREDENTIALS = "wrong login or password"
    NOT_ACTIVE = "the user is not active"
    THROTTLED = "too many failed password attempts"  # detail: the seconds to wait
    BUSY = "too many password checks at once"  # detail: the seconds to wait


FOR_LOAD = frozenset({SignInRefused.THROTTLED, SignInRefused.BUSY})
"""The refusals that say nothing of the credentials: try again later."""


def login_candidate(db: Database, login: str):
    """(id, password_digest, state) of the user LOGIN names (username, or e-mail when it holds an @)."""
    statement = _BY_EMAIL if "@" in login else _BY_USERNAME
    return db.fast_first(statement, {"login": login.lower()})


_SIGNIN_ENABLED = select(ApplicationSetting.__table__.c.signin_enabled).where(
    ApplicationSetting.__table__.c.id == settings_service.SETTINGS_ID
)


def password_signin_enabled(db: Database) -> bool:
    row = db.fast_first(_SIGNIN_ENABLED, {})
    return True if row is None else bool(row.signin_enabled)


async def check_password(rt, login: str, password: str, address: str):
    """The (id, password_digest, state) of the user LOGIN names when PASSWORD is theirs, whatever
    their state, or the refusal: BUSY (the gate is full), DISABLED (password sign-in), THROTTLED (the
    password is not checked) or WRONG_CREDENTIALS (wrong password, unknown login)."""
    with rt.password_gate.admission() as admitted:  # first: a refusal for load costs no database round trip
        if not admitted:
            return Refusal(SignInRefused.BUSY, str(passwords.BUSY_RETRY_AFTER))
        if not password_signin_enabled(rt.db):
            return Refusal(SignInRefused.DISABLED)
        candidate = login_candidate(rt.db, login)
        user_id = candidate.id if candidate is not None else None
        wait = rt.password_throttle.wait(user_id, address)
        if wait > 0:
            return Refusal(SignInRefused.THROTTLED, str(wait))
        digest = candidate.password_digest if candidate is not None else None
        if not await rt.password_gate.verify_in_slot(digest, password):
            log.warning("failed password attempt for login %r from %s", login, address)
            rt.password_throttle.record_failure(user_id, address)
            return Refusal(SignInRefused.WRONG_CREDENTIALS)
        rt.password_throttle.forget_account(user_id)
        return candidate


async def check_sign_in(rt, login: str, password: str, address: str):
    """`check_password` for a sign-in (POST /session, POST /oauth/token, the web's sign-in form):
    the (id, password_digest, state) of the active user LOGIN names when PASSWORD is theirs, or the
    refusal (NOT_ACTIVE besides `check_password`'s)."""
    checked = await check_password(rt, login, password, address)
    if not isinstance(checked, Refusal) and checked.state != "active":
        return Refusal(SignInRefused.NOT_ACTIVE)
    return checked


def session_lifetime(session: Session) -> dt.timedelta | None:
    """Tokens issued by a sign-in live `session_expire_delay` minutes (0: until revoked)."""
    minutes = settings_service.load(session).session_expire_delay
    return dt.timedelta(minutes=minutes) if minutes > 0 else None


def signing_in(session: Session, user_id: int) -> User | Refusal:
    """The user a checked password signs in (API token or web session alike), or the refusal when
    password sign-in was disabled (DISABLED) or the user blocked or deleted (NOT_ACTIVE) meanwhile.
    The row is locked (PostgreSQL; SQLite's write transaction holds the database) until the sign-in
    commits: a password change or a block, which end the user's web sessions, comes wholly before or
    wholly after it."""
    if not settings_service.load(session).signin_enabled:
        return Refusal(SignInRefused.DISABLED)
    user = session.get(User, user_id, with_for_update=True)
    if user is None or user.state != "active":
        return Refusal(SignInRefused.NOT_ACTIVE)
    return user


def complete_sign_in(session: Session, user_id: int, kind: str, name: str) -> tuple[User, Token, str] | Refusal:
    """Record the sign-in and issue a token of KIND, or `signing_in`'s refusal."""
    user = signing_in(session, user_id)
    if isinstance(user, Refusal):
        return user
    now = utcnow()
    # Expired sign-in tokens go; expired personal access tokens stay listed (inactive), as GitLab's.
    session.execute(delete(Token).where(Token.user_id == user.id, Token.expires_at < now, Token.kind.not_in(credentials.SCOPED)))
    record_sign_in(user, now)
    token, secret = credentials.issue_token(session, user.id, kind, name, lifetime=session_lifetime(session))
    return user, token, secret


def record_sign_in(user: User, now: dt.datetime | None = None) -> None:
    now = now or utcnow()
    user.last_sign_in_at = user.current_sign_in_at or now
    user.current_sign_in_at = now
    user.sign_in_count = (user.sign_in_count or 0) + 1
