"""Commit and branch shapes: RepoCommit, RepoCommitDetail (reference 4.6) and Branch (DECISIONS row 10)."""

from __future__ import annotations

from typing import TypedDict

from .common import iso


class RepoCommit(TypedDict):
    id: str
    short_id: str
    title: str
    author_name: str
    author_email: str
    created_at: str | None
    message: str


class RepoCommitDetail(RepoCommit):
    parent_ids: list[str]
    committed_date: str | None
    authored_date: str | None
    status: str | None  # the CI status of the commit (its newest pipeline's), null without one


class RepoDiff(TypedDict):
    old_path: str
    new_path: str
    a_mode: str
    b_mode: str
    diff: str
    new_file: bool
    renamed_file: bool
    deleted_file: bool
    too_large: bool  # GitLab 8's diff limits: no diff for this file / past the response's budget
    collapsed: bool


class Compare(TypedDict):
    commit: RepoCommit | None
    commits: list[RepoCommit]
    diffs: list[RepoDiff]
    compare_timeout: bool
    compare_same_ref: bool


class TreeEntry(TypedDict):
    id: str
    name: str
    type: str
    mode: str
    path: str


class RepoFile(TypedDict):
    file_name: str
    file_path: str
    size: int
    encoding: str
    content: str
    ref: str
    blob_id: str
    commit_id: str
    last_commit_id: str | None


class FileChange(TypedDict):
    file_path: str
    branch_name: str


class DeletedBranch(TypedDict):
    branch_name: str


class CommitId(TypedDict):
    id: str


class Contributor(TypedDict):
    name: str
    email: str
    commits: int
    additions: int
    deletions: int


class Person(TypedDict):
    name: str
    email: str


class BranchCommit(TypedDict):
    """The spec's shape (reference DECISIONS row 10) plus the flat fields GitLab 8.6 sent (reference 4.5),
    so clients written against either find what they read."""

    id: str
    parents: list[CommitId]
    tree: str
    message: str
    author: Person
    committer: Person
    authored_date: str | None
    committed_date: str | None
    parent_ids: list[str]
    author_name: str
    author_email: str
    committer_name: str
    committer_email: str


class Branch(TypedDict):
    name: str
    commit: BranchCommit
    protected: bool
    developers_can_push: bool


def title(message: str) -> str:
    """The first line; over 100 characters it is cut to 80 and an ellipsis."""
    first = message.strip().split("\n", 1)[0] if message.strip() else ""
    if not first:
        return "--no commit message"
    return first[:80] + "…" if len(first) > 100 else first


def repo_commit(info) -> RepoCommit:
    return {
        "id": info.id,
        "short_id": info.id[:8],
        "title": title(info.message),
        "author_name": info.author.name,
        "author_email": info.author.email,
        "created_at": iso(info.committer.when),
        "message": info.message,
    }


def repo_commit_detail(info, status: str | None = None) -> RepoCommitDetail:
    return {
        **repo_commit(info),
        "parent_ids": info.parent_ids,
        "committed_date": iso(info.committer.when),
        "authored_date": iso(info.author.when),
        "status": status,
    }


def repo_diff(found) -> RepoDiff:
    """RepoDiff (reference 10) with GitLab 8's `too_large` and `collapsed`: FOUND is git.diffs.FileDiff."""
    return {
        "old_path": found.old_path,
        "new_path": found.new_path,
        "a_mode": found.a_mode,
        "b_mode": found.b_mode,
        "diff": found.diff,
        "new_file": found.new_file,
        "renamed_file": found.renamed_file,
        "deleted_file": found.deleted_file,
        "too_large": found.too_large,
        "collapsed": found.collapsed,
    }


def comparison(found, same_ref: bool) -> Compare:
    """GitLab's Compare entity: FOUND is git.diffs.Comparison."""
    return {
        "commit": repo_commit(found.head) if found.commits else None,
        "commits": [repo_commit(info) for info in found.commits],
        "diffs": [repo_diff(diff) for diff in found.diffs],
        "compare_timeout": found.timed_out,
        "compare_same_ref": same_ref,
    }


def contributor(found) -> Contributor:
    """FOUND is git.repo.Contributor."""
    return {"name": found.name, "email": found.email, "commits": found.commits, "additions": found.additions,
            "deletions": found.deletions}  # fmt: skip


def tree_entry(entry) -> TreeEntry:
    """ENTRY is git.repo.TreeEntry."""
    return {"id": entry.id, "name": entry.name, "type": entry.type, "mode": entry.mode, "path": entry.path}


def branch_commit(info) -> BranchCommit:
    return {
        "id": info.id,
        "parents": [{"id": parent} for parent in info.parent_ids],
        "tree": info.tree_id,
        "message": info.message,
        "author": {"name": info.author.name, "email": info.author.email},
        "committer": {"name": info.committer.name, "email": info.committer.email},
        "authored_date": iso(info.author.when),
        "committed_date": iso(info.committer.when),
        "parent_ids": list(info.parent_ids),
        "author_name": info.author.name,
        "author_email": info.author.email,
        "committer_name": info.committer.name,
        "committer_email": info.committer.email,
    }


def branch(found) -> Branch:
    """FOUND is services.branches.Branch."""
    return {
        "name": found.name,
        "commit": branch_commit(found.commit),
        "protected": found.protection is not None,
        "developers_can_push": bool(found.protection and found.protection.developers_can_push),
    }
