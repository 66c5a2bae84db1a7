"""Secrets: argon2id password digests and tokens stored as SHA-256 digests.

Tokens are 20 random characters from a 62-letter alphabet (about 119 bits), so a fast hash is
the right digest for them: the lookup on every request stays one indexed query. Passwords are
chosen by people and get argon2id, whose cost the operator tunes by environment.

Personal access tokens and impersonation tokens (API v4) are tokens with scopes, a name, an expiry
date (they stop working at the end of that day, UTC) and a revoked flag; their secret starts with
GitLab's `glpat-`. The private token and OAuth tokens carry no scopes: they may do everything.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import string

import argon2
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..db.models import Token, utcnow
from ..errors import BadRequest, Invalid, NotFound

TOKEN_ALPHABET = string.ascii_letters + string.digits
TOKEN_LENGTH = 20
PRIVATE = "private"
OAUTH = "oauth"
PERSONAL = "personal"
IMPERSONATION = "impersonation"
SCOPED = (PERSONAL, IMPERSONATION)  # the kinds that carry scopes
PERSONAL_PREFIX = "glpat-"

# GitLab's scopes of personal access tokens that codeyard serves.
API, READ_API, READ_USER, READ_REPOSITORY, WRITE_REPOSITORY, SUDO = (
    "api", "read_api", "read_user", "read_repository", "write_repository", "sudo",
)  # fmt: skip
SCOPES = (API, READ_API, READ_USER, READ_REPOSITORY, WRITE_REPOSITORY, SUDO)
# Which scopes let a token use git over HTTP (GitLab's `abilities_for_scopes`): `read_api` reads
# code as it reads projects; pushing needs `write_repository` or `api`.
GIT_READ_SCOPES = frozenset({API, READ_API, READ_REPOSITORY, WRITE_REPOSITORY})
GIT_WRITE_SCOPES = frozenset({API, WRITE_REPOSITORY})

MAX_LIFETIME_DAYS = 365  # GitLab 17.0's longest expiry, and the default when none is given
ROTATED_LIFETIME_DAYS = 7  # a rotated token's expiry when none is given, as GitLab's


def new_secret(length: int = TOKEN_LENGTH) -> str:
    """LENGTH characters of TOKEN_ALPHABET, every string equally likely: one random number below
    62**LENGTH spelled in base 62 (one read of the system's randomness, not one per character)."""
    return _spell(secrets.randbelow(len(TOKEN_ALPHABET) ** length), length)


def derived_secret(key: bytes, label: str, length: int = TOKEN_LENGTH) -> str:
    """A token computed from KEY and LABEL (HMAC-SHA256 spelled in TOKEN_ALPHABET): the same
    every time, so it can be shown again while only its digest is stored."""
    return _spell(int.from_bytes(hmac.new(key, label.encode(), hashlib.sha256).digest(), "big"), length)


def _spell(number: int, length: int) -> str:
    """The LENGTH lowest base-62 digits of NUMBER in TOKEN_ALPHABET, lowest first."""
    chars = []
    for _ in range(length):
        number, index = divmod(number, len(TOKEN_ALPHABET))
        chars.append(TOKEN_ALPHABET[index])
    return "".join(chars)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def issue_token(
    session: Session,
    user_id: int,
    kind: str = PRIVATE,
    name: str = "",
    secret: str | None = None,
    lifetime: dt.timedelta | None = None,
) -> tuple[Token, str]:
    """Store a new token for the user; the secret is returned once and never stored."""
    secret = secret or new_secret()
    now = utcnow()
    token = Token(
        user_id=user_id,
        kind=kind,
        digest=digest(secret),
        name=name,
        created_at=now,
        expires_at=now + lifetime if lifetime else None,
    )
    session.add(token)
    session.flush()
    return token, secret


# --- personal access tokens and impersonation tokens ------------------------------------------


def scopes_of(row) -> frozenset[str] | None:
    """The scopes of the token a caller's row (`identity.user_by_token`) was found by; None when
    it may do everything (private and OAuth tokens, passwords, web sessions)."""
    kind = getattr(row, "token_kind", None)
    return frozenset(row.token_scopes) if kind in SCOPED else None


def expiry_of(expires_on: dt.date) -> dt.datetime:
    """When a token whose expiry date is EXPIRES_ON stops working: the end of that day, UTC."""
    return dt.datetime.combine(expires_on + dt.timedelta(days=1), dt.time(), dt.UTC)


def expiry_date(token: Token) -> dt.date | None:
    """The expiry date shown of a scoped token (the day whose end `expires_at` is)."""
    return None if token.expires_at is None else (token.expires_at - dt.timedelta(days=1)).date()


def is_active(token: Token) -> bool:
    return not token.revoked and (token.expires_at is None or token.expires_at > utcnow())


def parse_expiry(text: str | None) -> dt.date | None:
    """An expiry date as given (`YYYY-MM-DD`; empty: none), or 400."""
    if not text:
        return None
    try:
        if len(text) == 10:  # YYYY-MM-DD only: fromisoformat takes other forms too
            return dt.date.fromisoformat(text)
    except ValueError:
        pass
    raise Invalid.field("expires_at", "is invalid")


def _checked_expiry(expires_on: dt.date | None, default_days: int) -> dt.datetime:
    today = utcnow().date()
    if expires_on is None:
        expires_on = today + dt.timedelta(days=default_days)
    if expires_on < today:
        raise Invalid.field("expires_at", "must not be in the past")
    latest = today + dt.timedelta(days=MAX_LIFETIME_DAYS)
    if expires_on > latest:
        raise Invalid.field("expires_at", f"must be before {latest + dt.timedelta(days=1)}")
    return expiry_of(expires_on)


def _checked_scopes(scopes: list[str]) -> list[str]:
    unknown = [scope for scope in scopes if scope not in SCOPES]
    if unknown:
        raise Invalid.field("scopes", f"does not have a valid value ({', '.join(unknown)})")
    if not scopes:
        raise Invalid.field("scopes", "can't be blank")
    return [scope for scope in SCOPES if scope in scopes]  # each once, in a fixed order


def issue_scoped(session: Session, user_id: int, kind: str, name: str, scopes: list[str],
                 expires_on: dt.date | None) -> tuple[Token, str]:  # fmt: skip
    """A new personal or impersonation token; its secret is returned once and never stored."""
    return _stored(session, user_id, kind, name, _checked_scopes(scopes), _checked_expiry(expires_on, MAX_LIFETIME_DAYS))


def _stored(session: Session, user_id: int, kind: str, name: str, scopes: list[str], expires_at: dt.datetime) -> tuple[Token, str]:
    secret = PERSONAL_PREFIX + new_secret()
    token = Token(user_id=user_id, kind=kind, digest=digest(secret), name=name, created_at=utcnow(),
                  expires_at=expires_at, scopes=scopes, revoked=False)  # fmt: skip
    session.add(token)
    session.flush()
    return token, secret


def revoke(session: Session, token: Token) -> None:
    """Revoke TOKEN (again: nothing changes). A revoked token names nobody from the next request."""
    token.revoked = True
    session.flush()


def rotate(session: Session, token: Token, expires_on: dt.date | None) -> tuple[Token, str]:
    """A new token with TOKEN's name, kind and scopes; TOKEN is revoked. A revoked or expired token
    is not rotated."""
    if not is_active(token):
        raise BadRequest("400 Bad request - Token already revoked" if token.revoked else "400 Bad request - Token expired")
    expires_at = _checked_expiry(expires_on, ROTATED_LIFETIME_DAYS)
    revoke(session, token)
    return _stored(session, token.user_id, token.kind, token.name, list(token.scopes), expires_at)


def scoped_token(session: Session, kinds: tuple[str, ...], token_id: int, user_id: int | None = None) -> Token:
    """The token numbered TOKEN_ID if of one of KINDS (and of USER_ID when given), or 404."""
    token = session.get(Token, token_id) if 0 < token_id <= 2**63 - 1 else None
    if token is None or token.kind not in kinds or (user_id is not None and token.user_id != user_id):
        raise NotFound(TOKEN_NAMES[kinds[0]])
    return token


TOKEN_NAMES = {PERSONAL: "Personal Access Token", IMPERSONATION: "Impersonation Token"}
STATES = ("active", "inactive")


def scoped_page(session: Session, kind: str, user_id: int | None, state: str | None, revoked: bool | None,
                offset: int, limit: int) -> tuple[int, list[Token]]:  # fmt: skip
    """(total, one page) of the tokens of KIND, oldest first: USER_ID's (everyone's when None),
    filtered by STATE (active or inactive) and REVOKED. Two statements."""
    conditions = [Token.kind == kind]
    if user_id is not None:
        conditions.append(Token.user_id == user_id)
    if revoked is not None:
        conditions.append(Token.revoked.is_(revoked))
    if state is not None:
        live = (~Token.revoked) & (Token.expires_at.is_(None) | (Token.expires_at > utcnow()))
        conditions.append(live if state == "active" else ~live)
    total = session.scalar(select(func.count(Token.id)).where(*conditions)) or 0
    rows = session.scalars(select(Token).where(*conditions).order_by(Token.id).offset(offset).limit(limit)).all()
    return total, list(rows)


class PasswordHasher:
    """argon2id with the configured cost. Hashing takes tens of milliseconds by design: callers on
    the event loop run `hash` and `verify` in a worker thread."""

    MIN_LENGTH = 8
    MAX_LENGTH = 128

    def __init__(self, time_cost: int = 3, memory_kib: int = 65536, parallelism: int = 4):
        self._hasher = argon2.PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism)
        # Verifying against this keeps a login for an unknown user as slow as one for a known user.
        self._decoy = self._hasher.hash(new_secret())

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored: str | None, password: str) -> bool:
        try:
            return self._hasher.verify(stored or self._decoy, password) and stored is not None
        except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
            return False

    def needs_rehash(self, stored: str) -> bool:
        return self._hasher.check_needs_rehash(stored)
