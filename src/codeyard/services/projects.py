"""Projects: find, create, change, delete, fork, star, archive, list.

Each function takes the session, the acting user and plain values, and raises a domain error when a
rule says no. The repository on disk follows the database: it is created inside the transaction
(removed again if that rolls back) and removed only after a deletion has committed.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import re
import secrets
import shutil
import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import CompoundSelect, Integer, Select, bindparam, func, or_, select, union
from sqlalchemy.orm import Session

from ..db.hooks import on_commit, on_rollback
from ..db.models import (
    MASTER,
    ForkLink,
    GroupMember,
    Namespace,
    Project,
    ProjectGroupLink,
    ProjectMember,
    Star,
    Tombstone,
    User,
    is_id,
    parse_id,
)
from ..db.models.projects import INITIAL_BRANCH
from ..db.queries import like_pattern
from ..errors import Conflict, Forbidden, Invalid, NotFound
from ..git import languages as git_languages
from ..git import repo, storage
from ..git.refs import is_branch_name
from ..policies import groups as group_policy
from ..policies import projects as policy
from . import access as access_service
from . import events
from . import settings as settings_service
from .ci import traces
from .credentials import TOKEN_ALPHABET, digest
from .merge_requests import reactions
from .naming import format_errors

PROJECT_KIND = "project"
PATH_PATTERN = re.compile(r"[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*")
PATH_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"
NAME_PATTERN = re.compile(r"[^\W][\w\-\u2010-\u2015. ]*")
NAME_MESSAGE = "can contain only letters, digits, '_', '.', dash and space. It must start with letter, digit or '_'."
TAKEN = "has already been taken"
FEATURES = (
    "issues_enabled",
    "merge_requests_enabled",
    "builds_enabled",
    "wiki_enabled",
    "snippets_enabled",
    "shared_runners_enabled",
    "public_builds",
)
ORDERABLE = ("id", "name", "path", "created_at", "updated_at", "last_activity_at")


# --- finding --------------------------------------------------------------------------------------


def find(session: Session, ident: str) -> Project | None:
    """The project named by an id or by `namespace/path` (both parts matched whatever their case)."""
    if "/" in ident:
        namespace_path, _, rest = ident.partition("/")
        project_path = rest.split("/", 1)[0]
        return session.scalars(
            select(Project)
            .join(Namespace, Namespace.id == Project.namespace_id)
            .where(func.lower(Namespace.path) == namespace_path.lower(), func.lower(Project.path) == project_path.lower())
        ).first()
    if ident.isascii() and ident.isdigit():
        number = parse_id(ident)
        return session.get(Project, number) if number is not None else None
    return None


def find_tombstone(session: Session, ident: str) -> Tombstone | None:
    """The record of a deleted project named by id or `namespace/path`."""
    query = select(Tombstone).where(Tombstone.kind == PROJECT_KIND)
    if "/" in ident:
        query = query.where(func.lower(Tombstone.label) == "/".join(ident.split("/", 2)[:2]).lower())
    elif (number := parse_id(ident)) is not None:
        query = query.where(Tombstone.object_id == number)
    else:
        return None
    return session.scalars(query.order_by(Tombstone.deleted_at.desc())).first()


def could_have_deleted(session: Session, user, tombstone: Tombstone) -> bool:
    """Whether USER had the right to delete the project the tombstone remembers."""
    if user.is_admin:
        return True
    namespace = session.get(Namespace, tombstone.namespace_id) if tombstone.namespace_id else None
    if namespace is None:
        return False
    if namespace.kind == "user":
        return namespace.owner_id == user.id
    return access_service.group_level(session, user.id, namespace.id) == policy.OWNER


# --- tokens ---------------------------------------------------------------------------------------


def runners_token(secret_key: bytes, project) -> str:
    """The runners token of PROJECT (the model or a `project_reads` row): derived from the server's secret key and a per-project nonce,
    so only its digest is stored and yet admins of the project can be shown it again."""
    return _derived_token(secret_key, project.runners_token_nonce)


@functools.lru_cache(maxsize=16384)  # lists show the token of every project the caller administers
def _derived_token(secret_key: bytes, nonce: str) -> str:
    mac = hmac.new(secret_key, f"runners-token:{nonce}".encode(), hashlib.sha256).digest()
    number = int.from_bytes(mac, "big")
    chars = []
    for _ in range(20):
        number, index = divmod(number, len(TOKEN_ALPHABET))
        chars.append(TOKEN_ALPHABET[index])
    return "".join(chars)


def reset_runners_token(secret_key: bytes, project: Project) -> str:
    project.runners_token_nonce = secrets.token_hex(16)
    token = runners_token(secret_key, project)
    project.runners_token_digest = digest(token)
    return token


# --- validation -----------------------------------------------------------------------------------


def parameterize(name: str) -> str:
    """Rails' parameterize: ASCII, lower case, runs of other characters turned into one dash."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9\-_]+", "-", ascii_name.lower()).strip("-")


