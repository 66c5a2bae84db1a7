"""A bare repository through pygit2: refs (read and written), commits, trees, blobs, and what a
push brought.

Everything here takes a repository path and returns plain data (no database, no app imports).
A repository that cannot be opened raises `RepositoryUnavailable`; a name that resolves to
nothing raises `NotInRepository`, and so does a revision or branch name that `refs.is_revision` /
`refs.is_branch_name` refuses: user text is checked before libgit2 sees it. The git CLI is only ever
given commit ids (resolved here first) after `--end-of-options`, and paths after `--`, read literally.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import subprocess
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pygit2

from .refs import HEADS, MAX_NAME_BYTES, TAGS, is_branch_name, is_revision


class RepositoryUnavailable(Exception):
    """The repository is missing or cannot be read."""


class NotInRepository(Exception):
    """A ref, commit or path that the repository does not have."""


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    when: dt.datetime


@dataclass(frozen=True)
class CommitInfo:
    id: str
    message: str
    parent_ids: list[str]
    tree_id: str
    author: Person
    committer: Person


@dataclass(frozen=True)
class TreeEntry:
    id: str
    name: str
    type: str  # "tree", "blob" or "commit" (a submodule)
    mode: str
    path: str


HANDLES_PER_THREAD = 16
_handles = threading.local()


def open_repository(path: Path) -> pygit2.Repository:
    """The repository at PATH, opened once per thread and kept (the last HANDLES_PER_THREAD of
    each thread) while its directory is the same one, unchanged: opening one and reading its first
    objects cost about five times what a kept handle's reads do.

    A kept handle reads what other processes wrote: libgit2 reads refs from their files on every
    lookup and, when an object is missing from the packs it knows, rescans the pack directory. A
    handle is never shared between threads (libgit2 repositories are not thread-safe)."""
    key = str(path)
    try:
        found = os.stat(key)
    except OSError as error:
        raise RepositoryUnavailable(key) from error
    stamp = (found.st_dev, found.st_ino, found.st_mtime_ns)
    kept = getattr(_handles, "kept", None)
    if kept is None:
        kept = _handles.kept = OrderedDict()
    entry = kept.get(key)
    if entry is not None and entry[0] == stamp:
        kept.move_to_end(key)
        return entry[1]
    try:
        repository = pygit2.Repository(key)
    except (pygit2.GitError, KeyError) as error:
        kept.pop(key, None)
        raise RepositoryUnavailable(key) from error
    kept[key] = (stamp, repository)
    kept.move_to_end(key)
    while len(kept) > HANDLES_PER_THREAD:
        kept.popitem(last=False)
    return repository


def _person(signature: pygit2.Signature) -> Person:
    zone = dt.timezone(dt.timedelta(minutes=signature.offset))
    return Person(signature.name, signature.email, dt.datetime.fromtimestamp(signature.time, zone))


def commit_info(commit: pygit2.Commit) -> CommitInfo:
    return CommitInfo(
        id=str(commit.id),
        message=commit.message,
        parent_ids=[str(parent) for parent in commit.parent_ids],
        tree_id=str(commit.tree_id),
        author=_person(commit.author),
        committer=_person(commit.committer),
    )


def resolve(repository: pygit2.Repository, name: str) -> pygit2.Commit:
    """The commit NAME points at: a branch, a tag, a full or abbreviated SHA, HEAD, any of them
    followed by `~n`/`^n` steps; nothing else (`refs.is_revision`)."""
    if not is_revision(name):
        raise NotInRepository(name)
    try:
        found = repository.revparse_single(name)
        commit = found.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as error:
        raise NotInRepository(name) from error
    return commit


def commit_id(path: Path, name: str) -> str:
    """The full SHA of the commit NAME points at."""
    return str(resolve(open_repository(path), name).id)


def branches(path: Path, offset: int = 0, limit: int | None = None) -> tuple[int, list[tuple[str, CommitInfo]]]:
    """(number of branches, (name, tip commit) of those in the window), sorted by name; only the
    window's commits are read."""
    repository = open_repository(path)
    names = sorted(ref[len(HEADS) :] for ref in repository.references if ref.startswith(HEADS))
    window = names[offset:] if limit is None else names[offset : offset + limit]
    tips = [(name, commit_info(repository.references[HEADS + name].peel(pygit2.Commit))) for name in window]
    return len(names), tips


def _branch_tip(path: Path, name: str) -> pygit2.Commit | None:
    repository = open_repository(path)
    if not is_branch_name(name):
        return None
    ref = repository.references.get(HEADS + name)
    return ref.peel(pygit2.Commit) if ref is not None else None


