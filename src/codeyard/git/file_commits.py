"""Commits of one file change made through the API, written as carefully as a checked push.

- The change is only what it says: a file is not created under a file or over a directory (git
  would silently drop what was there), an update keeps the file's mode.
- The author is cleaned the way git cleans identities (no `<`, `>` or newline can reach the
  commit's author line; crud trimmed at both ends).
- The new objects are written into a staging object directory first (next to the repository's
  own, which it borrows from as an alternate), checked there with `git fsck --strict` — the checks
  receive.fsckObjects applies to pushed objects — and only then copied into the repository.
- The branch moves by compare-and-swap (`git update-ref --stdin -z` with the old value), so a
  concurrent push is never overwritten.

Takes a repository path and plain values; no app imports.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pygit2

from .refs import HEADS, ZERO_SHA, is_branch_name
from .repo import NotInRepository, open_repository


class FileConflict(Exception):
    """The file to create exists, or the file to change or delete does not."""


class NotADirectory(Exception):
    """A leading part of the path is a file (args: that part)."""


class NotAFile(Exception):
    """The file to create is a directory (args: the path)."""


class RefMoved(Exception):
    """The branch moved while a commit for it was being written."""


class ObjectRefused(Exception):
    """`git fsck --strict` refused an object of the commit (args: its report)."""


def _crud(char: str) -> bool:
    return char <= " " or char in ".,:;<>\"\\'"


def clean_identity(text: str) -> str:
    """TEXT as git writes a name or email into a commit (ident.c strbuf_addstr_without_crud): crud
    trimmed at both ends, `<`, `>` and newlines (and NUL, which ends a C string) dropped inside."""
    start, end = 0, len(text)
    while start < end and _crud(text[start]):
        start += 1
    while end > start and _crud(text[end - 1]):
        end -= 1
    return "".join(char for char in text[start:end] if char not in "<>\n\x00")


def commit_file(path: Path, branch: str, file_path: str, content: bytes | None, *, must_exist: bool,
                message: str, author_name: str, author_email: str) -> tuple[str, str]:  # fmt: skip
    """Commit one file change on BRANCH (CONTENT None deletes the file); returns (old SHA, new SHA).

    MUST_EXIST says whether FILE_PATH must already be there (update, delete) or must not (create).
    An empty repository gets its first commit. AUTHOR_NAME and AUTHOR_EMAIL must not be empty once
    cleaned (`clean_identity`): the caller chooses fallbacks."""
    repository = open_repository(path)
    if not is_branch_name(branch):
        raise NotInRepository(branch)
    ref = repository.references.get(HEADS + branch)
    if ref is None and any(name.startswith(HEADS) for name in repository.references):
        raise NotInRepository(branch)
    parent = ref.peel(pygit2.Commit) if ref is not None else None
    index = pygit2.Index()
    if parent is not None:
        index.read_tree(parent.tree)
        if not must_exist:
            _check_room(parent.tree, file_path)
    if (file_path in index) != must_exist:
        raise FileConflict(file_path)
    signature = pygit2.Signature(clean_identity(author_name), clean_identity(author_email))
    with tempfile.TemporaryDirectory(prefix="tmp_codeyard-", dir=path / "objects") as staging_dir:
        staging = _staging_repository(Path(staging_dir), path)
        if content is None:
            index.remove(file_path)
        else:
            mode = index[file_path].mode if must_exist else pygit2.enums.FileMode.BLOB
            if mode != pygit2.enums.FileMode.BLOB_EXECUTABLE:
                mode = pygit2.enums.FileMode.BLOB
            index.add(pygit2.IndexEntry(file_path, staging.create_blob(content), mode))
        tree = index.write_tree(staging)
        new = staging.create_commit(None, signature, signature, message, tree, [parent.id] if parent else [])
        _check_objects(Path(staging_dir))
        _copy_objects(staging, repository, Path(staging_dir))
    old = str(parent.id) if parent is not None else ZERO_SHA
    moved = subprocess.run(["git", "--git-dir", str(path), "update-ref", "--stdin", "-z"],
                           input=f"update {HEADS + branch}\0{new}\0{old}\0".encode(), capture_output=True)  # fmt: skip
    if moved.returncode != 0:
        raise RefMoved(branch)
    return old, str(new)


def _check_room(tree: pygit2.Tree, file_path: str) -> None:
    """A new file needs its leading parts to be directories (or missing) and itself not a directory."""
    parts = file_path.split("/")
    for depth in range(1, len(parts)):
        leading = "/".join(parts[:depth])
        try:
            entry = tree[leading]
        except KeyError:
            return
        if entry.type_str != "tree":
            raise NotADirectory(leading)
    try:
        entry = tree[file_path]
    except KeyError:
        return
    if entry.type_str == "tree":
        raise NotAFile(file_path)


def _staging_repository(directory: Path, repository: Path) -> pygit2.Repository:
    """An empty bare repository in DIRECTORY that reads the objects of REPOSITORY too (an alternate
    known to libgit2 only: git's fsck of it sees just the new objects) and writes new ones to its
    own object directory. It lives in REPOSITORY's objects/ under a `tmp_` name, as git's own
    quarantine does: `git prune` removes one a crash left behind."""
    (directory / "objects").mkdir()
    (directory / "refs").mkdir()
    (directory / "HEAD").write_text("ref: refs/heads/staging\n")
    staging = pygit2.Repository(str(directory))
    staging.odb.add_disk_alternate(str(repository / "objects"))
    return staging


def _staged_ids(directory: Path) -> list[str]:
    return [f"{fan.name}{loose.name}" for fan in (directory / "objects").glob("[0-9a-f][0-9a-f]") for loose in fan.iterdir()]


def _check_objects(directory: Path) -> None:
    """`git fsck --strict` of the staged objects only. Without an alternate: fsck would read every
    loose object of the repository too (`--no-full` only leaves out packs); each staged object is
    checked on its own, and what it points to is in the repository already. Nor the commit-graph
    and multi-pack-index verifications, four more processes fsck would start."""
    checked = subprocess.run(
        ["git", "--git-dir", str(directory), "-c", "core.commitGraph=false", "-c", "core.multiPackIndex=false",
         "fsck", "--strict", "--no-dangling", "--no-reflogs", "--no-progress"],
        capture_output=True, text=True,
    )  # fmt: skip
    if checked.returncode != 0:
        raise ObjectRefused(checked.stdout + checked.stderr)


def _copy_objects(staging: pygit2.Repository, repository: pygit2.Repository, directory: Path) -> None:
    for object_id in _staged_ids(directory):
        kind, data = staging.odb.read(object_id)
        repository.odb.write(kind, data)
