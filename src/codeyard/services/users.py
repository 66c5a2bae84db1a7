"""Users: create, change, block, delete, find; sign-in bookkeeping.

Passwords reach these functions already hashed (`credentials.PasswordHasher`, run off the event
loop by the caller). Every user owns a personal namespace whose path is the username.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from ..db.models import OWNER, GroupMember, Namespace, Tombstone, User, is_id, utcnow
from ..db.queries import like_pattern, matches_pattern, page_statements, read_page, read_row
from ..errors import Conflict, Invalid, NotFound, RecordNotFound
from . import projects, web_sessions
from . import settings as settings_service
from .identity import PERSONAL_PROJECTS, USER_BY_ID_OR_USERNAME, USER_COLUMNS

NAMESPACE_PATTERN = re.compile(r"(?:[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_\-]|[a-zA-Z0-9_])")
NAMESPACE_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.'."
# Top-level paths the service itself answers; no user or group may take them.
RESERVED_NAMESPACES = frozenset(
    {
        "-", "admin", "api", "assets", "ci", "dashboard", "explore", "favicon.ico", "files", "groups",
        "health", "help", "hooks", "new", "oauth", "profile", "projects", "public", "robots.txt",
        "s", "search", "snippets", "u", "uploads", "users",
    }
)  # fmt: skip

# API parameter names of GitLab 8 for the three handles, accepted as aliases.
HANDLE_ALIASES = {"profnet": "linkedin", "messenger": "skype", "microblog": "twitter"}
PROFILE_FIELDS = ("name", "bio", "website_url", "profnet", "messenger", "microblog")
ADMIN_FIELDS = ("projects_limit", "can_create_group", "is_admin", "external")

USER_KIND = "user"


def namespace_path_errors(path: str) -> list[str]:
    errors = []
    if not NAMESPACE_PATTERN.fullmatch(path):
        errors.append(NAMESPACE_MESSAGE)
    if path.lower() in RESERVED_NAMESPACES:
        errors.append(f"{path} is a reserved name")
    return errors


def namespace_path_taken(session: Session, path: str, except_namespace_id: int | None = None) -> bool:
    query = select(Namespace.id).where(func.lower(Namespace.path) == path.lower())
    if except_namespace_id is not None:
        query = query.where(Namespace.id != except_namespace_id)
    return session.scalar(query.limit(1)) is not None


def email_taken(session: Session, email: str, except_user_id: int | None = None) -> bool:
    query = select(User.id).where(func.lower(User.email) == email.lower())
    if except_user_id is not None:
        query = query.where(User.id != except_user_id)
    return session.scalar(query.limit(1)) is not None


def find(session: Session, user_id: int) -> User | None:
    return session.get(User, user_id) if is_id(user_id) else None


def get(session: Session, user_id: int) -> User:
    user = find(session, user_id)
    if user is None:
        raise NotFound("User")
    return user


def get_record(session: Session, user_id: int) -> User:
    """Like `get`, with GitLab's wording for a failed lookup by id ("404 Not found")."""
    user = find(session, user_id)
    if user is None:
        raise RecordNotFound()
    return user


def find_by_login(session: Session, login: str) -> User | None:
    """The user whose username, or e-mail when LOGIN holds an @, is LOGIN (any case)."""
    column = User.email if "@" in login else User.username
    return session.scalar(select(User).where(func.lower(column) == login.lower()))


def create(session: Session, fields: dict[str, Any], password_digest: str | None) -> User:
    """A new active user with a personal namespace. FIELDS holds validated API values."""
    settings = settings_service.load(session)
    username, email = fields["username"], fields["email"]
    errors: dict[str, list[str]] = {}
    if path_errors := namespace_path_errors(username):
        errors["username"] = path_errors
    if not settings_service.email_domain_allowed(settings, email):
        allowed = ", ".join(settings.restricted_signup_domains)
        errors["email"] = [f"is not whitelisted. Email domains valid for registration are: {allowed}"]
    if email_taken(session, email):
        raise Conflict("Email has already been taken")
    if namespace_path_taken(session, username):
        raise Conflict("Username has already been taken")
    if errors:
        raise Invalid(errors)
    now = utcnow()
    user = User(
        username=username,
        email=email,
        password_digest=password_digest,
        projects_limit=settings.default_projects_limit,
        confirmed_at=now,
        created_at=now,
        updated_at=now,
    )
    _assign(user, fields)
    session.add(user)
    session.flush()
    session.add(Namespace(path=username, name=username, kind=USER_KIND, owner_id=user.id, created_at=now, updated_at=now))
    session.flush()
    return user


def update(session: Session, user: User, fields: dict[str, Any], password_digest: str | None = None) -> User:
    """Change a user; a new username renames the personal namespace with it."""
    email, username = fields.get("email"), fields.get("username")
    if email is not None and email_taken(session, email, except_user_id=user.id):
        raise Conflict("Email has already been taken")
    namespace = personal_namespace(session, user)
    if username is not None and username != user.username:
        if namespace_path_taken(session, username, except_namespace_id=namespace.id):
            raise Conflict("Username has already been taken")
        if path_errors := namespace_path_errors(username):
            raise Invalid({"username": path_errors})
        user.username = username
        namespace.path = namespace.name = username
    if email is not None:
        user.email = email
    _assign(user, fields)
    if password_digest is not None:
        set_password(session, user, password_digest)
    session.flush()
    return user


