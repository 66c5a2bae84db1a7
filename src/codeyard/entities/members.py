"""The team member entity (reference DECISIONS row 20): the contact form of a user plus the level."""

from __future__ import annotations

from .common import View
from .users import user_contact


def member(user, access_level: int, view: View) -> dict:
    """`id, username, email, name, state, created_at, avatar_url, web_url, access_level`."""
    data = user_contact(user, view)
    data["access_level"] = access_level
    return data