def name_errors(name: str) -> list[str]:
    return format_errors(name, NAME_PATTERN, NAME_MESSAGE)


def path_errors(path: str) -> list[str]:
    return format_errors(path, PATH_PATTERN, PATH_MESSAGE, refused_endings=(".git", ".atom"))


def taken_fields(session: Session, namespace_id: int, name: str | None, path: str | None, except_id: int | None = None) -> dict:
    """{"name": [...], "path": [...]} for whichever is already used in the namespace (any case)."""
    query = select(Project.name, Project.path).where(Project.namespace_id == namespace_id)
    if except_id is not None:
        query = query.where(Project.id != except_id)
    conditions = []
    if name is not None:
        conditions.append(func.lower(Project.name) == name.lower())
    if path is not None:
        conditions.append(func.lower(Project.path) == path.lower())
    taken: dict[str, list[str]] = {}
    for row in session.execute(query.where(or_(*conditions))) if conditions else ():
        if name is not None and row.name.lower() == name.lower():
            taken["name"] = [TAKEN]
        if path is not None and row.path.lower() == path.lower():
            taken["path"] = [TAKEN]
    return taken


def check_visibility(settings, actor, level: int, namespace: Namespace) -> None:
    level_name = policy.VISIBILITY_NAMES[level]
    if not actor.is_admin and settings_service.restricted_level(settings, level):
        raise Invalid({"visibility_level": [f"{level_name} has been restricted by your GitLab administrator"]})
    if namespace.kind == "group" and level > namespace.visibility_level:
        group_level = policy.VISIBILITY_NAMES[namespace.visibility_level]
        raise Invalid({"visibility_level": [f"{level_name} is not allowed in a {group_level} group."]})


def transfer(session: Session, actor, project: Project, namespace: Namespace) -> Project:
    """Move PROJECT into NAMESPACE. Its repository is stored by id, so nothing moves on disk and it
    clones at the new path at once. 400 with the field map when the name or path is taken there or
    the project is more visible than the group allows."""
    if project.namespace_id == namespace.id:
        return project
    check_visibility(settings_service.load(session), actor, project.visibility_level, namespace)
    if taken := taken_fields(session, namespace.id, project.name, project.path):
        raise Invalid(taken)
    project.namespace = namespace
    session.flush()
    return project


def requested_visibility(attrs: dict[str, Any]) -> int | None:
    """`visibility_level` if given, else 20/0 from `public`, else None."""
    if attrs.get("visibility_level") is not None:
        return attrs["visibility_level"]
    if attrs.get("public") is not None:
        return policy.PUBLIC if attrs["public"] else policy.PRIVATE
    return None


def personal_project_count(session: Session, user_id: int) -> int:
    return session.scalar(
        select(func.count(Project.id))
        .join(Namespace, Namespace.id == Project.namespace_id)
        .where(Namespace.owner_id == user_id, Namespace.kind == "user")
    )