def branch(path: Path, name: str) -> CommitInfo | None:
    """The tip of branch NAME; None when missing or when NAME is not a canonical branch name
    (libgit2 would otherwise read `/master` or `master/` as `master`)."""
    tip = _branch_tip(path, name)
    return commit_info(tip) if tip is not None else None


def branch_id(path: Path, name: str) -> str | None:
    """The commit id at the tip of branch NAME (`branch` without reading the commit)."""
    tip = _branch_tip(path, name)
    return str(tip.id) if tip is not None else None


def head_branch(path: Path) -> str | None:
    """The branch HEAD names (whether or not it exists yet)."""
    repository = open_repository(path)
    target = repository.references.get("HEAD")
    if target is None or target.type != pygit2.enums.ReferenceType.SYMBOLIC:
        return None
    name = target.target
    return name[len(HEADS) :] if name.startswith(HEADS) else None


def create_branch(path: Path, name: str, target: str) -> CommitInfo:
    """Create branch NAME at the commit TARGET names; FileExistsError if it exists."""
    repository = open_repository(path)
    commit = resolve(repository, target)
    if not is_branch_name(name):
        raise ValueError(name)
    if repository.references.get(HEADS + name) is not None:
        raise FileExistsError(name)
    repository.references.create(HEADS + name, commit.id)
    return commit_info(commit)


def delete_branch(path: Path, name: str) -> str:
    """Delete branch NAME; returns the SHA it pointed at. KeyError if missing."""
    return delete_ref(path, HEADS + name, is_branch_name(name))


def delete_ref(path: Path, ref: str, valid: bool) -> str:
    """Delete REF (a full name, VALID when its short name passes its kind's check); returns the id
    it pointed at. KeyError if missing or not valid."""
    found = open_repository(path).references.get(ref) if valid else None
    if found is None:
        raise KeyError(ref)
    target = str(found.target)
    found.delete()
    return target


def count_commits(path: Path, ref: str) -> int:
    """How many commits REF reaches (git rev-list is much faster than a Python walk)."""
    return _commits_reached(str(path), str(resolve(open_repository(path), ref).id))


