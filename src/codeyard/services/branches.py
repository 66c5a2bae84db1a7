"""Branches: list, protect, create and delete (reference section 8's messages and statuses).

Creating or deleting a branch is a push: it goes through `pushes.post_push` like a git push, with a
push journal (services/push_journal.py), so that a ref moved by a request that dies or fails before
its commit is still recorded.
A name that is not a canonical branch name (`refs.is_branch_name`) is refused before any lookup:
400 for changes, not found for reads. So the protected and default branch checks, which compare
names, see the name git will use.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Row
from sqlalchemy.orm import Session

from ..db.models import Project
from ..errors import BadRequest, CodeyardError, NotFound
from ..git import repo
from ..git.refs import HEADS, ZERO_SHA, is_branch_name
from . import protected_branches, push_journal
from .protected_branches import protections
from .ref_updates import RefUpdate
from .repository import ProjectRef, path_of, reading


@dataclass(frozen=True)
class Branch:
    name: str
    commit: repo.CommitInfo
    protection: Row | None  # a row of `protected_branches`' read: name, developers_can_push


class BranchError(CodeyardError):
    """GitLab's branch errors: a status and a plain message (`{"message": "No such branch"}`)."""

    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


def checked_name(name: str) -> str:
    """NAME if it is a canonical branch name; 400 `Branch name is invalid` otherwise."""
    if not is_branch_name(name):
        raise BadRequest("Branch name is invalid")
    return name


def tip(rt, project: ProjectRef, name: str, missing: str = "Branch") -> repo.CommitInfo:
    """The commit at the tip of branch NAME; 404 `404 <MISSING> Not Found` without one."""
    with reading(project.id, missing):
        info = repo.branch(path_of(rt, project), name)
    if info is None:
        raise NotFound(missing)
    return info


def get(session: Session, rt, project: Project, name: str, missing: str = "Branch") -> Branch:
    return Branch(name, tip(rt, project, name, missing), protections(session, project).get(name))


def protect(session: Session, rt, project: Project, name: str, developers_can_push: bool | None = None) -> Branch:
    commit = tip(rt, project, checked_name(name))
    protected_branches.protect(session, project, name, developers_can_push)
    return Branch(name, commit, protections(session, project).get(name))


def unprotect(session: Session, rt, project: Project, name: str) -> Branch:
    commit = tip(rt, project, checked_name(name), missing="Branch does not exist")
    protected_branches.unprotect(session, project, name)
    return Branch(name, commit, None)


def create(session: Session, rt, project: Project, user, name: str, ref: str) -> Branch:
    path = path_of(rt, project)
    checked_name(name)
    with reading(project.id, "Repository"):
        exists = repo.branch(path, name) is not None
    if exists:
        raise BadRequest("Branch already exists")
    journal = push_journal.for_ref_moves(session, rt, project.id, user.id)
    try:
        with reading(project.id, "Repository"):
            info = repo.create_branch(path, name, ref)
    except NotFound:
        raise BadRequest("Invalid reference name") from None
    except FileExistsError:
        raise BadRequest("Branch already exists") from None
    push_journal.record_moved(session, rt, journal, [RefUpdate(HEADS + name, ZERO_SHA, info.id)])
    return Branch(name, info, protections(session, project).get(name))


def delete(session: Session, rt, project: Project, user, name: str) -> None:
    path = path_of(rt, project)
    checked_name(name)
    with reading(project.id, "Repository"):
        exists = repo.branch(path, name) is not None
    if not exists:
        raise BranchError(404, "No such branch")
    if name == (project.default_branch or repo.head_branch(path)):
        raise BranchError(405, "Cannot remove HEAD branch")
    if name in protections(session, project):
        raise BranchError(405, "Protected branch cant be removed")
    journal = push_journal.for_ref_moves(session, rt, project.id, user.id)
    sha = repo.delete_branch(path, name)
    push_journal.record_moved(session, rt, journal, [RefUpdate(HEADS + name, sha, ZERO_SHA)])