def limit_message(limit: int) -> str:
    return f"Your project limit is {limit} projects! Please contact your administrator to increase it"


# --- create ---------------------------------------------------------------------------------------


def create(
    session: Session,
    rt,
    actor,
    namespace: Namespace,
    attrs: dict[str, Any],
    *,
    copy_repository_of: Project | None = None,
    initial_branch: str = INITIAL_BRANCH,
) -> Project:
    """A new project in NAMESPACE with its repository, whose HEAD names INITIAL_BRANCH; ACTOR is the
    creator.

    Errors: 400 field map (format, visibility), 409 field map (name/path taken), 403 (limit).
    """
    settings = settings_service.load(session)
    name = attrs.get("name") or attrs.get("path")
    path = attrs.get("path") or parameterize(name or "")
    errors = {}
    if found := name_errors(name or ""):
        errors["name"] = found
    if found := path_errors(path):
        errors["path"] = found
    if attrs.get("default_branch") is not None and not is_branch_name(attrs["default_branch"]):
        errors["default_branch"] = ["is invalid"]
    if errors:
        raise Invalid(errors)
    level = requested_visibility(attrs)
    level = settings.default_project_visibility if level is None else level
    check_visibility(settings, actor, level, namespace)
    if taken := taken_fields(session, namespace.id, name, path):
        raise Conflict(taken)
    if namespace.kind == "user":
        owner = session.get(User, namespace.owner_id)
        if personal_project_count(session, owner.id) >= owner.projects_limit:
            raise Forbidden(limit_message(owner.projects_limit))
    project = Project(
        namespace=namespace,
        name=name,
        path=path,
        description=attrs.get("description"),
        visibility_level=level,
        import_url=attrs.get("import_url"),
        tag_list=attrs.get("tag_list") or [],
        default_branch=attrs.get("default_branch"),
        creator_id=actor.id,
        **{flag: attrs[flag] for flag in FEATURES if attrs.get(flag) is not None},
    )
    reset_runners_token(rt.secret_key, project)
    session.add(project)
    session.flush()
    if namespace.kind == "user":
        session.add(ProjectMember(project_id=project.id, user_id=namespace.owner_id, access_level=MASTER, created_by_id=actor.id))
    events.record(session, project, actor.id, events.CREATED)
    _create_repository(session, rt, project, copy_repository_of, initial_branch)
    return project


def _create_repository(session: Session, rt, project: Project, source: Project | None, initial_branch: str) -> None:
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    on_rollback(session, lambda: storage.remove(path))
    if source is None:
        storage.create(path, initial_branch)
    else:
        storage.copy(storage.repository_path(rt.config.repositories_dir, source.id), path)


def repository_path(rt, project: Project):
    return storage.repository_path(rt.config.repositories_dir, project.id)


# --- update ---------------------------------------------------------------------------------------


def set_default_branch(session: Session, rt, project: Project, branch: str) -> None:
    """Make BRANCH (a canonical branch name, which must exist once the repository has branches) the
    default and HEAD: the default-branch checks compare names."""
    if not is_branch_name(branch):
        raise Invalid.field("default_branch", "is invalid")
    path = repository_path(rt, project)
    names = repo.branch_names(path)
    if names and branch not in names:
        raise Invalid.field("default_branch", "does not exist")
    project.default_branch = branch
    on_commit(session, lambda: repo.set_head_branch(path, branch))


def update(session: Session, actor, access: policy.Access, project: Project, attrs: dict[str, Any]) -> Project:
    """Change PROJECT. Renaming and changing visibility need owner rules; the rest admin_project."""
    if "name" in attrs and attrs["name"] != project.name and not access.can(policy.RENAME_PROJECT):
        raise Forbidden()
    level = requested_visibility(attrs)
    if level is not None and level != project.visibility_level and not access.can(policy.CHANGE_VISIBILITY):
        raise Forbidden()
    errors: dict[str, list[str]] = {}
    if "name" in attrs and (found := name_errors(attrs["name"])):
        errors["name"] = found
    if "path" in attrs and (found := path_errors(attrs["path"])):
        errors["path"] = found
    if errors:
        raise Invalid(errors)
    if level is not None and level != project.visibility_level:
        check_visibility(settings_service.load(session), actor, level, project.namespace)
        project.visibility_level = level
    if taken := taken_fields(session, project.namespace_id, attrs.get("name"), attrs.get("path"), except_id=project.id):
        raise Invalid(taken)
    for key in ("name", "path", "description", "tag_list", *FEATURES):
        if key in attrs:
            setattr(project, key, attrs[key])
    session.flush()
    return project


