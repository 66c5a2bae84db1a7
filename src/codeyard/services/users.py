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

from ..db.models import OWNER, Email, GroupMember, Namespace, Tombstone, User, is_id, utcnow
from ..db.queries import like_pattern, matches_pattern, page_statements, read_page, read_row
from ..errors import Conflict, Forbidden, Invalid, NotFound, RecordNotFound
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
# A user's states: only an active user signs in or is authenticated by a token (`auth`, `signin`,
# `githttp.credentials`, `web_sessions` and the policies all ask for "active"). A deactivated user is
# shut out like a blocked one; GitLab lets them back in by signing in, codeyard only by an admin.
ACTIVE, BLOCKED, DEACTIVATED = "active", "blocked", "deactivated"


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
    """Whether EMAIL is someone's primary or secondary e-mail (any case), but EXCEPT_USER_ID's own."""
    for column, owner in ((User.email, User.id), (Email.email, Email.user_id)):
        query = select(owner).where(func.lower(column) == email.lower())
        if except_user_id is not None:
            query = query.where(owner != except_user_id)
        if session.scalar(query.limit(1)) is not None:
            return True
    return False


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
    """Block, deactivate or activate; False when the user already was in that state. Leaving the
    active state ends the user's web sessions for good: activating brings none back (tokens count as
    nobody while the user is not active)."""
    if user.state == state:
        return False
    user.state = state
    if state != ACTIVE:
        _end_web_sessions(session, user)
    return True


# GitLab v4's moves between the states: a blocked user is neither deactivated nor activated, a
# deactivated one not unblocked (each a 403 with GitLab's message). A move to the state the user is
# already in answers None (block, deactivate) or False (unblock, activate), as GitLab does.


def block(session: Session, user: User, actor) -> bool | None:
    if user.id == actor.id:
        raise Forbidden("The API initiating user cannot be blocked by the API")
    return None if user.state == BLOCKED else set_state(session, user, BLOCKED)


def unblock(session: Session, user: User) -> bool:
    if user.state == DEACTIVATED:
        raise Forbidden("Deactivated users cannot be unblocked by the API")
    return set_state(session, user, ACTIVE)


def deactivate(session: Session, user: User, actor) -> bool | None:
    if user.state == DEACTIVATED:
        return None
    if user.state == BLOCKED:
        raise Forbidden("A blocked user cannot be deactivated by the API")
    if user.id == actor.id:
        raise Forbidden("The API initiating user cannot be deactivated by the API")
    return set_state(session, user, DEACTIVATED)


def activate(session: Session, user: User) -> bool:
    if user.state == BLOCKED:
        raise Forbidden("A blocked user must be unblocked to be activated")
    return set_state(session, user, ACTIVE)


def _end_web_sessions(session: Session, user: User) -> None:
    # The user's row is written first: it stays locked until commit, so a sign-in (which locks it,
    # `signin.signing_in`) either commits its session before this delete runs or sees the change.
    session.flush()
    web_sessions.end_all(session, user.id)


def delete(session: Session, rt, user: User, actor, solely_owned=None) -> None:
    """Remove the user with their personal projects, namespace, memberships and tokens; remember it.

    Refused (409) while the user is the only owner of a group: the group would be left unmanaged;
    unless SOLELY_OWNED, a function of (session, rt, actor, group), removes each such group first
    (v4's `hard_delete`).
    """
    if solo_owned := solely_owned_groups(session, user.id):
        if solely_owned is None:
            names = ", ".join(group.path for group in solo_owned)
            raise Conflict(f"You must transfer ownership or delete groups before you can remove user (sole owner of {names})")
        for group in solo_owned:
            solely_owned(session, rt, actor, group)
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


# The orders a directory may be read in (v4's `order_by`), each ending with the id.
DIRECTORY_ORDERS = {"id": (User.id,), "name": (User.name, User.id), "username": (User.username, User.id),
                    "created_at": (User.created_at, User.id), "updated_at": (User.updated_at, User.id)}  # fmt: skip


