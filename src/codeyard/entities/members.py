"""The team member entity (reference DECISIONS row 20): the contact form of a user plus the level."""

from __future__ import annotations

from .common import View
from .users import UserContact, user_contact


class Member(UserContact):
    access_level: int


def member(user, access_level: int, view: View) -> Member:
    """`id, username, email, name, state, created_at, avatar_url, web_url, access_level`."""
    data = user_contact(user, view)
    data["access_level"] = access_level
    return data