# --- delete ---------------------------------------------------------------------------------------


def delete(session: Session, rt, actor, project: Project) -> None:
    """Remove the project and everything it owns; its files go once the deletion has committed."""
    session.add(
        Tombstone(
            kind=PROJECT_KIND,
            object_id=project.id,
            label=project.path_with_namespace,
            namespace_id=project.namespace_id,
            deleted_by_id=actor.id if actor is not None else None,
        )
    )
    repository = storage.repository_path(rt.config.repositories_dir, project.id)
    uploads, project_id = rt.config.uploads_dir / str(project.id), project.id
    reactions.close_from(session, rt, project)  # its own requests go with it (cascade)
    session.delete(project)
    session.flush()
    on_commit(session, lambda: storage.remove(repository))
    on_commit(session, lambda: shutil.rmtree(uploads, ignore_errors=True))
    on_commit(session, lambda: rt.archives.remove_project(project_id))
    on_commit(session, lambda: traces.remove_project(rt, project_id))


def delete_all_in(session: Session, rt, actor, namespace_id: int) -> None:
    """Delete every project of a namespace (before the namespace itself goes)."""
    for project in session.scalars(select(Project).where(Project.namespace_id == namespace_id)).all():
        delete(session, rt, actor, project)


# --- forks ----------------------------------------------------------------------------------------


def fork(session: Session, rt, actor, source: Project, namespace: Namespace, name: str | None = None,
         path: str | None = None) -> Project:  # fmt: skip
    """A copy of SOURCE (attributes and repository) in NAMESPACE, linked as a fork, under NAME and
    PATH when given. Any reason it cannot be created answers 409 with the reasons."""
    attrs = {
        "name": name or source.name,
        "path": path or (source.path if name is None else None),
        "description": source.description,
        "visibility_level": source.visibility_level,
        "builds_enabled": source.builds_enabled,
        "shared_runners_enabled": source.shared_runners_enabled,
        "default_branch": source.default_branch,
    }
    try:
        project = create(session, rt, actor, namespace, attrs, copy_repository_of=source)
    except Invalid as error:
        raise Conflict(error.errors) from None
    except Forbidden as refusal:
        raise Conflict({"limit_reached": [refusal.message.removeprefix("403 Forbidden - ")]}) from None
    session.add(ForkLink(forked_to_project_id=project.id, forked_from_project_id=source.id))
    session.flush()
    return project


def link_fork(session: Session, project: Project, source: Project) -> ForkLink:
    if session.scalar(select(ForkLink.id).where(ForkLink.forked_to_project_id == project.id)) is not None:
        raise Conflict("Project already forked")
    if project.id == source.id:
        raise Conflict("Project cannot be a fork of itself")
    link = ForkLink(forked_to_project_id=project.id, forked_from_project_id=source.id)
    session.add(link)
    session.flush()
    return link


def unlink_fork(session: Session, project: Project) -> ForkLink | None:
    link = session.scalars(select(ForkLink).where(ForkLink.forked_to_project_id == project.id)).first()
    if link is not None:
        session.delete(link)
        session.flush()
    return link


# --- stars and archiving --------------------------------------------------------------------------


def set_star(session: Session, user_id: int, project: Project, starred: bool) -> bool:
    """Star or unstar; False when it was already so."""
    existing = session.get(Star, (user_id, project.id))
    if starred == (existing is not None):
        return False
    if starred:
        session.add(Star(user_id=user_id, project_id=project.id))
    else:
        session.delete(existing)
    session.flush()
    return True


