"""First start: create the `root` admin when the instance has no user yet."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..db.models import User
from . import credentials, users
from . import settings as settings_service

ROOT_USERNAME = "root"
# GitLab 8 gave root the default limit of 10 personal projects, which a new instance's first user
# meets at once when moving repositories in; the admin can still lower it.
ROOT_PROJECTS_LIMIT = 100_000


@dataclass(frozen=True)
class RootCredentials:
    username: str
    password: str | None  # None when it was given by the operator (not printed)
    token: str | None


def ensure_root(session: Session, hasher: credentials.PasswordHasher, password: str | None, token: str | None) -> RootCredentials | None:
    """Create root with PASSWORD and TOKEN (random when not given) if no user exists; else None.

    Returns what should be shown to the operator once: secrets that were generated here.
    """
    settings_service.load(session)
    if session.scalar(select(func.count()).select_from(User)) > 0:
        return None
    chosen_password = password or credentials.new_secret(16)
    root = users.create(
        session,
        {"username": ROOT_USERNAME, "email": "root@localhost.localdomain", "name": "Administrator", "is_admin": True,
         "projects_limit": ROOT_PROJECTS_LIMIT},
        hasher.hash(chosen_password),
    )
    _token, secret = credentials.issue_token(session, root.id, credentials.PRIVATE, "root", secret=token)
    return RootCredentials(ROOT_USERNAME, None if password else chosen_password, None if token else secret)