def set_password(session: Session, user: User, password_digest: str) -> None:
    """A new password ends every web session of the user (a reset shuts out whoever held the old
    one); tokens are kept, as GitLab keeps personal access tokens."""
    user.password_digest = password_digest
    _end_web_sessions(session, user)


def _assign(user: User, fields: dict[str, Any]) -> None:
    for key in (*PROFILE_FIELDS, *ADMIN_FIELDS):
        if key in fields:
            value = fields[key]
            setattr(user, key, value if value is not None or key == "bio" else "")


def personal_namespace(session: Session, user) -> Namespace:
    return session.scalars(select(Namespace).where(Namespace.owner_id == user.id, Namespace.kind == USER_KIND)).one()


def set_state(session: Session, user: User, state: str) -> bool:
    """Block or activate; False when the user already was in that state. A block ends the user's
    web sessions for good: unblocking brings none back (tokens count as nobody while blocked)."""
    if user.state == state:
        return False
    user.state = state
    if state == "blocked":
        _end_web_sessions(session, user)
    return True


def _end_web_sessions(session: Session, user: User) -> None:
    # The user's row is written first: it stays locked until commit, so a sign-in (which locks it,
    # `signin.signing_in`) either commits its session before this delete runs or sees the change.
    session.flush()
    web_sessions.end_all(session, user.id)


def delete(session: Session, rt, user: User, actor) -> None:
    """Remove the user with their personal projects, namespace, memberships and tokens; remember it.

    Refused (409) while the user is the only owner of a group: the group would be left unmanaged.
    """
    if solo_owned := solely_owned_groups(session, user.id):
        names = ", ".join(group.path for group in solo_owned)
        raise Conflict(f"You must transfer ownership or delete groups before you can remove user (sole owner of {names})")
    namespace = personal_namespace(session, user)
    projects.delete_all_in(session, rt, actor, namespace.id)
    session.add(Tombstone(kind=USER_KIND, object_id=user.id, label=user.username, deleted_by_id=actor.id))
    session.delete(user)
    session.flush()


def solely_owned_groups(session: Session, user_id: int) -> list[Namespace]:
    """Groups where USER is an owner and no one else is."""
    owned = select(GroupMember.namespace_id).where(GroupMember.user_id == user_id, GroupMember.access_level == OWNER)
    other_owners = (
        select(GroupMember.namespace_id)
        .where(GroupMember.user_id != user_id, GroupMember.access_level == OWNER)
    )
    return list(
        session.scalars(
            select(Namespace).where(Namespace.id.in_(owned), Namespace.id.not_in(other_owners)).order_by(Namespace.path)
        )
    )


def tombstone(session: Session, user_id: int) -> Tombstone | None:
    return session.get(Tombstone, (USER_KIND, user_id)) if is_id(user_id) else None


# --- the directory's read path: GET requests, no session (`Database.loop`) -------------------


@functools.cache
def _directory_statements(username: bool, text: bool, active_only: bool):
    """(count, page) of users matching the filters present, oldest first. Each row is a caller's
    row (`identity.USER_COLUMNS` and `personal_projects`)."""
    conditions = []
    if username:
        conditions.append(func.lower(User.username) == bindparam("username"))
    if text:
        conditions.append(matches_pattern("pattern", User.name, User.email, User.username))
    if active_only:
        conditions.append(User.state == "active")
    return page_statements((*USER_COLUMNS, PERSONAL_PROJECTS), User.__table__, conditions, (User.id,))


async def read_directory(db, *, text: str | None, username: str | None, active_only: bool, offset: int, limit: int):
    """(total, rows of one page) of the users matching the filters, oldest first; each row renders
    as the caller's does (`caller_can_create_project` applies)."""
    params = {
        "username": username.lower() if username else None,
        "pattern": like_pattern(text) if text else None,
        "offset": offset,
        "limit": limit,
    }
    return await read_page(db.loop, _directory_statements(bool(username), bool(text), active_only), params)


async def read_record(db, user_id: int):
    """USER_ID's row, as `read_directory` gives it; 404 `404 Not found` when there is none."""
    return await read_row(db.loop, USER_BY_ID_OR_USERNAME, {"id": user_id, "username": None}, user_id, RecordNotFound)


def caller_can_create_project(caller) -> bool:
    """`can_create_project` for the authenticated caller, whose row carries `personal_projects`."""
    return caller.projects_limit > caller.personal_projects


def can_create_project(session: Session, user) -> bool:
    """Whether the user's personal project limit leaves room for one more."""
    personal = session.scalar(select(PERSONAL_PROJECTS).where(User.id == user.id))
    return user.projects_limit > personal
