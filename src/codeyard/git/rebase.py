"""A branch rebased onto another commit in a bare repository: each of its commits that the other
does not reach, oldest first, replayed by a three-way merge of trees in memory (as `git rebase`
without `--rebase-merges`: merge commits are dropped, commits whose change is already there too),
then the branch moved by compare-and-swap."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from .merge_refs import MergeConflict, RefMoved
from .refs import HEADS, is_branch_name
from .repo import open_repository

ONTO_REF = "refs/codeyard/rebase-onto/{iid}"


def fetch_onto(path: Path, other: Path, branch: str, iid: int) -> str | None:
    """The tip of OTHER's BRANCH, fetched into PATH under a ref of request IID's (a fork's rebase
    onto its upstream); None when there is no such branch."""
    if not is_branch_name(branch):
        return None
    ref = ONTO_REF.format(iid=iid)
    command = ["git", "--git-dir", str(path), "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
               str(other), f"+{HEADS}{branch}:{ref}"]  # fmt: skip
    if subprocess.run(command, capture_output=True, timeout=600).returncode != 0:
        return None
    found = open_repository(path).references.get(ref)
    return str(found.peel(pygit2.Commit).id) if found is not None else None


def drop_onto(path: Path, iid: int) -> None:
    repository = open_repository(path)
    if repository.references.get(ONTO_REF.format(iid=iid)) is not None:
        repository.references.delete(ONTO_REF.format(iid=iid))


def rebase(path: Path, branch: str, onto: str, name: str, email: str) -> tuple[str, str]:
    """BRANCH of the repository at PATH replayed onto the commit ONTO, NAME <EMAIL> the committer of
    each new commit (the authors kept); (old SHA, new SHA), the same when there was nothing to do.
    MergeConflict when a commit does not apply (nothing is moved), RefMoved when the branch moved
    meanwhile."""
    repository = open_repository(path)
    ref = repository.references.get(HEADS + branch) if is_branch_name(branch) else None
    if ref is None:
        raise MergeConflict(branch)
    head = ref.peel(pygit2.Commit)
    try:
        base = repository[pygit2.Oid(hex=onto)].peel(pygit2.Commit)
    except (KeyError, ValueError) as error:
        raise MergeConflict(onto) from error
    if repository.merge_base(head.id, base.id) == base.id:
        return str(head.id), str(head.id)  # already on top of it
    walker = repository.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    walker.hide(base.id)
    committer, current = pygit2.Signature(name, email), base
    for each in walker:
        if len(each.parents) != 1:
            continue
        index = repository.merge_trees(each.parents[0].tree, current.tree, each.tree)
        if index.conflicts is not None:
            raise MergeConflict(str(each.id))
        tree = index.write_tree(repository)
        if tree == current.tree_id:
            continue  # its change is there already
        current = repository[repository.create_commit(None, each.author, committer, each.message, tree, [current.id])]
    old, new = str(head.id), str(current.id)
    moved = subprocess.run(["git", "--git-dir", str(path), "update-ref", "--stdin", "-z"],
                           input=f"update {HEADS + branch}\0{new}\0{old}\0".encode(), capture_output=True)  # fmt: skip
    if moved.returncode != 0:
        raise RefMoved(branch)
    return old, new
