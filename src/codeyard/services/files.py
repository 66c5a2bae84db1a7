"""Commits made through the API: create, update or delete one file on a branch.

Each is checked like a push of that commit (push rights, branch protection) and recorded through
the same post-push entry point as a `git push`.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from ..db.models import Project
from ..errors import BadRequest, Forbidden
from ..git import repo
from ..git.refs import HEADS
from ..policies import branches as branch_policy
from ..policies.projects import Access
from . import pushes
from .branches import protections
from .repository import path_of, reading

CREATE, UPDATE, DELETE = "create", "update", "delete"
CONFLICTS = {
    CREATE: "Your changes could not be committed, because a file with the same name already exists",
    UPDATE: "You can only edit a file that exists",
    DELETE: "You can only delete a file that exists",
}


def change(session: Session, rt, project: Project, user, access: Access, action: str, branch: str, file_path: str,
           content: bytes | None, message: str) -> None:  # fmt: skip
    """Commit ACTION of FILE_PATH on BRANCH as USER; 403 where a push of it would be refused."""
    # A fast-forward update of an existing or new branch: the old and new SHAs do not decide it.
    refusal = branch_policy.refusal(
        access, HEADS + branch, "", "", protections(session, project).get(branch), forced=False
    )
    if refusal is not None:
        raise Forbidden(refusal)
    try:
        with reading(project, "Branch"):
            old, new = repo.commit_file(
                path_of(rt, project), branch, file_path, None if action == DELETE else content,
                must_exist=action != CREATE, message=message, author_name=user.name, author_email=user.email,
            )  # fmt: skip
    except repo.FileConflict:
        raise BadRequest(CONFLICTS[action]) from None
    except repo.RefMoved:
        raise BadRequest(f"The branch {branch} changed while the commit was written; try again") from None
    pushes.post_push(session, rt, project, user, [pushes.RefUpdate(HEADS + branch, old, new)])
