"""`refs/merge-requests/<iid>/head`: a merge request's source head kept in the target repository
(as GitLab does), so the target alone can diff, trial-merge and merge it, and clients can fetch it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from .refs import HEADS, is_branch_name
from .repo import open_repository


def head_ref(iid: int) -> str:
    return f"refs/merge-requests/{iid}/head"


def head_sha(target: Path, iid: int) -> str | None:
    ref = open_repository(target).references.get(head_ref(iid))
    return str(ref.peel(pygit2.Commit).id) if ref is not None else None


def keep_head(target: Path, source: Path, branch: str, iid: int) -> str | None:
    """Point TARGET's head ref of request IID at SOURCE's BRANCH (fetched from SOURCE when it is
    another repository); the SHA, or None when the branch does not exist."""
    if not is_branch_name(branch):
        return None
    ref = open_repository(source).references.get(HEADS + branch)
    if ref is None:
        return None
    sha = str(ref.peel(pygit2.Commit).id)
    if Path(source) != Path(target):
        command = ["git", "--git-dir", str(target), "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
                   str(source), f"+{HEADS}{branch}:{head_ref(iid)}"]  # fmt: skip
        subprocess.run(command, check=True, capture_output=True, timeout=600)
        return head_sha(target, iid)
    open_repository(target).references.create(head_ref(iid), pygit2.Oid(hex=sha), force=True)
    return sha
