"""User shapes: basic, build form (User), full (admins), login (the caller), member/author forms.

Every function takes any object with the user's attributes: an ORM `User` or a row of the
`users` table (the authenticated caller).
"""

from __future__ import annotations

import functools
import hashlib
from typing import TypedDict

from .common import DeletedBefore, View, iso

# codeyard has no web interface to theme: every user shows GitLab 8's defaults (docs/DECISIONS.md C43).
DEFAULT_THEME_ID = 2
DEFAULT_COLOR_SCHEME_ID = 1


class UserBasic(TypedDict):
    name: str
    username: str
    id: int
    state: str
    avatar_url: str
    web_url: str


class User(UserBasic):
    created_at: str | None
    is_admin: bool
    bio: str | None
    profnet: str | None
    messenger: str | None
    microblog: str | None
    website_url: str | None


class Identity(TypedDict):
    provider: str
    extern_uid: str


class UserFull(User):
    last_sign_in_at: str | None
    confirmed_at: str | None
    email: str
    theme_id: int
    color_scheme_id: int
    projects_limit: int
    current_sign_in_at: str | None
    identities: list[Identity]
    can_create_group: bool
    can_create_project: bool
    two_factor_enabled: bool
    external: bool


class UserLogin(UserFull, total=False):
    private_token: str


class DeletedUser(DeletedBefore):
    username: str


class UserContact(TypedDict):
    id: int
    username: str
    email: str
    name: str
    state: str
    created_at: str | None
    avatar_url: str
    web_url: str


def avatar_url(user, view: View) -> str:
    """The gravatar URL; empty when the avatar service is off (the spec types it a string)."""
    return gravatar(user.email, view)


def gravatar(email: str | None, view: View) -> str:
    """The gravatar URL of EMAIL, or "" (avatar service off, no e-mail)."""
    if not view.avatars or not email:
        return ""
    return _gravatar(email, view.base_url.startswith("https:"))


@functools.lru_cache(maxsize=4096)  # every request shows its caller's, every project page its owners'
def _gravatar(email: str, https: bool) -> str:
    digest = hashlib.md5(email.strip().lower().encode(), usedforsecurity=False).hexdigest()
    host = "https://secure.gravatar.com" if https else "http://www.gravatar.com"
    return f"{host}/avatar/{digest}?s=80&d=identicon"


def web_url(user, view: View) -> str:
    return f"{view.base_url}/u/{user.username}"


def user_basic(user, view: View) -> UserBasic:
    return {
        "name": user.name,
        "username": user.username,
        "id": user.id,
        "state": user.state,
        "avatar_url": avatar_url(user, view),
        "web_url": web_url(user, view),
    }


def user(user, view: View) -> User:
    """The spec's build form: basic + created_at, is_admin, bio, the three handles, website_url."""
    data = user_basic(user, view)
    data.update(
        created_at=iso(user.created_at),
        is_admin=bool(user.is_admin),
        bio=user.bio,
        profnet=user.profnet,
        messenger=user.messenger,
        microblog=user.microblog,
        website_url=user.website_url,
    )
    return data


def user_full(subject, view: View, can_create_project: bool) -> UserFull:
    data = user(subject, view)
    data.update(
        last_sign_in_at=iso(subject.last_sign_in_at),
        confirmed_at=iso(subject.confirmed_at),
        email=subject.email,
        theme_id=DEFAULT_THEME_ID,
        color_scheme_id=DEFAULT_COLOR_SCHEME_ID,
        projects_limit=subject.projects_limit,
        current_sign_in_at=iso(subject.current_sign_in_at),
        identities=[],
        can_create_group=bool(subject.can_create_group),
        can_create_project=can_create_project,
        two_factor_enabled=False,
        external=bool(subject.external),
    )
    return data


def user_login(subject, view: View, can_create_project: bool, private_token: str | None) -> UserLogin:
    """The caller's own record. Tokens are stored hashed, so `private_token` is the one the caller
    authenticated with (or was just issued); it is absent when unknown (OAuth, sudo)."""
    data = user_full(subject, view, can_create_project)
    if private_token is not None:
        data["private_token"] = private_token
    return data


def user_contact(subject, view: View) -> UserContact:
    """Merge request author/assignee and team member form: id, username, email, name, state, created_at."""
    return {
        "id": subject.id,
        "username": subject.username,
        "email": subject.email,
        "name": subject.name,
        "state": subject.state,
        "created_at": iso(subject.created_at),
        "avatar_url": avatar_url(subject, view),
        "web_url": web_url(subject, view),
    }
