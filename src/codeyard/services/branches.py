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
from ..errors import BadRequest, CodeyardError, Forbidden, NotFound
from ..git import branches as git_branches
from ..git import repo
from ..git.refs import HEADS, ZERO_SHA, is_branch_name
from ..policies import branches as policy
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


def create(session: Session, rt, project: Project, user, name: str, ref: str, access=None) -> Branch:
    """Branch NAME at REF, recorded as its push. With the caller's ACCESS, refused (403) like a push
    of it would be: a protection may name a branch that does not exist yet."""
    path = path_of(rt, project)
    checked_name(name)
    if access is not None:
        protection = protections(session, project).get(name)
        if reason := policy.refusal(access, HEADS + name, ZERO_SHA, "", protection, False, bool(user.is_admin)):
            raise Forbidden(reason)
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
    """API v3's delete: GitLab 8.6 refused the default branch and protected ones with 405."""
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
    _deleted(session, rt, project, user, name)


def remove(session: Session, rt, project: Project, user, access, name: str) -> None:
    """API v4's delete (GitLab's Branches::DeleteService): 404 without the branch, 400 for the
    default branch, 403 for a protected one unless the caller administers the project."""
    path = path_of(rt, project)
    if not is_branch_name(name):
        raise NotFound("Branch")
    tip(rt, project, name)
    if name == (project.default_branch or repo.head_branch(path)):
        raise BadRequest("The default branch of a project cannot be deleted.")
    if not policy.may_delete(access, protections(session, project).get(name)):
        raise Forbidden(policy.NO_PROTECTED_DELETE)
    _deleted(session, rt, project, user, name)


def _deleted(session: Session, rt, project: Project, user, name: str) -> None:
    deleted_as_push(session, rt, project, user, HEADS + name, lambda: repo.delete_branch(path_of(rt, project), name), "Branch")


def deleted_as_push(session: Session, rt, project: Project, user, ref: str, delete, missing: str) -> None:
    """Delete REF by DELETE() (the id it was at; KeyError when it is gone: 404 `<MISSING> Not
    Found`), recorded as a push of its deletion, with a journal opened first."""
    journal = push_journal.for_ref_moves(session, rt, project.id, user.id)
    try:
        sha = delete()
    except KeyError:  # deleted meanwhile
        raise NotFound(missing) from None
    push_journal.record_moved(session, rt, journal, [RefUpdate(ref, sha, ZERO_SHA)])


# --- API v4: a page of branches with what the caller may do, and the merged ones removed ---------


@dataclass(frozen=True)
class Listed:
    """A branch as v4 shows it: its tip and protection, whether the default branch contains it,
    and whether the caller may push to it."""

    name: str
    commit: repo.CommitInfo
    protection: Row | None
    merged: bool
    default: bool
    can_push: bool


def listed(rt, project: ProjectRef, found: list[tuple[str, repo.CommitInfo]], protected: dict[str, Row], access,
           admin: bool) -> list[Listed]:  # fmt: skip
    """FOUND (name, tip) as `Listed`, with PROTECTED (`protections`) and the caller's ACCESS. Git
    work: run it off the loop."""
    default = project.head_branch
    with reading(project.id, "Repository"):
        merged = git_branches.merged(path_of(rt, project), {name: info.id for name, info in found}, default)
    return [Listed(name, info, protected.get(name), name in merged and name != default, name == default,
                   policy.may_push_to(access, protected.get(name), admin)) for name, info in found]  # fmt: skip


def page(rt, project: ProjectRef, search: str | None, offset: int, limit: int) -> tuple[int, list[tuple[str, repo.CommitInfo]]]:
    """(how many branches match SEARCH, one window of them by name); an empty repository has none."""
    path = path_of(rt, project)
    if not repo.branch_names(path):
        with reading(project.id, "Repository"):
            repo.open_repository(path)
        return 0, []
    with reading(project.id, "Repository"):
        return git_branches.window(path, search, offset, limit)


MERGED_BOUND = 1000  # branches removed by one request: the rest wait for the next


def merged_to_remove(rt, project: ProjectRef) -> dict[str, str]:
    """Name -> tip of the branches the default branch contains (at most MERGED_BOUND). Git work:
    run it off the loop, with no transaction open."""
    path = path_of(rt, project)
    if not repo.branch_names(path):
        return {}
    with reading(project.id, "Repository"):
        return git_branches.merged_into(path, project.head_branch, MERGED_BOUND)


def remove_merged(session: Session, rt, project: Project, user, candidates: dict[str, str]) -> int:
    """Delete CANDIDATES (`merged_to_remove`) but the protected ones and the default branch, all at
    once by compare-and-swap, recorded as one push; how many (none when one moved meanwhile)."""
    protected = protections(session, project)
    chosen = {name: sha for name, sha in candidates.items()
              if name not in protected and name != project.default_branch}  # fmt: skip
    if not chosen:
        return 0
    journal = push_journal.for_ref_moves(session, rt, project.id, user.id)
    if not git_branches.delete_all(path_of(rt, project), chosen):
        return 0
    push_journal.record_moved(session, rt, journal, [RefUpdate(HEADS + name, sha, ZERO_SHA) for name, sha in chosen.items()])
    return len(chosen)
