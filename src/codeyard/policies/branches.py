"""Who may change which ref: the rules the git transport enforces on push and the branches API
applies to branch creation and deletion (GitLab 8.6's Gitlab::GitAccess).

- A protected branch takes pushes only from masters (and from developers when it allows them);
  nobody force-pushes to it or deletes it.
- Any other branch takes pushes, force pushes and deletions from developers.
- Creating a tag needs push rights; moving or deleting an existing tag needs admin_project (master).
"""

from __future__ import annotations

from ..git.refs import TAGS, ZERO_SHA
from .projects import ADMIN_PROJECT, PUSH_CODE, PUSH_PROTECTED, Access

NO_PUSH = "You are not allowed to push code to this project."
NO_PROTECTED_PUSH = "You are not allowed to push code to protected branches on this project."
NO_FORCE_PUSH = "You are not allowed to force push code to a protected branch on this project."
NO_PROTECTED_DELETE = "You are not allowed to delete protected branches from this project."
NO_TAG_CHANGE = "You are not allowed to change existing tags on this project."


def may_push_to(access: Access, protection) -> bool:
    """May the caller add commits to a branch with PROTECTION (a ProtectedBranch row or None)?"""
    if not access.can(PUSH_CODE):
        return False
    if protection is None:
        return True
    return access.can(PUSH_PROTECTED) or bool(protection.developers_can_push)


def refusal(access: Access, ref: str, old: str, new: str, protection, forced: bool) -> str | None:
    """Why the update of REF from OLD to NEW is refused, or None when it is allowed.

    PROTECTION is the branch's ProtectedBranch row (None when unprotected); FORCED is true when NEW
    does not descend from OLD (the caller asks git)."""
    if not access.can(PUSH_CODE):
        return NO_PUSH
    if ref.startswith(TAGS):
        if old != ZERO_SHA and not access.can(ADMIN_PROJECT):
            return NO_TAG_CHANGE
        return None
    if protection is None:
        return None
    if new == ZERO_SHA:
        return NO_PROTECTED_DELETE
    if forced and old != ZERO_SHA:
        return NO_FORCE_PUSH
    if not may_push_to(access, protection):
        return NO_PROTECTED_PUSH
    return None
