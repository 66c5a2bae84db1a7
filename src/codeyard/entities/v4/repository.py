"""v4 repository shapes: blobs, files, blame, diffs and comparisons; the tree and contributors are v3's."""

from __future__ import annotations

from typing import TypedDict

from ..commits import Contributor, RepoDiff, TreeEntry, contributor, repo_diff, tree_entry
from ..common import iso
from .commits import Commit, commit

__all__ = ["Contributor", "TreeEntry", "contributor", "tree_entry"]


class Blob(TypedDict):
    size: int
    encoding: str
    content: str
    sha: str


class RepoFile(TypedDict):
    file_name: str
    file_path: str
    size: int
    encoding: str
    content_sha256: str
    ref: str
    blob_id: str
    commit_id: str
    last_commit_id: str | None
    execute_filemode: bool
    content: str


class FileChange(TypedDict):
    file_path: str
    branch: str


class Diff(RepoDiff):
    generated_file: bool


def diff(found) -> Diff:
    """FOUND is git.diffs.FileDiff."""
    return {**repo_diff(found), "generated_file": False}


class Compare(TypedDict):
    commit: Commit | None
    commits: list[Commit]
    diffs: list[Diff]
    compare_timeout: bool
    compare_same_ref: bool
    web_url: str


def comparison(found, same_ref: bool, project_web_url: str, base: str, head: str) -> Compare:
    """GitLab v4's Compare: FOUND is git.diffs.Comparison."""
    return {
        "commit": commit(found.head, project_web_url) if found.commits else None,
        "commits": [commit(info, project_web_url) for info in found.commits],
        "diffs": [diff(found_diff) for found_diff in found.diffs],
        "compare_timeout": found.timed_out,
        "compare_same_ref": same_ref,
        "web_url": f"{project_web_url}/compare/{base}...{head}",
    }


class BlameCommit(TypedDict):
    id: str
    parent_ids: list[str]
    message: str
    authored_date: str | None
    author_name: str
    author_email: str
    committed_date: str | None
    committer_name: str
    committer_email: str


class BlameRange(TypedDict):
    commit: BlameCommit
    lines: list[str]


def blame_range(found) -> BlameRange:
    """FOUND is git.history.BlameRange."""
    info = found.commit
    return {
        "commit": {
            "id": info.id,
            "parent_ids": list(info.parent_ids),
            "message": info.message,
            "authored_date": iso(info.author.when),
            "author_name": info.author.name,
            "author_email": info.author.email,
            "committed_date": iso(info.committer.when),
            "committer_name": info.committer.name,
            "committer_email": info.committer.email,
        },
        "lines": found.lines,
    }
