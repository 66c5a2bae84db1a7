"""Branches beyond their tips (git/repo.py): which are merged into another, a filtered window of
names, and the removal of many at once by compare-and-swap.

Takes a repository path and plain values; no app imports.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from .refs import HEADS, is_branch_name
from .repo import CommitInfo, commit_info, open_repository


def matches(name: str, search: str | None) -> bool:
    """GitLab's name search: a case-insensitive substring; `^x` at the start, `x$` at the end."""
    if not search:
        return True
    name, search = name.lower(), search.lower()
    if search.startswith("^") and search.endswith("$") and len(search) > 1:
        return name == search[1:-1]
    if search.startswith("^"):
        return name.startswith(search[1:])
    if search.endswith("$"):
        return name.endswith(search[:-1])
    return search in name


def window(path: Path, search: str | None, offset: int, limit: int) -> tuple[int, list[tuple[str, CommitInfo]]]:
    """(how many branches match SEARCH, (name, tip) of those in the window), sorted by name; only
    the window's commits are read."""
    repository = open_repository(path)
    names = sorted(ref[len(HEADS) :] for ref in repository.references if ref.startswith(HEADS))
    found = [name for name in names if matches(name, search)]
    tips = [(name, commit_info(repository.references[HEADS + name].peel(pygit2.Commit)))
            for name in found[offset : offset + limit]]  # fmt: skip
    return len(found), tips


def merged(path: Path, tips: dict[str, str], target: str | None) -> set[str]:
    """The names of TIPS (name -> commit id) whose commit the branch TARGET contains."""
    repository = open_repository(path)
    if target is None or not is_branch_name(target):
        return set()
    ref = repository.references.get(HEADS + target)
    if ref is None:
        return set()
    head = ref.peel(pygit2.Commit).id
    found = set()
    for name, sha in tips.items():
        oid = pygit2.Oid(hex=sha)
        if oid == head or repository.descendant_of(head, oid):
            found.add(name)
    return found


def merged_into(path: Path, target: str, bound: int) -> dict[str, str]:
    """Name -> tip of the branches (at most BOUND, by name) other than TARGET that TARGET contains."""
    repository = open_repository(path)
    tips = {}
    for ref in sorted(repository.references):
        if ref.startswith(HEADS) and ref != HEADS + target:
            tips[ref[len(HEADS) :]] = str(repository.references[ref].peel(pygit2.Commit).id)
    names = merged(path, tips, target)
    return {name: tips[name] for name in sorted(names)[:bound]}


def delete_all(path: Path, tips: dict[str, str]) -> bool:
    """Delete the branches of TIPS (name -> the commit each must still be at), all or none: False
    when one has moved or gone meanwhile. Names travel on stdin (`update-ref --stdin -z`)."""
    if not tips:
        return True
    lines = "".join(f"delete {HEADS + name}\0{sha}\0" for name, sha in tips.items() if is_branch_name(name))
    moved = subprocess.run(["git", "--git-dir", str(path), "update-ref", "--stdin", "-z"],
                           input=lines.encode(), capture_output=True)  # fmt: skip
    return moved.returncode == 0

