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
from dataclasses import dataclass
from pathlib import Path

import pygit2

from .refs import HEADS, ZERO_SHA, is_branch_name
from .repo import NotInRepository, last_commit_for, open_repository, resolve


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
    _move(path, branch, old, str(new))
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


# --- commits of several changes (API v4's commits and files), cherry-picks and reverts ----------

MAX_CHANGES = 1000  # actions in one commit


class ChangeRefused(Exception):
    """A change cannot be made as asked (args: GitLab's message)."""


class NoBranch(Exception):
    """The branch does not exist and nothing says where it should start."""


@dataclass(frozen=True)
class Change:
    """One action of a commit: `create`, `delete`, `move`, `update` or `chmod` of FILE_PATH.
    CONTENT None keeps what is there (move, chmod); EXECUTABLE None keeps the mode; LAST_COMMIT_ID,
    when given, must be the last commit that changed the file (else someone changed it meanwhile)."""

    action: str
    file_path: str
    content: bytes | None = None
    previous_path: str | None = None
    executable: bool | None = None
    last_commit_id: str | None = None


EXISTS = "A file with this name already exists"
MISSING = "A file with this name doesn't exist"
CHANGED = "You are attempting to update a file that has changed since you started editing it."
EXECUTABLE, REGULAR = pygit2.enums.FileMode.BLOB_EXECUTABLE, pygit2.enums.FileMode.BLOB


class _Files:
    """The files of the tree being built (a pygit2 Index), with which names are directories."""

    def __init__(self, index: pygit2.Index):
        self.index = index
        self._dirs: set[str] | None = None

    def dirs(self) -> set[str]:
        if self._dirs is None:
            self._dirs = {entry.path.rsplit("/", 1)[0] for entry in self.index if "/" in entry.path}
            self._dirs |= {d.rsplit("/", depth)[0] for d in list(self._dirs) for depth in range(1, d.count("/") + 1)}
        return self._dirs

    def add(self, file_path: str, blob: pygit2.Oid, mode: int) -> None:
        if file_path in self.dirs():
            raise ChangeRefused(f"{NOT_COMMITTED}{file_path} is a directory, not a file")
        parts = file_path.split("/")
        for depth in range(1, len(parts)):
            leading = "/".join(parts[:depth])
            if leading in self.index:
                raise ChangeRefused(f"{NOT_COMMITTED}{leading} is a file, not a directory")
            self.dirs().add(leading)
        self.index.add(pygit2.IndexEntry(file_path, blob, mode))

    def remove(self, file_path: str) -> None:
        self.index.remove(file_path)
        self._dirs = None


NOT_COMMITTED = "Your changes could not be committed, because "


def _mode(current: int | None, executable: bool | None) -> int:
    if executable is not None:
        return EXECUTABLE if executable else REGULAR
    return EXECUTABLE if current == EXECUTABLE else REGULAR


def _apply(files: _Files, staging: pygit2.Repository, change: Change, last_commit) -> None:
    index, path = files.index, change.file_path
    source = change.previous_path if change.action == "move" else path
    exists = path in index
    if (change.action == "create" or (change.action == "move" and source != path)) and exists:
        raise ChangeRefused(EXISTS)
    if change.action != "create" and source not in index:
        raise ChangeRefused(MISSING)
    if change.last_commit_id and change.action != "create" and last_commit(source) != change.last_commit_id:
        raise ChangeRefused(CHANGED)
    if change.action == "delete":
        files.remove(path)
        return
    current = index[source] if change.action != "create" else None
    blob = staging.create_blob(change.content) if change.content is not None else current.id
    mode = _mode(current.mode if current is not None else None, change.executable)
    if change.action == "move":
        files.remove(source)
    files.add(path, blob, mode)


