"""`refs/merge-requests/<iid>/head`: a merge request's source head kept in the target repository
(as GitLab does), so the target alone can diff, trial-merge and merge it, and clients can fetch it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2

from . import diffs
from .refs import HEADS, is_branch_name
from .repo import NotInRepository, branch_id, open_repository


def head_ref(iid: int) -> str:
    return f"refs/merge-requests/{iid}/head"


def head_sha(target: Path, iid: int) -> str | None:
    ref = open_repository(target).references.get(head_ref(iid))
    return str(ref.peel(pygit2.Commit).id) if ref is not None else None


def started_comparison(target: Path, iid: int, branch: str, kept: tuple[str, str] | None = None, *,
                       commits: bool, files: bool, shape: diffs.Shape = None) -> Callable[[], diffs.Comparison]:  # fmt: skip
    """`diffs.started_compare` of request IID: from its target BRANCH to its head ref, or from the
    (base, head) it KEPT when it stopped being open (`kept`); an empty comparison when a side is
    missing (TARGET is opened once per thread: `open_repository` keeps it)."""
    base, head = kept or (branch_id(target, branch), head_sha(target, iid))
    try:
        if base is not None and head is not None:
            return diffs.started_compare(target, base, head, commits=commits, files=files, shape=shape)
    except NotInRepository:  # a kept commit this repository lost (a request older than its head ref)
        pass
    return lambda: diffs.Comparison(None, [], [])


def kept(target: Path, start: str | None, head: str | None) -> tuple[str, str] | None:
    """What a request that stops being open keeps of its comparison from START (its target's tip)
    to HEAD: (their merge base, HEAD), which its head ref keeps reachable (the base is an ancestor
    of the head) whatever becomes of both branches; None without both or without a merge base."""
    if start is None or head is None:
        return None
    try:
        base = open_repository(target).merge_base(start, head)
    except (KeyError, ValueError, pygit2.GitError):  # a side is not in the repository
        return None
    return (str(base), head) if base is not None else None


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


class MergeConflict(Exception):
    """The source does not merge cleanly into the target (or a branch is missing)."""


class RefMoved(Exception):
    """The target branch moved while the merge commit was written."""


def _sides(path: Path, target_branch: str, head: str) -> tuple[pygit2.Repository, pygit2.Commit, pygit2.Commit]:
    repository = open_repository(path)
    ref = repository.references.get(HEADS + target_branch) if is_branch_name(target_branch) else None
    if ref is None:
        raise MergeConflict(target_branch)
    try:
        source = repository[pygit2.Oid(hex=head)].peel(pygit2.Commit)
    except (KeyError, ValueError) as error:
        raise MergeConflict(head) from error
    return repository, ref.peel(pygit2.Commit), source


def can_merge(path: Path, target_branch: str, head: str | None) -> bool:
    """Does HEAD merge into TARGET_BRANCH without conflicts? A trial merge in memory; nothing is written."""
    if head is None:
        return False
    try:
        repository, target, source = _sides(path, target_branch, head)
    except MergeConflict:
        return False
    return repository.merge_commits(target, source).conflicts is None


def merge(path: Path, target_branch: str, head: str, message: str, name: str, email: str) -> tuple[str, str]:
    """Write the merge commit of HEAD into TARGET_BRANCH (two parents, NAME <EMAIL> its author and
    committer) and move the branch to it by compare-and-swap; (old SHA, new SHA)."""
    repository, target, source = _sides(path, target_branch, head)
    index = repository.merge_commits(target, source)
    if index.conflicts is not None:
        raise MergeConflict(target_branch)
    signature = pygit2.Signature(name, email)
    tree = index.write_tree(repository)
    new = str(repository.create_commit(None, signature, signature, message, tree, [target.id, source.id]))
    old = str(target.id)
    moved = subprocess.run(["git", "--git-dir", str(path), "update-ref", "--stdin", "-z"],
                           input=f"update {HEADS + target_branch}\0{new}\0{old}\0".encode(), capture_output=True)  # fmt: skip
    if moved.returncode != 0:
        raise RefMoved(target_branch)
    return old, new


def merged_by(path: Path, target_branch: str, head: str, depth: int = 1000) -> tuple[str | None, str | None] | None:
    """When TARGET_BRANCH contains HEAD: (the target before, the merge commit) of the newest commit
    among its last DEPTH first parents whose second parent is HEAD (or (HEAD's parent, HEAD) when the
    branch reached HEAD itself), (None, None) when no such commit is that near; None when it does
    not contain HEAD."""
    repository = open_repository(path)
    ref = repository.references.get(HEADS + target_branch) if is_branch_name(target_branch) else None
    if ref is None:
        return None
    tip, wanted = ref.peel(pygit2.Commit), pygit2.Oid(hex=head)
    if tip.id != wanted and not repository.descendant_of(tip.id, wanted):
        return None
    commit = tip
    for _ in range(depth):
        parents = commit.parent_ids
        if commit.id == wanted:
            return (str(parents[0]) if parents else "0" * 40), str(commit.id)
        if len(parents) > 1 and parents[1] == wanted:
            return str(parents[0]), str(commit.id)
        if not parents:
            break
        commit = repository[parents[0]]
    return None, None
