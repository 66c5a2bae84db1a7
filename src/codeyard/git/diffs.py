"""Diffs of commits and comparisons, bounded in time and memory (GitLab's diff limits).

Sizes are checked before anything is rendered: a file whose blob (from its object header) is over
`max_blob_bytes`, or whose patch is over `max_patch_bytes`, is `too_large` with an empty diff;
once a response holds `max_files` patches, `max_lines` lines or `max_bytes` bytes, the files after
that are `collapsed` with an empty diff; at most `max_listed` files are listed at all. Rename
detection reads every blob, so it runs only on small diffs. A comparison's merge base and commit
list come from git with a deadline, and say `timed_out` instead of hanging.

Paths in, plain data out; no imports of the app.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import pygit2

from .repo import CommitInfo, commit_info, open_repository, resolve

MIB = 1024 * 1024


@dataclass(frozen=True)
class DiffLimits:
    max_blob_bytes: int = MIB
    max_patch_bytes: int = 100_000
    max_files: int = 1000
    max_lines: int = 50_000
    max_bytes: int = 5_000_000
    max_listed: int = 5000
    rename_max_files: int = 1000
    rename_max_bytes: int = 16 * MIB
    compare_seconds: float = 10.0


LIMITS = DiffLimits()


@dataclass(frozen=True)
class FileDiff:
    """One changed file (GitLab's RepoDiff): paths, octal modes, flags and the patch text."""

    old_path: str
    new_path: str
    a_mode: str
    b_mode: str
    diff: str
    new_file: bool
    renamed_file: bool
    deleted_file: bool
    too_large: bool = False
    collapsed: bool = False


@dataclass(frozen=True)
class Comparison:
    head: CommitInfo | None
    commits: list[CommitInfo]  # oldest first
    diffs: list[FileDiff]
    timed_out: bool = False


_HEADER_LINES = ("diff --git ", "index ", "old mode ", "new mode ", "new file mode ", "deleted file mode ",
                 "similarity index ", "dissimilarity index ", "rename from ", "rename to ", "copy from ", "copy to ")


def _without_headers(patch: str) -> str:
    """Like GitLab, the patch without its `diff --git`/`index`/mode lines: from `---` on, or the
    `Binary files ... differ` line, or nothing for a pure rename or mode change."""
    start = 0
    while patch.startswith(_HEADER_LINES, start):
        end = patch.find("\n", start)
        if end < 0:
            return ""
        start = end + 1
    return patch[start:]


def _blob_size(odb: pygit2.Odb, file: pygit2.DiffFile) -> int:
    """The blob's size from its object header (the blob is not loaded); 0 for no blob or a submodule."""
    if file.id.raw == bytes(20) or file.mode == pygit2.enums.FileMode.COMMIT:
        return 0
    try:
        return odb.read_header(file.id)[1]
    except (KeyError, pygit2.GitError):
        return 0


def _entry(delta: pygit2.DiffDelta, diff: str = "", too_large: bool = False, collapsed: bool = False) -> FileDiff:
    status = delta.status_char()
    return FileDiff(
        old_path=delta.old_file.path,
        new_path=delta.new_file.path,
        a_mode=f"{delta.old_file.mode:o}" if delta.old_file.mode else "0",
        b_mode=f"{delta.new_file.mode:o}" if delta.new_file.mode else "0",
        diff=diff,
        new_file=status == "A",
        renamed_file=status == "R",
        deleted_file=status == "D",
        too_large=too_large,
        collapsed=collapsed,
    )


class _Budget:
    """What one response may still render."""

    def __init__(self, limits: DiffLimits):
        self.files, self.lines, self.bytes = limits.max_files, limits.max_lines, limits.max_bytes

    @property
    def spent(self) -> bool:
        return self.files <= 0 or self.lines <= 0 or self.bytes <= 0

    def spend(self, text: str) -> None:
        self.files -= 1
        self.lines -= text.count("\n")
        self.bytes -= len(text)


class _Sizes:
    """Blob sizes from object headers, each blob asked once."""

    def __init__(self, odb: pygit2.Odb):
        self.odb, self.known = odb, {}

    def of(self, delta: pygit2.DiffDelta) -> int:
        return max(self._blob(delta.old_file), self._blob(delta.new_file))

    def _blob(self, file: pygit2.DiffFile) -> int:
        key = file.id.raw
        if key not in self.known:
            self.known[key] = _blob_size(self.odb, file)
        return self.known[key]


def _patch_within(diff: pygit2.Diff, index: int, max_bytes: int) -> str | None:
    """The file's patch without headers, or None if it is over MAX_BYTES (refused before it is split
    into lines when the whole text already is)."""
    whole = diff[index].text or ""
    if len(whole) > max_bytes:
        return None
    return _within(_without_headers(whole), max_bytes)


def _within(text: str, max_bytes: int) -> str | None:
    return text if len(text) <= max_bytes and len(text.encode()) <= max_bytes else None


def _all_patches(diff: pygit2.Diff) -> list[str] | None:
    """Every file's patch from one render of the whole diff (one call instead of a Python object
    per file), split where a line starts a file's header; None when that does not give one patch
    per file (then each is rendered alone)."""
    whole = diff.patch or ""
    if not whole.startswith("diff --git "):
        return None
    parts = whole.split("\ndiff --git ")
    if len(parts) != len(diff):
        return None
    if len(parts) == 1:
        return [whole]
    # Each split took the newline before the next header from the part before it; the last keeps the end.
    return [parts[0] + "\n", *("diff --git " + part + "\n" for part in parts[1:-1]), "diff --git " + parts[-1]]


def file_diffs(repository: pygit2.Repository, diff: pygit2.Diff, limits: DiffLimits | None = None) -> list[FileDiff]:
    """The files of DIFF within LIMITS (default `LIMITS`), in git's order."""
    limits = limits or LIMITS
    sizes = _Sizes(repository.odb)
    small = len(diff) <= limits.rename_max_files
    total = sum(sizes.of(delta) for delta in diff.deltas) if small else None
    if small and total <= limits.rename_max_bytes:
        diff.find_similar()
    # A diff whose blobs are each within max_blob_bytes and together within max_bytes is rendered
    # whole at once (what the files one by one would render, about): one call instead of one per file.
    at_once = small and total <= limits.max_bytes and len(diff) <= limits.max_listed
    at_once = at_once and all(sizes.of(delta) <= limits.max_blob_bytes for delta in diff.deltas)
    patches = _all_patches(diff) if at_once else None
    budget, found = _Budget(limits), []
    for index, delta in enumerate(islice(diff.deltas, limits.max_listed)):
        if budget.spent:
            found.append(_entry(delta, collapsed=True))
        elif sizes.of(delta) > limits.max_blob_bytes:
            found.append(_entry(delta, too_large=True))
        else:
            if patches is not None:
                text = _within(_without_headers(patches[index]), limits.max_patch_bytes)
            else:
                text = _patch_within(diff, index, limits.max_patch_bytes)
            if text is None:
                found.append(_entry(delta, too_large=True))
            else:
                budget.spend(text)
                found.append(_entry(delta, text))
    return found


def commit_diff(path: Path, sha: str, limits: DiffLimits | None = None) -> list[FileDiff]:
    """What the commit SHA changed against its first parent (everything, for a root commit)."""
    repository = open_repository(path)
    found = resolve(repository, sha)
    if found.parents:
        return file_diffs(repository, repository.diff(found.parents[0], found), limits)
    return file_diffs(repository, found.tree.diff_to_tree(swap=True), limits)


class _TimedOut(Exception):
    pass


def _git(path: Path, deadline: float, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "--git-dir", str(path), *args], capture_output=True, text=True,
                              timeout=deadline, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise _TimedOut() from None


def compare(path: Path, base: str, head: str, limit: int = 1000, limits: DiffLimits | None = None) -> Comparison:
    """The commits on HEAD since it left BASE (at most LIMIT) and the diff from their merge base to
    HEAD (git's `base...head`). Git sees only commit ids; past the deadline the comparison is empty
    and says so."""
    limits = limits or LIMITS
    repository = open_repository(path)
    base_commit, head_commit = resolve(repository, base), resolve(repository, head)
    base_id, head_id = str(base_commit.id), str(head_commit.id)
    try:
        merged = _git(path, limits.compare_seconds, "merge-base", "--end-of-options", base_id, head_id).stdout.strip()
        listed = _git(path, limits.compare_seconds, "rev-list", "--topo-order", f"--max-count={limit}",
                      "--end-of-options", head_id, f"^{base_id}", "--")  # fmt: skip
    except _TimedOut:
        return Comparison(commit_info(head_commit), [], [], timed_out=True)
    newest = [commit_info(repository[pygit2.Oid(hex=line)]) for line in listed.stdout.split()]
    start = repository[pygit2.Oid(hex=merged)] if merged else None
    diff = repository.diff(start, head_commit) if start is not None else head_commit.tree.diff_to_tree(swap=True)
    return Comparison(commit_info(head_commit), list(reversed(newest)), file_diffs(repository, diff, limits))


_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_LINE_TYPES = {"+": "new", "-": "old"}


def line_position(patch: str, new_line: int, line_type: str) -> tuple[int, int] | None:
    """(old, new) position of the LINE_TYPE line (`new`: added, `old`: removed) of PATCH whose new-side
    position is NEW_LINE, numbered as GitLab 8's diff parser numbered them (a removed line's new-side
    position is that of the next line); None when PATCH has no such line."""
    old = new = 0
    in_hunk = False
    for text in patch.split("\n"):
        hunk = _HUNK.match(text)
        if hunk:
            old, new, in_hunk = int(hunk[1]), int(hunk[2]), True
            continue
        if not in_hunk or not text or text.startswith("\\"):
            continue
        kind = _LINE_TYPES.get(text[0])  # None: a context line
        if kind == line_type and new == new_line:
            return old, new
        if kind != "new":
            old += 1
        if kind != "old":
            new += 1
    return None
