"""Secrets: argon2id password digests and tokens stored as SHA-256 digests.

Tokens are 20 random characters from a 62-letter alphabet (about 119 bits), so a fast hash is
the right digest for them: the lookup on every request stays one indexed query. Passwords are
chosen by people and get argon2id, whose cost the operator tunes by environment.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import string

import argon2
from sqlalchemy.orm import Session

from ..db.models import Token, utcnow

TOKEN_ALPHABET = string.ascii_letters + string.digits
TOKEN_LENGTH = 20
PRIVATE = "private"
OAUTH = "oauth"


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