def commit_changes(path: Path, branch: str, changes: list[Change], *, start: str | None, message: str,
                   author: tuple[str, str], committer: tuple[str, str]) -> tuple[str, str]:  # fmt: skip
    """Commit CHANGES on BRANCH, all of them or none; returns (old SHA, new SHA). A missing BRANCH
    starts at START (a revision) and is created; without START only an empty repository may be
    committed to (its first commit). AUTHOR and COMMITTER are (name, email), cleaned here and not
    empty once cleaned. The objects are checked and the branch moved as `commit_file` does."""
    repository = open_repository(path)
    if not is_branch_name(branch):
        raise NotInRepository(branch)
    ref = repository.references.get(HEADS + branch)
    if ref is not None:
        parent = ref.peel(pygit2.Commit)
    elif start is not None:
        parent = resolve(repository, start)
    elif any(name.startswith(HEADS) for name in repository.references):
        raise NoBranch(branch)
    else:
        parent = None
    index = pygit2.Index()
    if parent is not None:
        index.read_tree(parent.tree)
    files = _Files(index)

    def last_commit(file_path: str) -> str | None:
        return last_commit_for(path, str(parent.id), file_path) if parent is not None else None

    with tempfile.TemporaryDirectory(prefix="tmp_codeyard-", dir=path / "objects") as staging_dir:
        staging = _staging_repository(Path(staging_dir), path)
        for change in changes:
            _apply(files, staging, change, last_commit)
        tree = index.write_tree(staging)
        new = staging.create_commit(None, _signature(author), _signature(committer), message, tree,
                                    [parent.id] if parent is not None else [])  # fmt: skip
        _check_objects(Path(staging_dir))
        _copy_objects(staging, repository, Path(staging_dir))
    old = str(parent.id) if ref is not None else ZERO_SHA
    _move(path, branch, old, str(new))
    return old, str(new)


def _signature(person: tuple[str, str], when: pygit2.Signature | None = None) -> pygit2.Signature:
    name, email = clean_identity(person[0]), clean_identity(person[1])
    if when is None:
        return pygit2.Signature(name, email)
    return pygit2.Signature(name, email, when.time, when.offset)


def _move(path: Path, branch: str, old: str, new: str) -> None:
    moved = subprocess.run(["git", "--git-dir", str(path), "update-ref", "--stdin", "-z"],
                           input=f"update {HEADS + branch}\0{new}\0{old}\0".encode(), capture_output=True)  # fmt: skip
    if moved.returncode != 0:
        raise RefMoved(branch)


PICK_FAILED = ("Sorry, we cannot {verb} this commit automatically. This commit may already have been {done}, or a "
               "more recent commit may have updated some of its content.")  # fmt: skip
MERGE_COMMIT = "Sorry, we cannot {verb} a merge commit automatically."


def pick(path: Path, sha: str, branch: str, *, revert: bool, committer: tuple[str, str],
         dry_run: bool = False) -> tuple[str, str]:  # fmt: skip
    """Cherry-pick (or, with REVERT, revert) the commit SHA names onto BRANCH, in memory (a merge of
    trees: no work tree, nothing other requests use is touched); returns (old SHA, new SHA).
    ChangeRefused with GitLab's message when it conflicts or changes nothing, or for a merge commit.
    DRY_RUN: only whether it would succeed; nothing is kept, the branch stays (new SHA = old SHA)."""
    verb, done = ("revert", "reverted") if revert else ("cherry-pick", "cherry-picked")
    repository = open_repository(path)
    picked = resolve(repository, sha)
    if not is_branch_name(branch) or repository.references.get(HEADS + branch) is None:
        raise NoBranch(branch)
    ours = repository.references[HEADS + branch].peel(pygit2.Commit)
    if len(picked.parents) > 1:
        raise ChangeRefused(MERGE_COMMIT.format(verb=verb))
    with tempfile.TemporaryDirectory(prefix="tmp_codeyard-", dir=path / "objects") as staging_dir:
        staging = _staging_repository(Path(staging_dir), path)
        base = picked.parents[0].tree if picked.parents else staging[staging.TreeBuilder().write()]
        theirs = picked.tree
        if revert:
            base, theirs = theirs, base
        merged = staging.merge_trees(base, ours.tree, theirs)
        if merged.conflicts is not None:
            raise ChangeRefused(PICK_FAILED.format(verb=verb, done=done))
        tree = merged.write_tree(staging)
        if tree == ours.tree_id:
            raise ChangeRefused(PICK_FAILED.format(verb=verb, done=done))
        if dry_run:
            return str(ours.id), str(ours.id)
        me = _signature(committer)
        if revert:
            title = picked.message.strip().split("\n", 1)[0]
            message, author = f'Revert "{title}"\n\nThis reverts commit {picked.id}.\n', me
        else:
            message = f"{picked.message.rstrip()}\n\n(cherry picked from commit {picked.id})\n"
            author = picked.author
        new = staging.create_commit(None, author, me, message, tree, [ours.id])
        _check_objects(Path(staging_dir))
        _copy_objects(staging, repository, Path(staging_dir))
    old = str(ours.id)
    _move(path, branch, old, str(new))
    return old, str(new)
