"""Commit and branch shapes: RepoCommit, RepoCommitDetail (reference 4.6) and Branch (DECISIONS row 10)."""

from __future__ import annotations

from .common import iso


def title(message: str) -> str:
    """The first line; over 100 characters it is cut to 80 and an ellipsis."""
    first = message.strip().split("\n", 1)[0] if message.strip() else ""
    if not first:
        return "--no commit message"
    return first[:80] + "…" if len(first) > 100 else first


def repo_commit(info) -> dict:
    return {
        "id": info.id,
        "short_id": info.id[:8],
        "title": title(info.message),
        "author_name": info.author.name,
        "author_email": info.author.email,
        "created_at": iso(info.committer.when),
        "message": info.message,
    }


def repo_commit_detail(info) -> dict:
    return {
        **repo_commit(info),
        "parent_ids": info.parent_ids,
        "committed_date": iso(info.committer.when),
        "authored_date": iso(info.author.when),
        "status": None,
    }


def branch_commit(info) -> dict:
    return {
        "id": info.id,
        "parents": [{"id": parent} for parent in info.parent_ids],
        "tree": info.tree_id,
        "message": info.message,
        "author": {"name": info.author.name, "email": info.author.email},
        "committer": {"name": info.committer.name, "email": info.committer.email},
        "authored_date": iso(info.author.when),
        "committed_date": iso(info.committer.when),
    }


def branch(found) -> dict:
    """FOUND is services.branches.Branch."""
    return {
        "name": found.name,
        "commit": branch_commit(found.commit),
        "protected": found.protection is not None,
        "developers_can_push": bool(found.protection and found.protection.developers_can_push),
    }
