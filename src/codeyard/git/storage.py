"""Where repositories live and their lifecycle: create, copy (forks), remove.

A project's repository is `<repositories dir>/<project id>.git`. Keying by id rather than by
`namespace/path` makes renames and transfers a database update only: nothing on disk moves, so a
rename can neither half-fail nor race a push (see docs/DECISIONS.md).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pygit2

from .refs import HEADS, INITIAL_BRANCH

DEFAULT_HEAD = HEADS + INITIAL_BRANCH


def repository_path(repositories_dir: Path, project_id: int) -> Path:
    return repositories_dir / f"{project_id}.git"


def create(path: Path) -> None:
    """A new empty bare repository whose HEAD names master."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    pygit2.init_repository(str(path), bare=True, initial_head=DEFAULT_HEAD)
    _configure(path)


def copy(source: Path, target: Path) -> None:
    """A fork: an independent copy of SOURCE's branches and tags. Object files are hard-linked where
    the file system allows; git never changes an object file in place, so later pushes to either
    repository never show in the other."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "--bare", "--quiet", str(source), str(target)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(target), "remote", "remove", "origin"], check=True, capture_output=True)
    head = pygit2.Repository(str(source)).references.get("HEAD")
    if head is not None and head.type == pygit2.enums.ReferenceType.SYMBOLIC:
        pygit2.Repository(str(target)).set_head(head.target)
    _configure(target)


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _configure(path: Path) -> None:
    config = pygit2.Repository(str(path)).config
    # Check every object a push brings; keep reflogs so an overwritten branch can be recovered.
    config["receive.fsckObjects"] = True
    config["core.logAllRefUpdates"] = True
