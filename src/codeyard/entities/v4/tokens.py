"""v4 shapes of personal access tokens and impersonation tokens (GitLab's `PersonalAccessToken`
and `ImpersonationToken` entities). The secret (`token`) is shown once: on create and rotate."""

from __future__ import annotations

import datetime as dt
from typing import TypedDict

from ..common import iso


class PersonalAccessToken(TypedDict):
    id: int
    name: str
    revoked: bool
    created_at: str | None
    scopes: list[str]
    user_id: int
    last_used_at: str | None
    active: bool
    expires_at: str | None  # a date, YYYY-MM-DD: the token works until that day ends (UTC)


class PersonalAccessTokenWithToken(PersonalAccessToken):
    token: str


class ImpersonationToken(PersonalAccessToken):
    impersonation: bool


class ImpersonationTokenWithToken(ImpersonationToken):
    token: str


def personal_access_token(token, active: bool, expires_on: dt.date | None) -> PersonalAccessToken:
    """TOKEN (a `Token` row); whether it is ACTIVE and its expiry date are the service's to say
    (`credentials.is_active`, `credentials.expiry_date`)."""
    return {
        "id": token.id,
        "name": token.name,
        "revoked": token.revoked,
        "created_at": iso(token.created_at),
        "scopes": list(token.scopes or ()),
        "user_id": token.user_id,
        "last_used_at": iso(token.last_used_at),
        "active": active,
        "expires_at": expires_on.isoformat() if expires_on is not None else None,
    }
