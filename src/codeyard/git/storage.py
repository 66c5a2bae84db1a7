"""Where repositories live and their lifecycle: create, copy (forks), remove.

A project's repository is `<repositories dir>/<project id>.git`. Keying by id rather than by
`namespace/path` makes renames and transfers a database update only: nothing on disk moves, so a
rename can neither half-fail nor race a push (see docs/DECISIONS.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pygit2

from .refs import HEADS


def repository_path(repositories_dir: Path, project_id: int) -> Path:
    return repositories_dir / f"{project_id}.git"


def create(path: Path, head_branch: str) -> None:
    """A new empty bare repository whose HEAD names HEAD_BRANCH."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    pygit2.init_repository(str(path), bare=True, initial_head=HEADS + head_branch)
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


# git's defaults of gc.auto and gc.autoPackLimit; codeyard sets neither.
GC_AUTO, GC_AUTO_PACK_LIMIT = 6700, 50
LOOSE_NAME = re.compile(r"[0-9a-f]{38}")


def may_need_gc(path: Path) -> bool:
    """Whether `git gc --auto` could find work in the repository at PATH, by git's own estimate
    (`need_to_gc` in builtin/gc.c, with the default limits): more than gc.auto/256 loose objects in
    `objects/17`, or gc.autoPackLimit packs without a `.keep`. Asking here first spares starting git
    after every push (a process, and more CPU than these two directory reads) when it would do
    nothing. An installation that lowers those limits in its git configuration gets its
    collections only at the default thresholds."""
    loose = 0
    with contextlib.suppress(FileNotFoundError), os.scandir(path / "objects" / "17") as entries:
        for entry in entries:
            if LOOSE_NAME.fullmatch(entry.name):
                loose += 1
                if loose > -(-GC_AUTO // 256):
                    return True
    try:
        names = set(os.listdir(path / "objects" / "pack"))
    except FileNotFoundError:
        return False
    packs = [name for name in names if name.endswith(".pack") and name[: -len(".pack")] + ".keep" not in names]
    return len(packs) >= GC_AUTO_PACK_LIMIT