def set_archived(project: Project, archived: bool) -> None:
    project.archived = archived


def starrers(session: Session, project_id: int, offset: int, limit: int, search: str | None = None) -> tuple[int, list]:
    """(how many, one page of (starred at, user)) of the users who starred the project, newest first."""
    query = select(Star.created_at, User).join(User, User.id == Star.user_id).where(Star.project_id == project_id)
    if search:
        pattern = like_pattern(search)
        query = query.where(or_(*(func.lower(column).like(pattern, escape="/") for column in (User.username, User.name))))
    total = session.scalar(select(func.count()).select_from(query.subquery()))
    rows = session.execute(query.order_by(Star.created_at.desc(), Star.user_id.desc()).offset(offset).limit(limit)).all()
    return total, list(rows)


# --- sharing with groups -------------------------------------------------------------------------

SHARED_ALREADY = "Group already shared with this project"


def share(session: Session, actor, access: policy.Access, project: Project, group_id: int, group_access: int,
          expires_at: dt.date | None) -> ProjectGroupLink:  # fmt: skip
    """Share PROJECT with the group GROUP_ID: its members reach the project at their group level, at
    most GROUP_ACCESS (which may not exceed ACCESS, the sharer's own level), until EXPIRES_AT.
    404 for a group ACTOR may not read, 409 when already shared."""
    group = session.get(Namespace, group_id) if is_id(group_id) else None
    level = access_service.group_level(session, actor.id, group.id) if group is not None else None
    if group is None or group.kind != "group" or group_policy.READ_GROUP not in group_policy.group_abilities(actor, group, level):
        raise NotFound("Group")
    if group.id == project.namespace_id:
        raise Invalid.field("group_id", "is the project's own group")
    if group_access > access.level:
        raise Invalid.field("group_access", "may not be higher than your own access level")
    if expires_at is not None and expires_at <= dt.datetime.now(dt.UTC).date():
        raise Invalid.field("expires_at", "must be in the future")
    if session.scalar(select(ProjectGroupLink.id).where(ProjectGroupLink.project_id == project.id,
                                                        ProjectGroupLink.group_id == group.id)) is not None:  # fmt: skip
        raise Conflict(SHARED_ALREADY)
    link = ProjectGroupLink(project_id=project.id, group_id=group.id, group_access=group_access, expires_at=expires_at)
    session.add(link)
    session.flush()
    return link


SHARED_WITH = (
    select(ProjectGroupLink.group_id, Namespace.name, Namespace.path, ProjectGroupLink.group_access, ProjectGroupLink.expires_at)
    .join(Namespace, Namespace.id == ProjectGroupLink.group_id)
    .where(ProjectGroupLink.project_id == bindparam("project_id", type_=Integer))
    .order_by(ProjectGroupLink.id)
)


def shared_with(read, project_id: int) -> list:
    """(group_id, name, path, group_access, expires_at) of the groups the project is shared with;
    READ is `Database.fast_all` or a session's `execute` (a write's answer)."""
    return list(read(SHARED_WITH, {"project_id": project_id}))


def unshare(session: Session, project: Project, group_id: int) -> bool:
    """Stop sharing PROJECT with the group GROUP_ID; False when it was not shared with it."""
    link = session.scalars(
        select(ProjectGroupLink).where(ProjectGroupLink.project_id == project.id, ProjectGroupLink.group_id == group_id)
    ).first() if is_id(group_id) else None  # fmt: skip
    if link is None:
        return False
    session.delete(link)
    session.flush()
    return True


# --- what the repository says ---------------------------------------------------------------------


def is_empty(rt, project_id: int) -> bool:
    """Whether the project's repository has no branch yet."""
    return not repo.branch_names(storage.repository_path(rt.config.repositories_dir, project_id))


