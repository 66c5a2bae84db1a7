"""History reads API v4 asks for beyond v3's: commits filtered by time, path and author, the refs
that hold a commit, a commit's line counts, merge bases and blame.

Each runs git on commit ids resolved first (`repo.resolve`), after `--end-of-options`, paths after
`--` read literally, within a deadline; paths in, plain data out, no app imports.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from . import diffs
from .refs import HEADS, TAGS
from .repo import CommitInfo, NotInRepository, TreeEntry, commit_info, open_repository, resolve, tree

DEADLINE = 10.0  # seconds for one git command
MAX_BLAME_BYTES = 1024 * 1024  # blame of a bigger file is refused (GitLab's blob limit for display)


class TooSlow(Exception):
    """git ran past its deadline."""


def _git(path: Path, *args: str, deadline: float = DEADLINE) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "--git-dir", str(path), "--literal-pathspecs", *args], capture_output=True,
                              timeout=deadline, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise TooSlow() from None


@dataclass(frozen=True)
class LogFilter:
    """What `git log` is asked to keep; every field is plain data checked by the caller's types."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None
    path: str | None = None
    author: str | None = None
    first_parent: bool = False
    topo: bool = False


def _log_args(filters: LogFilter) -> list[str]:
    args = []
    if filters.since is not None:
        args.append(f"--max-age={int(filters.since.timestamp())}")
    if filters.until is not None:
        args.append(f"--min-age={int(filters.until.timestamp())}")
    if filters.author is not None:
        args += ["--fixed-strings", f"--author={filters.author}"]
    if filters.first_parent:
        args.append("--first-parent")
    args.append("--topo-order" if filters.topo else "--date-order")
    return args


def log(path: Path, ref: str | None, filters: LogFilter, offset: int, limit: int) -> tuple[int, list[CommitInfo]]:
    """(how many commits match, one page of them, newest first) from REF, or from every ref when
    REF is None."""
    repository = open_repository(path)
    starts = ["--all"] if ref is None else ["--end-of-options", str(resolve(repository, ref).id)]
    tail = ["--", filters.path] if filters.path else ["--"]
    common = _log_args(filters)
    counted = _git(path, "rev-list", "--count", *common, *starts, *tail)
    listed = _git(path, "rev-list", f"--skip={offset}", f"--max-count={limit}", *common, *starts, *tail)
    if counted.returncode != 0 or listed.returncode != 0:
        raise NotInRepository(ref or "")
    ids = listed.stdout.decode().split()
    return int(counted.stdout.strip() or 0), [commit_info(repository[oid]) for oid in ids]


@dataclass(frozen=True)
class Stats:
    additions: int
    deletions: int

    @property
    def total(self) -> int:
        return self.additions + self.deletions


def stats(path: Path, sha: str) -> Stats:
    """Lines added and deleted by the commit SHA against its first parent (binary files count none)."""
    repository = open_repository(path)
    found = resolve(repository, sha)
    parent = str(found.parents[0].id) if found.parents else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree
    result = _git(path, "diff", "--numstat", "--no-renames", "-z", "--end-of-options", parent, str(found.id), "--")
    added = deleted = 0
    for record in result.stdout.split(b"\0"):
        fields = record.split(b"\t")
        if len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
            added, deleted = added + int(fields[0]), deleted + int(fields[1])
    return Stats(added, deleted)


