"""Reading and adjusting refs of a bare repository with pygit2."""

from __future__ import annotations

from pathlib import Path

import pygit2

HEADS = "refs/heads/"


def open_repository(path: Path) -> pygit2.Repository:
    return pygit2.Repository(str(path))


def branch_names(path: Path) -> list[str]:
    """Names of the repository's branches, sorted; [] for an empty or missing repository."""
    try:
        repository = open_repository(path)
    except pygit2.GitError:
        return []
    return sorted(name[len(HEADS) :] for name in repository.references if name.startswith(HEADS))


def set_head_branch(path: Path, branch: str) -> None:
    open_repository(path).set_head(HEADS + branch)
