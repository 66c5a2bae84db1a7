"""Commits made through the API: create, update or delete one file on a branch (v3), commits of
several changes, cherry-picks and reverts (v4).

Each is checked like a push of that commit (push rights, branch protection) and recorded through
the same post-push entry point as a `git push`, with a push journal (services/push_journal.py).
v4's run their git work in a worker thread with no transaction open (`commit_changes`, `pick`:
the journal is opened and the branch moved there), then are recorded in the request's
transaction (`record`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from ..db.hooks import on_commit, on_rollback
from ..db.models import Project
from ..errors import BadRequest, Forbidden
from ..git import file_commits
from ..git.refs import HEADS
from ..policies import branches as branch_policy
from ..policies.projects import Access
from . import push_journal
from .branches import checked_name
from .protected_branches import protections
from .ref_updates import RefUpdate
from .repository import ProjectRef, path_by_id, path_of, reading

log = logging.getLogger("codeyard.files")
CREATE, UPDATE, DELETE = "create", "update", "delete"
NOT_COMMITTED = "Your changes could not be committed, because "
CONFLICTS = {
    CREATE: f"{NOT_COMMITTED}a file with the same name already exists",
    UPDATE: "You can only edit a file that exists",
    DELETE: "You can only delete a file that exists",
}


def change(session: Session, rt, project: Project, user, access: Access, action: str, branch: str, file_path: str,
           content: bytes | None, message: str) -> None:  # fmt: skip
    """Commit ACTION of FILE_PATH on BRANCH as USER; 403 where a push of it would be refused."""
    checked_name(branch)
    # A fast-forward update of an existing or new branch: the old and new SHAs do not decide it.
    protection = protections(session, project).get(branch)
    refusal = branch_policy.refusal(access, HEADS + branch, "", "", protection, forced=False, admin=bool(user.is_admin))
    if refusal is not None:
        raise Forbidden(refusal)
    journal = push_journal.for_ref_moves(session, rt, project.id, user.id)
    try:
        with reading(project.id, "Branch"):
            old, new = file_commits.commit_file(
                path_of(rt, project), branch, file_path, None if action == DELETE else content,
                must_exist=action != CREATE, message=message, **_identity(user),
            )  # fmt: skip
    except file_commits.FileConflict:
        raise BadRequest(CONFLICTS[action]) from None
    except file_commits.NotADirectory as conflict:
        raise BadRequest(f"{NOT_COMMITTED}{conflict.args[0]} is a file, not a directory") from None
    except file_commits.NotAFile as conflict:
        raise BadRequest(f"{NOT_COMMITTED}{conflict.args[0]} is a directory, not a file") from None
    except file_commits.ObjectRefused as refused:
        log.error("a commit to project %s failed git's object checks: %s", project.id, refused.args[0])
        raise BadRequest("Your changes could not be committed, because they failed git's object checks") from None
    except file_commits.RefMoved:
        raise BadRequest(f"The branch {branch} changed while the commit was written; try again") from None
    push_journal.record_moved(session, rt, journal, [RefUpdate(HEADS + branch, old, new)])


def _identity(user) -> dict[str, str]:
    """The commit's author: the user's name and email as git would clean them, the username (or a
    local address) where nothing is left."""
    name = file_commits.clean_identity(user.name) or user.username
    email = file_commits.clean_identity(user.email) or f"{user.username}@localhost"
    return {"author_name": name, "author_email": email}


# --- v4: several changes in one commit, cherry-picks and reverts -----------------------------------

NOT_ON_A_BRANCH = "You can only create or edit files when you are on a branch"


def check_push(access: Access, branch: str, protection, admin: bool) -> None:
    """400 for a bad branch name, 403 where a push to BRANCH (PROTECTION its protected branch row,
    or None) by the caller (ADMIN: an instance admin) would be refused."""
    checked_name(branch)
    refusal = branch_policy.refusal(access, HEADS + branch, "", "", protection, forced=False, admin=admin)
    if refusal is not None:
        raise Forbidden(refusal)


@dataclass(frozen=True)
class Moved:
    """A branch moved by a commit made here, journaled, not yet recorded (`record`)."""

    journal: push_journal.Journal
    update: RefUpdate


def identity(user) -> tuple[str, str]:
    found = _identity(user)
    return found["author_name"], found["author_email"]


def commit_changes(rt, project: ProjectRef, user, branch: str, changes: list[file_commits.Change], *,
                   start: str | None, message: str, author: tuple[str, str] | None) -> Moved:  # fmt: skip
    """Commit CHANGES on BRANCH as USER (the author AUTHOR when given), all or none. For a worker
    thread: git only, no database."""
    me = identity(user)
    if author is not None:
        author = (file_commits.clean_identity(author[0]) or me[0], file_commits.clean_identity(author[1]) or me[1])
    return _moved(rt, project.id, user, branch, lambda path: file_commits.commit_changes(
        path, branch, changes, start=start, message=message, author=author or me, committer=me))  # fmt: skip


def pick(rt, project: ProjectRef, user, sha: str, branch: str, revert: bool) -> Moved:
    """Cherry-pick (or revert) commit SHA onto BRANCH as USER. For a worker thread."""
    return _moved(rt, project.id, user, branch,
                  lambda path: file_commits.pick(path, sha, branch, revert=revert, committer=identity(user)))  # fmt: skip


def try_pick(rt, project: ProjectRef, user, sha: str, branch: str, revert: bool) -> None:
    """Would `pick` succeed? Its refusal if not; nothing is written. For a worker thread."""
    try:
        with reading(project.id, "Branch"):
            file_commits.pick(path_by_id(rt, project.id), sha, branch, revert=revert, committer=identity(user), dry_run=True)
    except _REFUSED as error:
        raise _refused(project.id, branch, error) from None


def _moved(rt, project_id: int, user, branch: str, work: Callable) -> Moved:
    journal = push_journal.Journal.create(rt.config, project_id, user.id)
    try:
        with reading(project_id, "Branch"):
            old, new = work(path_by_id(rt, project_id))
    except _REFUSED as error:
        journal.finish()  # nothing moved
        raise _refused(project_id, branch, error) from None
    except BaseException:
        journal.finish()
        raise
    update = RefUpdate(HEADS + branch, old, new)
    journal.append([update])
    return Moved(journal, update)


_REFUSED = (file_commits.ChangeRefused, file_commits.NoBranch, file_commits.ObjectRefused, file_commits.RefMoved)


def _refused(project_id: int, branch: str, error: Exception) -> BadRequest:
    if isinstance(error, file_commits.ChangeRefused):
        return BadRequest(error.args[0])
    if isinstance(error, file_commits.NoBranch):
        return BadRequest(NOT_ON_A_BRANCH)
    if isinstance(error, file_commits.ObjectRefused):
        log.error("a commit to project %s failed git's object checks: %s", project_id, error.args[0])
        return BadRequest("Your changes could not be committed, because they failed git's object checks")
    return BadRequest(f"The branch {branch} changed while the commit was written; try again")


def record(session: Session, rt, moved: Moved) -> None:
    """Record a moved branch as a push in SESSION's transaction (events, hooks, pipelines); the
    journal goes when it commits and is left to recovery when it rolls back."""
    on_commit(session, moved.journal.finish)
    on_rollback(session, moved.journal.settle)
    push_journal.record(session, rt, moved.journal.header, [moved.update])