@functools.lru_cache(maxsize=4096)
def _commits_reached(path: str, start: str) -> int:
    """How many commits the commit START reaches: what a commit reaches never changes, so each count
    is kept (a poll of a branch's commits starts git only after the branch moved)."""
    result = subprocess.run(
        ["git", "--git-dir", path, "rev-list", "--count", "--end-of-options", start, "--"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise NotInRepository(start)
    return int(result.stdout.strip())


def log(path: Path, ref: str, offset: int, limit: int) -> list[CommitInfo]:
    """Commits reachable from REF, newest first (by commit time, then topology), one page."""
    repository = open_repository(path)
    start = resolve(repository, ref).id
    ids = _order(repository, (str(path), start), offset + limit)
    return [commit_info(repository[oid]) for oid in ids[offset : offset + limit]]


# libgit2 sorts by time and topology only after walking the whole history (docs/MEASUREMENTS.md,
# polled reads), whatever the page, but the order from a given commit never changes: the ids walked are
# kept per (repository, start commit), ORDER_STEP at a time up to ORDER_KEPT, for ORDERS_KEPT
# starts. A poll of a branch's first page walks again only after the branch moved.
ORDER_STEP, ORDER_KEPT, ORDERS_KEPT = 100, 2_000, 64


class _Order(NamedTuple):
    ids: list[pygit2.Oid]
    complete: bool  # the whole history: no more to walk


_orders: OrderedDict[tuple[str, pygit2.Oid], _Order] = OrderedDict()
_orders_lock = threading.Lock()


def _order(repository: pygit2.Repository, key: tuple[str, pygit2.Oid], needed: int) -> list[pygit2.Oid]:
    """The first NEEDED ids (or more; all when there are fewer) of the order from KEY's start commit."""
    with _orders_lock:
        kept = _orders.get(key)
        if kept is not None:
            _orders.move_to_end(key)
    if kept is not None and (kept.complete or len(kept.ids) >= needed):
        return kept.ids
    count = -(-needed // ORDER_STEP) * ORDER_STEP
    ids = _walked(repository, key[1], count)
    if count <= ORDER_KEPT:
        with _orders_lock:
            _orders[key] = _Order(ids, complete=len(ids) < count)
            if len(_orders) > ORDERS_KEPT:
                _orders.popitem(last=False)
    return ids


def _walked(repository: pygit2.Repository, start: pygit2.Oid, count: int) -> list[pygit2.Oid]:
    """The ids of the first COUNT commits (fewer when the history is shorter) from START, newest first."""
    ids = []
    for commit in repository.walk(start, pygit2.enums.SortMode.TIME | pygit2.enums.SortMode.TOPOLOGICAL):
        if len(ids) == count:
            break
        ids.append(commit.id)
    return ids


def commit(path: Path, sha: str) -> CommitInfo:
    return commit_info(resolve(open_repository(path), sha))


def tree(path: Path, ref: str, subpath: str = "") -> list[TreeEntry]:
    """Entries of the directory SUBPATH at REF (trees first, then by name)."""
    repository = open_repository(path)
    node = resolve(repository, ref).tree
    prefix = subpath.strip("/")
    if "\x00" in prefix:  # libgit2 would cut the path there
        raise NotInRepository(subpath)
    if prefix:
        try:
            entry = node[prefix]
        except (KeyError, ValueError) as error:
            raise NotInRepository(subpath) from error
        node = repository[entry.id]
        if not isinstance(node, pygit2.Tree):
            raise NotInRepository(subpath)
    entries = [
        TreeEntry(str(item.id), item.name, item.type_str, f"{item.filemode:06o}", f"{prefix}/{item.name}" if prefix else item.name)
        for item in node
    ]
    return sorted(entries, key=lambda e: (e.type != "tree", e.name))


# Commits `last_commit_for` walks in process before `git log` takes over: a step costs far less than
# starting `git log` (docs/MEASUREMENTS.md, polled reads).
LAST_COMMIT_WALK = 300


def last_commit_for(path: Path, ref: str, file_path: str) -> str | None:
    """The newest commit reachable from REF that changed FILE_PATH (taken literally, not as a
    pattern), as `git log -1 -- FILE_PATH` finds it with its default history simplification: from
    REF back, a commit whose entry at FILE_PATH equals a parent's (TREESAME) is passed over for the
    first such parent; the first commit that differs from all of its parents (a root: from nothing)
    is the one. Walked in process for LAST_COMMIT_WALK commits (most files changed recently), then
    by `git log` from where the walk stopped."""
    commit = resolve(open_repository(path), ref)
    if "\x00" in file_path:
        return None
    entry = _entry_at(commit.tree, file_path)  # the same all along the walk: it follows only TREESAME parents
    for _ in range(LAST_COMMIT_WALK):
        same = next((parent for parent in commit.parents if _entry_at(parent.tree, file_path) == entry), None)
        if same is None:
            return str(commit.id) if commit.parents or entry is not None else None
        commit = same
    result = subprocess.run(
        ["git", "--git-dir", str(path), "--literal-pathspecs", "log", "-1", "--format=%H", "--end-of-options",
         str(commit.id), "--", file_path],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return result.stdout.strip() or None


def _entry_at(tree: pygit2.Tree, file_path: str) -> tuple[pygit2.Oid, int] | None:
    """(id, mode) of the entry at FILE_PATH in TREE (a blob, or the tree under a directory), None without one."""
    try:
        entry = tree[file_path]
    except (KeyError, ValueError):
        return None
    return entry.id, entry.filemode


@dataclass(frozen=True)
class PushedCommits:
    commits: list[CommitInfo]  # the newest ones (at most `keep`), oldest first
    total: int
    capped: bool  # the walk stopped at its bound: `total` is a lower bound


def pushed_commits(path: Path, new: str, hide: list[str], keep: int = 20, bound: int = 100_000) -> PushedCommits:
    """Commits reachable from NEW but from none of HIDE (SHAs or ref names that exist), newest first
    walked; returns the newest KEEP of them oldest first, and how many there were (up to BOUND)."""
    repository = open_repository(path)
    walker = repository.walk(pygit2.Oid(hex=new), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    for name in hide:
        try:
            walker.hide(resolve(repository, name).id)
        except NotInRepository:
            continue
    newest: list[pygit2.Commit] = []
    total = 0
    for found in walker:
        total += 1
        if len(newest) < keep:
            newest.append(found)
        if total >= bound:
            return PushedCommits([commit_info(c) for c in reversed(newest)], total, True)
    return PushedCommits([commit_info(c) for c in reversed(newest)], total, False)


def changed_paths(path: Path, sha: str) -> tuple[list[str], list[str], list[str]]:
    """(added, modified, removed) paths of a commit against its first parent."""
    repository = open_repository(path)
    found = resolve(repository, sha)
    diff = repository.diff(found.parents[0], found) if found.parents else found.tree.diff_to_tree(swap=True)
    added, modified, removed = [], [], []
    for delta in diff.deltas:
        status = delta.status_char()
        if status == "A":
            added.append(delta.new_file.path)
        elif status == "D":
            removed.append(delta.old_file.path)
        else:
            modified.append(delta.new_file.path)
    return added, modified, removed


def tag_target(path: Path, name: str) -> tuple[str | None, str | None]:
    """(commit SHA, annotation message or None) of tag NAME."""
    repository = open_repository(path)
    ref = repository.references.get(TAGS + name)
    if ref is None:
        return None, None
    target = repository[ref.target]
    message = target.message if isinstance(target, pygit2.Tag) else None
    return str(ref.peel(pygit2.Commit).id), message


def branch_names(path: Path) -> list[str]:
    """Names of the repository's branches, sorted; [] for an empty or missing repository."""
    try:
        repository = open_repository(path)
    except RepositoryUnavailable:
        return []
    return sorted(name[len(HEADS) :] for name in repository.references if name.startswith(HEADS))


def branches_containing(path: Path, sha: str) -> list[str]:
    """Names of the branches whose history has commit SHA (a full id), sorted (`git branch --contains`)."""
    repository = open_repository(path)
    wanted = pygit2.Oid(hex=sha)
    found = []
    for name in sorted(ref[len(HEADS) :] for ref in repository.references if ref.startswith(HEADS)):
        tip = repository.references[HEADS + name].peel(pygit2.Commit).id
        if tip == wanted or repository.descendant_of(tip, wanted):
            found.append(name)
    return found


def set_head_branch(path: Path, branch: str) -> None:
    open_repository(path).set_head(HEADS + branch)


@dataclass
class Contributor:
    name: str
    email: str
    commits: int = 0
    additions: int = 0
    deletions: int = 0


CONTRIBUTOR_COMMITS = 2000  # GitLab 8.6 read the newest 2000 commits


def contributors(path: Path, ref: str, bound: int = CONTRIBUTOR_COMMITS) -> list[Contributor]:
    """Authors of the newest BOUND non-merge commits REF reaches, by e-mail, the most recent first:
    their name in their newest commit, commits, lines added and deleted (binary files count none).
    git gives commit ids and line counts only (paths come quoted); names are read with pygit2."""
    repository = open_repository(path)
    start = str(resolve(repository, ref).id)
    result = subprocess.run(
        ["git", "-c", "core.quotePath=true", "--git-dir", str(path), "log", "--no-merges", f"--max-count={bound}",
         "--numstat", "--no-renames",
         "--format=%x1e%H", "--end-of-options", start, "--"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise NotInRepository(ref)
    found: dict[str, Contributor] = {}
    for record in result.stdout.split("\x1e")[1:]:
        sha, _, stats = record.partition("\n")
        author = _person(repository[sha.strip()].author)
        person = found.setdefault(author.email, Contributor(author.name, author.email))
        person.name = person.name or author.name
        person.commits += 1
        for line in stats.splitlines():
            added, deleted = [*line.split("\t", 2), "", ""][:2]
            if added.isdigit() and deleted.isdigit():
                person.additions += int(added)
                person.deletions += int(deleted)
    return list(found.values())


def split_ref(path: Path, text: str) -> tuple[str, str]:
    """(ref, path) of a `<ref>/<path>` URL tail whose ref may itself hold slashes (`feature/x/src/a.py`):
    the longest leading part that names a commit wins, as GitLab's ExtractsPath chose."""
    repository = open_repository(path)
    parts = text.split("/")
    for end in range(len(parts), 0, -1):
        ref = "/".join(parts[:end])
        if len(ref.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES or not is_revision(ref):
            continue
        try:
            resolve(repository, ref)
        except NotInRepository:
            continue
        return ref, "/".join(parts[end:])
    raise NotInRepository(text)


@dataclass(frozen=True)
class Tag:
    name: str
    commit: CommitInfo
    message: str | None  # an annotated tag's message


def tags(path: Path, offset: int = 0, limit: int | None = None) -> tuple[int, list[Tag]]:
    """(number of tags, those in the window), newest name first; only the window's commits are read."""
    repository = open_repository(path)
    names = sorted((ref[len(TAGS) :] for ref in repository.references if ref.startswith(TAGS)), reverse=True)
    window = names[offset:] if limit is None else names[offset : offset + limit]
    found = []
    for name in window:
        ref = repository.references[TAGS + name]
        target = repository[ref.target]
        try:
            tip = ref.peel(pygit2.Commit)
        except (ValueError, pygit2.GitError):
            continue  # a tag of a tree or blob
        found.append(Tag(name, commit_info(tip), target.message if isinstance(target, pygit2.Tag) else None))
    return len(names), found