@functools.cache
def _directory_statements(username: bool, text: bool, active_only: bool, blocked_only: bool = False,
                          external_only: bool = False, order: tuple[str, bool] = ("id", False)):  # fmt: skip
    """(count, page) of users matching the filters present, in ORDER (a key of DIRECTORY_ORDERS and
    whether descending; oldest first by default). Each row is a caller's row (`identity.USER_COLUMNS`
    and `personal_projects`)."""
    conditions = []
    if username:
        conditions.append(func.lower(User.username) == bindparam("username"))
    if text:
        conditions.append(matches_pattern("pattern", User.name, User.email, User.username))
    if active_only:
        conditions.append(User.state == ACTIVE)
    if blocked_only:
        conditions.append(User.state == BLOCKED)
    if external_only:
        conditions.append(User.external.is_(True))
    key, descending = order
    columns = DIRECTORY_ORDERS[key]
    return page_statements(
        (*USER_COLUMNS, PERSONAL_PROJECTS), User.__table__, conditions, [c.desc() for c in columns] if descending else columns
    )


async def read_directory(db, *, text: str | None, username: str | None, active_only: bool, offset: int, limit: int,
                         blocked_only: bool = False, external_only: bool = False, order: tuple[str, bool] = ("id", False)):  # fmt: skip
    """(total, rows of one page) of the users matching the filters, oldest first unless ORDER says
    otherwise; each row renders as the caller's does (`caller_can_create_project` applies)."""
    params = {
        "username": username.lower() if username else None,
        "pattern": like_pattern(text) if text else None,
        "offset": offset,
        "limit": limit,
    }
    statements = _directory_statements(bool(username), bool(text), active_only, blocked_only, external_only, order)
    return await read_page(db.loop, statements, params)


async def read_record(db, user_id: int, missing=RecordNotFound):
    """USER_ID's row, as `read_directory` gives it; MISSING raised when there is none (404 `404 Not found`)."""
    return await read_row(db.loop, USER_BY_ID_OR_USERNAME, {"id": user_id, "username": None}, user_id, missing)


def caller_can_create_project(caller) -> bool:
    """`can_create_project` for the authenticated caller, whose row carries `personal_projects`."""
    return caller.projects_limit > caller.personal_projects


def can_create_project(session: Session, user) -> bool:
    """Whether the user's personal project limit leaves room for one more."""
    personal = session.scalar(select(PERSONAL_PROJECTS).where(User.id == user.id))
    return user.projects_limit > personal


# --- secondary e-mails (API v4) ------------------------------------------------------------------

_EMAILS = page_statements((Email.id, Email.email, Email.confirmed_at), Email.__table__, (Email.user_id == bindparam("user_id"),), (Email.id,))


async def read_emails(reader, user_id: int, offset: int, limit: int) -> tuple[int, list]:
    """(total, rows of one page) of USER_ID's secondary e-mails, oldest first."""
    return await read_page(reader, _EMAILS, {"user_id": user_id, "offset": offset, "limit": limit})


def find_email(session: Session, user, email_id: int) -> Email | None:
    if not is_id(email_id):
        return None
    return session.scalars(select(Email).where(Email.id == email_id, Email.user_id == user.id)).first()


def add_email(session: Session, user, email: str, confirmed: bool = True) -> Email:
    """A secondary e-mail of USER; 400 when it is anyone's already, primary or secondary. codeyard
    sends no mail: an address is confirmed when added (GitLab's `skip_confirmation`)."""
    if email_taken(session, email):
        raise Invalid({"email": ["has already been taken"]})
    now = utcnow()
    row = Email(user_id=user.id, email=email, confirmed_at=now if confirmed else None, created_at=now)
    session.add(row)
    session.flush()
    return row


def delete_email(session: Session, user, email_id: int) -> None:
    row = find_email(session, user, email_id)
    if row is None:
        raise NotFound("Email")
    session.delete(row)
    session.flush()