def languages(rt, project_id: int, ref: str) -> dict[str, float]:
    """The languages of REF's files, by share of bytes (bounded: `git.languages`)."""
    return git_languages.languages(storage.repository_path(rt.config.repositories_dir, project_id), ref)


def statistics(rt, project_id: int, ref: str) -> dict[str, int]:
    """What is cheap to tell of the repository: the commits REF reaches and its size on disk."""
    path = storage.repository_path(rt.config.repositories_dir, project_id)
    try:
        commits = repo.count_commits(path, ref)
    except (repo.NotInRepository, KeyError, ValueError):
        commits = 0
    size = git_languages.size_on_disk(path)
    return {"commit_count": commits, "repository_size": size, "storage_size": size}


# --- lists ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    archived: bool | None = None
    search: str | None = None
    visibility: int | None = None
    order_by: str = "created_at"
    sort: str = "desc"
    # API v4's further filters: ids after or before one (keyset pages), the caller's least level,
    # last activity after or before a time.
    id_after: int | None = None
    id_before: int | None = None
    min_access_level: int | None = None
    last_activity_after: Any = None
    last_activity_before: Any = None

    def given(self) -> tuple[str, ...]:
        """The names of v4's further filters that are set: one statement per combination."""
        return tuple(name for name in V4_FILTERS if getattr(self, name) is not None)


V4_FILTERS = ("id_after", "id_before", "min_access_level", "last_activity_after", "last_activity_before")


def authorized(user_id: int) -> CompoundSelect:
    """Ids of projects USER is a member of: personal, via a group, directly, or through a group the
    project is shared with. A UNION, so that the database starts from the user's memberships: an OR
    of IN-subqueries makes PostgreSQL read every project and test each against all of them."""
    direct = select(ProjectMember.project_id).where(ProjectMember.user_id == user_id)
    return union(_in_namespaces(member_namespaces(user_id)), direct, _shared_with(user_id))


def _shared_with(user_id, level=None) -> Select:
    """Ids of projects shared with a group USER is a member of (at LEVEL or more, when given: the
    lower of their group level and the link's)."""
    query = (
        select(ProjectGroupLink.project_id)
        .join(GroupMember, GroupMember.namespace_id == ProjectGroupLink.group_id)
        .where(GroupMember.user_id == user_id, access_service.live_link())
    )
    if level is not None:
        query = query.where(GroupMember.access_level >= level, ProjectGroupLink.group_access >= level)
    return query


def member_namespaces(user_id: int) -> CompoundSelect:
    """Ids of USER's personal namespace and of the groups they are a member of."""
    personal = select(Namespace.id).where(Namespace.owner_id == user_id, Namespace.kind == "user")
    groups = select(GroupMember.namespace_id).where(GroupMember.user_id == user_id)
    return union(personal, groups)


def reached(user_id, level) -> CompoundSelect:
    """Ids of projects where USER's level is LEVEL or more: those of their personal namespace (they
    own them), of the groups where their level is so, their direct memberships so, and those shared
    with their groups so."""
    personal = select(Namespace.id).where(Namespace.owner_id == user_id, Namespace.kind == "user")
    groups = select(GroupMember.namespace_id).where(GroupMember.user_id == user_id, GroupMember.access_level >= level)
    direct = select(ProjectMember.project_id).where(ProjectMember.user_id == user_id, ProjectMember.access_level >= level)
    return union(_in_namespaces(union(personal, groups)), direct, _shared_with(user_id, level))


def owned(user_id: int) -> Select:
    personal = select(Namespace.id).where(Namespace.owner_id == user_id, Namespace.kind == "user")
    groups = select(GroupMember.namespace_id).where(GroupMember.user_id == user_id, GroupMember.access_level == policy.OWNER)
    return _in_namespaces(union(personal, groups))


def _in_namespaces(namespace_ids) -> Select:
    return select(Project.id).where(Project.namespace_id.in_(namespace_ids))


def starred(user_id: int) -> Select:
    return select(Star.project_id).where(Star.user_id == user_id)

