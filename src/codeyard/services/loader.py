"""The one way in: load a project (or a group) for a caller and decide whether they may have it.

Every edge that serves something under a project — the API guards, the web pages, git over HTTP,
uploaded files — asks here and gets a `Loaded`: the row and the caller's access, or the reason it
is refused. The edges only choose what a reason becomes (the API's `404 Project Not Found`, a
page's plain 404, git's 401 asking for credentials):

- NOT_FOUND: no such project, or one the caller may not read (never told apart: no secret kept);
- FORBIDDEN: a readable project, but one of the abilities asked for is missing;
- UNAUTHENTICATED: an anonymous caller refused either way, when the edge asks anonymous callers to
  sign in (`sign_in=True`: git) rather than telling them a project is missing or closed.

Reading is the caller's choice of reader (`db/readers.py`: `db.loop` awaited on the event loop,
`db.fast`, or the request's session `ctx.reader` for forms, those two run by sync callers with
`readers.now`); judging is one function.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from ..policies import groups as group_policy
from ..policies import projects as policy
from . import groups, project_reads


class LoadRefused(enum.Enum):
    NOT_FOUND = "not found"
    FORBIDDEN = "forbidden"
    UNAUTHENTICATED = "unauthenticated"


class Loaded(NamedTuple):
    """A project (a `project_reads` row) and the caller's access, or why it is refused (then `row`
    is None unless the project is readable)."""

    row: Any
    access: policy.Access
    refusal: LoadRefused | None = None


class LoadedGroup(NamedTuple):
    """A group (the group entity's columns and `member_level`) and the caller's abilities there, or
    why it is refused."""

    row: Any
    abilities: frozenset[str]
    refusal: LoadRefused | None = None


AccessOf = Callable[[Any, Any], policy.Access]  # (caller, row) -> access


def path_ident(namespace: str, path: str) -> str | None:
    """The ident `namespace/path` of a project named by two path segments, or None when either
    holds a `/` (a percent-encoded one): such a path names no project."""
    if "/" in namespace or "/" in path:
        return None
    return f"{namespace}/{path}"


async def project(reader, ident: str | None, caller, needed: Iterable[str] = (), *, member: bool = True,
                  **how) -> Loaded:  # fmt: skip
    """The project IDENT (an id or `namespace/path`; None names nothing) as READER (`db/readers.py`)
    finds it with CALLER's memberships (none unless MEMBER: git's build tokens are members of
    nothing), judged for CALLER (`judge`)."""
    row = await project_reads.find(reader, ident, caller if member else None) if ident is not None else None
    return judge(caller, row, needed, **how)


def judge(caller, row, needed: Iterable[str] = (), access_of: AccessOf = project_reads.access, sign_in: bool = False) -> Loaded:
    """CALLER's standing on the project of ROW (None: no such project): refused NOT_FOUND unless
    they may read it, FORBIDDEN unless they have every ability in NEEDED; with SIGN_IN an anonymous
    caller's refusal is UNAUTHENTICATED. ACCESS_OF works the access out (`project_reads.access`;
    git's build tokens have their own)."""
    access = access_of(caller, row) if row is not None else policy.NO_ACCESS
    if not access.can(policy.READ_PROJECT):
        refusal, row = LoadRefused.NOT_FOUND, None
    elif not all(access.can(ability) for ability in needed):
        refusal = LoadRefused.FORBIDDEN
    else:
        return Loaded(row, access)
    if sign_in and caller is None:
        refusal = LoadRefused.UNAUTHENTICATED
    return Loaded(row, access, refusal)


async def group(db, ident: str, caller, needed: Iterable[str] = ()) -> LoadedGroup:
    """The group IDENT (an id or a path) for CALLER: NOT_FOUND unless they may read it, FORBIDDEN
    unless they have every ability in NEEDED."""
    row, found = await groups.read_guarded(db, ident, caller)
    if group_policy.READ_GROUP not in found:
        return LoadedGroup(None, found, LoadRefused.NOT_FOUND)
    if not all(ability in found for ability in needed):
        return LoadedGroup(row, found, LoadRefused.FORBIDDEN)
    return LoadedGroup(row, found)