def refs_containing(path: Path, sha: str, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
    """(kind, name) of the branches and tags (KINDS: "branch", "tag") whose history holds SHA."""
    repository = open_repository(path)
    found = str(resolve(repository, sha).id)
    prefixes = [prefix for kind, prefix in (("branch", HEADS), ("tag", TAGS)) if kind in kinds]
    result = _git(path, "for-each-ref", "--format=%(refname)", f"--contains={found}", *prefixes)
    refs = []
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        kind = "branch" if line.startswith(HEADS) else "tag"
        refs.append((kind, line[len(HEADS) :] if kind == "branch" else line[len(TAGS) :]))
    return refs


def merge_base(path: Path, names: list[str]) -> CommitInfo | None:
    """The best common ancestor of the commits NAMES name; None when they share no history."""
    repository = open_repository(path)
    ids = [resolve(repository, name).id for name in names]
    base = repository.merge_base_many(ids)
    return commit_info(repository[base]) if base is not None else None


@dataclass
class BlameRange:
    commit: CommitInfo
    lines: list[str] = field(default_factory=list)


def blame(path: Path, ref: str, file_path: str, start: int | None = None, end: int | None = None) -> list[BlameRange]:
    """The file at REF as ranges of consecutive lines, each with the commit that last changed them
    (`git blame --porcelain`). NotInRepository for a missing file; ValueError for one too big."""
    repository = open_repository(path)
    found = resolve(repository, ref)
    try:
        entry = found.tree[file_path]
    except (KeyError, ValueError) as error:
        raise NotInRepository(file_path) from error
    kind, size = repository.odb.read_header(entry.id)
    if kind != pygit2.enums.ObjectType.BLOB:
        raise NotInRepository(file_path)
    if size > MAX_BLAME_BYTES:
        raise ValueError(file_path)
    span = [f"-L{start or 1},{end or ''}"] if start is not None or end is not None else []
    # blame refuses --end-of-options (git 2.39); the revision is a full id resolved above, never an option.
    result = _git(path, "blame", "--porcelain", *span, str(found.id), "--", file_path)
    if result.returncode != 0:
        raise NotInRepository(file_path)
    return _porcelain(repository, result.stdout)


def _porcelain(repository: pygit2.Repository, out: bytes) -> list[BlameRange]:
    ranges: list[BlameRange] = []
    infos: dict[str, CommitInfo] = {}
    current = None
    for line in out.split(b"\n"):
        if line.startswith(b"\t"):
            ranges[-1].lines.append(line[1:].decode("utf-8", "replace"))
            continue
        fields = line.split(b" ")
        if len(fields) >= 3 and len(fields[0]) == 40 and fields[1].isdigit():
            sha = fields[0].decode()
            if sha not in infos:
                infos[sha] = commit_info(repository[sha])
            if sha != current:  # a run of lines from the same commit stays one range
                ranges.append(BlameRange(infos[sha]))
                current = sha
    return ranges


MAX_TREE_ENTRIES = 100_000  # entries a recursive tree lists at most


def tree_below(path: Path, ref: str, subpath: str = "") -> list[TreeEntry]:
    """Every entry below the directory SUBPATH at REF, each directory before what it holds, in
    `repo.tree`'s order within a directory; at most MAX_TREE_ENTRIES."""
    found: list[TreeEntry] = []
    pending = [tree(path, ref, subpath)]
    repository = open_repository(path)
    while pending and len(found) < MAX_TREE_ENTRIES:
        entries = pending.pop()
        for position, entry in enumerate(entries):
            found.append(entry)
            if entry.type == "tree":
                pending.append(entries[position + 1 :])
                pending.append(_entries(repository, entry))
                break
    return found[:MAX_TREE_ENTRIES]


def _entries(repository: pygit2.Repository, directory: TreeEntry) -> list[TreeEntry]:
    node = repository[directory.id]
    entries = [TreeEntry(str(item.id), item.name, item.type_str, f"{item.filemode:06o}", f"{directory.path}/{item.name}")
               for item in node]  # fmt: skip
    return sorted(entries, key=lambda e: (e.type != "tree", e.name))


def straight_diff(path: Path, base: str, head: str) -> list:
    """The files changed from BASE's commit straight to HEAD's (`git diff base head`, not from their
    merge base), within `diffs.LIMITS`: git.diffs.FileDiff each."""
    repository = open_repository(path)
    base_commit, head_commit = resolve(repository, base), resolve(repository, head)
    diff = repository.diff(base_commit, head_commit)
    return diffs.file_diffs(repository, diff, None, (str(base_commit.id), str(head_commit.id)))
