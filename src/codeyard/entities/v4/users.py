"""v4 user shapes: v3's (`entities/users.py`) with the fields v4 clients read added."""

from __future__ import annotations

from typing import TypedDict

from ..common import View, iso
from ..users import UserBasic, UserFull, avatar_url, user_full, web_url


class UserV4Basic(UserBasic):
    locked: bool


class UserV4Public(UserV4Basic):
    """Another user's profile (`GET /users/:id` for a caller who is not an admin)."""

    created_at: str | None
    bio: str
    location: str
    public_email: str
    skype: str
    linkedin: str
    twitter: str
    website_url: str
    organization: str
    job_title: str
    bot: bool


class UserV4(UserV4Public):
    """What `GET /user` answers: the caller's own record; what admins read of anyone.

    Its first fields are `UserV4Public`'s."""

    last_sign_in_at: str | None
    confirmed_at: str | None
    last_activity_on: str | None
    email: str
    theme_id: int
    color_scheme_id: int
    projects_limit: int
    current_sign_in_at: str | None
    identities: list[dict]
    can_create_group: bool
    can_create_project: bool
    two_factor_enabled: bool
    external: bool
    private_profile: bool
    commit_email: str
    is_admin: bool


def user_basic(user, view: View) -> UserV4Basic:
    return {
        "id": user.id,
        "username": user.username,
        "name": user.name,
        "state": user.state,
        "locked": False,
        "avatar_url": avatar_url(user, view),
        "web_url": web_url(user, view),
    }


def user_public(user, view: View) -> UserV4Public:
    """A profile under v4's names (`skype`, `linkedin`, `twitter` are v3's `messenger`, `profnet`,
    `microblog`)."""
    return {
        **user_basic(user, view),
        "created_at": iso(user.created_at),
        "bio": user.bio or "",
        "location": "",
        "public_email": "",
        "skype": user.messenger or "",
        "linkedin": user.profnet or "",
        "twitter": user.microblog or "",
        "website_url": user.website_url or "",
        "organization": "",
        "job_title": "",
        "bot": False,
    }


def user_self(user, view: View, can_create_project: bool) -> UserV4:
    """The caller's own record (and an admin's view of anyone): v3's full form under v4's names."""
    full: UserFull = user_full(user, view, can_create_project)
    return {
        **user_public(user, view),
        "last_sign_in_at": full["last_sign_in_at"],
        "confirmed_at": full["confirmed_at"],
        "last_activity_on": None,
        "email": full["email"],
        "theme_id": full["theme_id"],
        "color_scheme_id": full["color_scheme_id"],
        "projects_limit": full["projects_limit"],
        "current_sign_in_at": full["current_sign_in_at"],
        "identities": [],
        "can_create_group": full["can_create_group"],
        "can_create_project": can_create_project,
        "two_factor_enabled": False,
        "external": full["external"],
        "private_profile": False,
        "commit_email": full["email"],
        "is_admin": full["is_admin"],
    }


class Email(TypedDict):
    id: int
    email: str
    confirmed_at: str | None


def email(row) -> Email:
    return {"id": row.id, "email": row.email, "confirmed_at": iso(row.confirmed_at)}
