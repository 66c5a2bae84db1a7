"""Commits made through the API: create, update or delete one file on a branch.

Each is checked like a push of that commit (push rights, branch protection) and recorded through
the same post-push entry point as a `git push`, with a push journal (services/push_journal.py).
"""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session

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
from .repository import path_of, reading

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
    refusal = branch_policy.refusal(
        access, HEADS + branch, "", "", protections(session, project).get(branch), forced=False
    )
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
