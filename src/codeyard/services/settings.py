"""Application settings: the single row admins change, its defaults and its rules."""

from __future__ import annotations

import threading
import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db.engine import Database
from ..db.models import ApplicationSetting

SETTINGS_ID = 1
VISIBILITY_LEVELS = (0, 10, 20)
VISIBILITY_NAMES = {0: "private", 10: "internal", 20: "public"}
BRANCH_PROTECTION_LEVELS = (0, 1, 2)

# The fields admins may change through the API (every field of the entity but id and timestamps).
EDITABLE = (
    "default_projects_limit",
    "signup_enabled",
    "signin_enabled",
    "avatarservice_enabled",
    "sign_in_text",
    "home_page_url",
    "default_branch_protection",
    "socialnetwork_sharing_enabled",
    "restricted_visibility_levels",
    "max_attachment_size",
    "session_expire_delay",
    "default_project_visibility",
    "default_snippet_visibility",
    "default_group_visibility",
    "restricted_signup_domains",
    "user_oauth_applications",
    "after_sign_out_path",
    "allow_local_requests_from_hooks",
)


def load(session: Session) -> ApplicationSetting:
    """The settings row, created with the defaults on first use."""
    row = session.get(ApplicationSetting, SETTINGS_ID)
    if row is None:
        row = ApplicationSetting(id=SETTINGS_ID)
        session.add(row)
        session.flush()
    return row


def update(session: Session, changes: dict[str, Any]) -> ApplicationSetting:
    """Apply already validated values; unknown keys are a programming error."""
    row = load(session)
    for key, value in changes.items():
        if key not in EDITABLE:
            raise KeyError(key)
        setattr(row, key, value)
    session.flush()
    return row


def restricted_level(settings: ApplicationSetting, level: int) -> bool:
    return level in (settings.restricted_visibility_levels or [])


def email_domain_allowed(settings: ApplicationSetting, email: str) -> bool:
    domains = settings.restricted_signup_domains or []
    if not domains:
        return True
    domain = email.rsplit("@", 1)[-1].lower()
    return any(_domain_matches(pattern.lower(), domain) for pattern in domains)


def _domain_matches(pattern: str, domain: str) -> bool:
    if pattern.startswith("*."):
        return domain.endswith(pattern[1:])
    return domain == pattern


class PresentationCache:
    """Settings that only change how things are shown (the avatar service), kept for a second.

    Every decision (limits, sizes, visibility) reads the row in its own transaction instead; this
    cache only spares the hot read paths a query. The process that changes the settings drops it at
    once; other processes see a change within `ttl` seconds.
    """

    _AVATARS = select(ApplicationSetting.__table__.c.avatarservice_enabled).where(
        ApplicationSetting.__table__.c.id == SETTINGS_ID
    )

    def __init__(self, db: Database, ttl: float = 1.0):
        self._db = db
        self._ttl = ttl
        self._lock = threading.Lock()
        self._avatars: bool = True
        self._fetched_at = float("-inf")

    def avatars_enabled(self) -> bool:
        now = time.monotonic()
        if now - self._fetched_at > self._ttl:
            row = self._db.fast_first(self._AVATARS, {})
            with self._lock:
                self._avatars = True if row is None else bool(row[0])
                self._fetched_at = now
        return self._avatars

    def invalidate(self) -> None:
        with self._lock:
            self._fetched_at = float("-inf")
