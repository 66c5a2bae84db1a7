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

import contextlib
import fcntl
import os
import re
import select
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

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


@dataclass(slots=True)
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
    diffs: list  # FileDiff, or what the comparison's `shape` made of each
    timed_out: bool = False


# What a caller makes of each FileDiff as it is rendered (in the thread that reads git), or None.
Shape = Callable[[FileDiff], Any] | None


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


def _patch(diff: pygit2.Diff, index: int) -> str:
    """The file's patch with its headers."""
    return diff[index].text or ""


def _within(text: str, max_bytes: int) -> str | None:
    return text if len(text) <= max_bytes and (text.isascii() or len(text.encode()) <= max_bytes) else None


def _one(budget: _Budget, limits: DiffLimits, delta: pygit2.DiffDelta, size: int, patch: str | None) -> FileDiff:
    """One file of a diff rendered by libgit2, within the limits: the budget, its blob SIZE and the
    length of PATCH (its text with headers, None when already known to be too long), in that order."""
    if budget.spent:
        return _entry(delta, collapsed=True)
    if size > limits.max_blob_bytes:
        return _entry(delta, too_large=True)
    text = None if patch is None else _within(_without_headers(patch), limits.max_patch_bytes)
    if text is None:
        return _entry(delta, too_large=True)
    budget.spend(text)
    return _entry(delta, text)


def _by_libgit2(repository: pygit2.Repository, diff: pygit2.Diff, limits: DiffLimits, renames: bool) -> list[FileDiff]:
    """File by file: sizes first, then each patch alone (rendered only while the budget lasts)."""
    sizes, budget = _Sizes(repository.odb), _Budget(limits)
    if renames:
        diff.find_similar()
    found = []
    for index, delta in enumerate(islice(diff.deltas, limits.max_listed)):
        size = sizes.of(delta)
        patch = None if budget.spent or size > limits.max_blob_bytes else _patch(diff, index)
        found.append(_one(budget, limits, delta, size, patch))
    return found


# --- one `git diff` for the whole diff --------------------------------------------------------------

# What git prints is fixed here whatever the configuration (libgit2's defaults: Myers, three lines of
# context, no indent heuristic, a/ and b/ prefixes, quoted paths), and a blob over max_blob_bytes is
# never loaded (`core.bigFileThreshold`: git says "Binary files ... differ" from its size alone).
_GIT_DIFF = ("-c", "core.quotePath=true", "-c", "diff.suppressBlankEmpty=false", "diff", "--raw", "-z", "--patch",
             "--no-abbrev", "--no-color", "--no-ext-diff", "--no-textconv", "--no-indent-heuristic",
             "--diff-algorithm=myers", "--unified=3", "--inter-hunk-context=0", "--src-prefix=a/",
             "--dst-prefix=b/", "--ignore-submodules=none", "--no-relative")  # fmt: skip
_NO_USER_CONFIG = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
_CHUNK = 256 * 1024


def _block_buffered() -> dict[str, str]:
    """Git writes its output through stdio, whose buffer for a pipe is one page: a 1 MB diff is 250
    writes, and the pipe's wake-ups cost git about a tenth of its time. coreutils' `stdbuf` library,
    preloaded, gives stdout a 64 KiB buffer instead (what `stdbuf -o` does, without its process).
    Nothing when the library is not where coreutils puts it."""
    for directory in ("/usr/libexec/coreutils", "/usr/lib/coreutils", "/usr/lib64/coreutils",
                      "/usr/local/libexec/coreutils"):  # fmt: skip
        library = os.path.join(directory, "libstdbuf.so")
        if os.path.isfile(library):
            return {"LD_PRELOAD": library, "_STDBUF_O": str(64 * 1024)}
    return {}


_GIT_OUTPUT_ENV = {**_NO_USER_CONFIG, **_block_buffered()}


# A record of `git diff --raw -z`: old path, new path, old mode, new mode (libgit2's octal text),
# old blob id, new blob id (hex), status letter.
_Raw = tuple[str, str, str, str, str, str, str]


def _raw_records(out: bytearray) -> tuple[list[_Raw], int]:
    """The records at the start of `git diff --raw -z --patch` output, and where the patches start
    (after the NUL that ends the records: the only empty field). Raises ValueError or IndexError
    when OUT is not that. The records are decoded at once (a NUL ends any broken UTF-8 sequence, so
    each path decodes as it would alone); a mode loses its leading zeros, as libgit2 writes it."""
    if not out.startswith(b":"):
        return [], 0
    end = out.index(b"\0\0")
    fields, found = iter(out[:end].decode("utf-8", "replace").split("\0")), []
    try:
        for meta in fields:
            if not meta.startswith(":"):
                raise ValueError("not a raw record")
            old_mode, new_mode, old_id, new_id, status = meta[1:].split(" ")
            old_path = next(fields)
            new_path = next(fields) if status[:1] in ("R", "C") else old_path
            found.append((old_path, new_path, old_mode.lstrip("0") or "0", new_mode.lstrip("0") or "0", old_id,
                          new_id, status[0]))  # fmt: skip
    except StopIteration:
        raise ValueError("a raw record cut short") from None
    return found, end + 2


def _spawned(command: list[str]) -> subprocess.Popen:
    """`git diff` COMMAND started, its output on a pipe that `_git_output` reads."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env={**os.environ, **_GIT_OUTPUT_ENV})  # fmt: skip
    with contextlib.suppress(OSError):  # git need not wait while a chunk is rendered
        fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, _CHUNK)
    return process


def _git_output(process: subprocess.Popen, cap: int, deadline: float, consume: Callable[[bytes], None]) -> bool:
    """Feed the standard output of PROCESS (`_spawned`) to CONSUME as it comes; False past CAP bytes,
    past DEADLINE seconds or on failure (git is killed: it never writes more than the pipe holds past
    the cap, nor goes on when CONSUME raises)."""
    end, pipe = time.monotonic() + deadline, process.stdout.fileno()
    waiting = select.poll()  # the deadline, without a timer thread per process
    waiting.register(pipe, select.POLLIN)
    try:
        size = 0
        while size <= cap:
            left = end - time.monotonic()
            if left <= 0 or not waiting.poll(left * 1000):
                return False
            chunk = os.read(pipe, _CHUNK)
            if not chunk:
                break
            size += len(chunk)
            consume(chunk)
        return size <= cap and process.wait(max(end - time.monotonic(), 0)) == 0
    except subprocess.TimeoutExpired:
        return False
    finally:
        _ended(process)


def _ended(process: subprocess.Popen) -> None:
    """PROCESS killed if it still runs, its pipes closed and its exit collected."""
    if process.poll() is None:
        process.kill()
    with process:
        pass


_FILE_START = b"\ndiff --git "


class _GitPatches:
    """`git diff --raw -z --patch` output taken as it comes: the raw records once they are whole, then
    each file's patch rendered within the limits as soon as the next file's header arrives, so Python
    renders while git still diffs. The output stays bytes: a file's patch is found with `find`, and
    only the text from its `---` or `Binary files` line on is decoded, once. Raises ValueError or
    IndexError when the output is not that: not one patch per record, in order."""

    def __init__(self, repository: pygit2.Repository, limits: DiffLimits,
                 admit: Callable[[list[_Raw]], None] = lambda records: None, shape: Shape = None):  # fmt: skip
        self.odb, self.limits, self.budget, self.admit = repository.odb, limits, _Budget(limits), admit
        self.out = bytearray()  # what git wrote and was not rendered yet: the records, then a file's patch on
        self.records: list[_Raw] | None = None
        self.scan = 0  # where the next file's header may begin in `out`
        self.found: list = []
        self.keep = self.found.append if shape is None else lambda found: self.found.append(shape(found))

    def feed(self, chunk: bytes) -> None:
        out = self.out
        out += chunk
        if self.records is None:
            if out.startswith(b":") and out.find(b"\0\0", max(0, len(out) - len(chunk) - 1)) < 0:
                return
            self._take_records()
        start = 0
        while (at := out.find(_FILE_START, self.scan)) >= 0:
            self._render(start, at + 1)
            start = self.scan = at + 1
        del out[:start]  # CPython moves the start of a bytearray cut at its front; nothing is copied
        self.scan = max(0, len(out) - len(_FILE_START) + 1)

    def finish(self) -> list:
        if self.records is None:  # no end of the records: only an empty output is understood
            self._take_records()
        if self.out:
            self._render(0, len(self.out))
        if len(self.found) != len(self.records):
            raise ValueError("not one patch per file")
        return self.found

    def _take_records(self) -> None:
        self.records, start = _raw_records(self.out)
        self.admit(self.records)
        del self.out[:start]

    def _render(self, start: int, end: int) -> None:
        """The file whose patch is `out[start:end]` (the per-file work of a diff: kept to a few calls)."""
        raw, out, budget, limit = self.records[len(self.found)], self.out, self.budget, self.limits.max_patch_bytes
        if not out.startswith(b"diff --git ", start):
            raise ValueError("not a patch")
        if budget.spent:
            self.keep(_git_entry(raw, "", False, True))
            return
        body = out.find(b"\n--- ", start, end)
        if body < 0:
            body = out.find(b"\nBinary files ", start, end)
        if body < 0:  # headers only (a rename, a mode change, an empty file)
            text = _without_headers(out[start:end].decode("utf-8", "replace"))
        elif end - body - 3 > limit:  # even decoded and without the tabs it might have, too long
            text = None
        else:
            text = out[body + 1 : end].decode("utf-8", "replace")
        if text is not None:
            if not text or " " in raw[0] or " " in raw[1]:  # git's text differs from libgit2's only then
                text = _as_libgit2(text, raw)
            text = _within(text, limit)
        if text is not None and text.startswith("Binary files "):
            text = None if _larger_blob(self.odb, raw) > self.limits.max_blob_bytes else text
        if text is None:
            self.keep(_git_entry(raw, "", True, False))
        else:
            budget.spend(text)
            self.keep(_git_entry(raw, text, False, False))


def _git_diff(repository: pygit2.Repository, limits: DiffLimits, renames: bool, *revisions: str) -> list[str]:
    return ["git", "--git-dir", repository.path, "-c", f"core.bigFileThreshold={limits.max_blob_bytes}", *_GIT_DIFF,
            "-M" if renames else "--no-renames", "--end-of-options", *revisions, "--"]  # fmt: skip


def _rendered(process: subprocess.Popen, patches: _GitPatches, cap: int, limits: DiffLimits) -> list | None:
    try:
        return patches.finish() if _git_output(process, cap, limits.compare_seconds, patches.feed) else None
    except (ValueError, IndexError):
        return None


def _by_git(repository: pygit2.Repository, ids: tuple[str, str], count: int, limits: DiffLimits,
            renames: bool) -> list[FileDiff] | None:  # fmt: skip
    """The COUNT files (before renames pair them) from IDS[0] to IDS[1] rendered by one `git diff`
    and split per file; None when git fails, is too slow or too long, or does not give one patch
    per file (a type change is two)."""
    cap = 2 * limits.max_bytes + count * 1024 + 65536
    return _rendered(_spawned(_git_diff(repository, limits, renames, *ids)), _GitPatches(repository, limits), cap,
                     limits)  # fmt: skip


class _WithRenames(Exception):
    pass


def _range_diff(repository: pygit2.Repository, base_id: str, head_id: str, limits: DiffLimits,
                renames: bool) -> subprocess.Popen:  # fmt: skip
    return _spawned(_git_diff(repository, limits, renames, f"{base_id}...{head_id}"))


def _by_git_range(repository: pygit2.Repository, base_id: str, head_id: str, limits: DiffLimits,
                  first: subprocess.Popen, shape: Shape = None) -> list | None:  # fmt: skip
    """From the merge base of BASE_ID and HEAD_ID to HEAD_ID, rendered by one `git diff base...head`
    (git finds the merge base itself: no process of its own), FIRST: that diff without renames,
    already started by `_range_diff`. The records, which git writes before any patch, say whether
    it may: None past max_files files (libgit2 renders those) and when git fails. Renames to detect
    (`_renames`' rule, on the records) mean a second `git diff`, with -M. SHAPE: see `started_compare`."""
    files = min(limits.max_files, limits.max_listed)

    def admit(records: list[_Raw], renames: bool) -> None:
        if len(records) > files:
            raise ValueError("more files than git renders here")
        if not renames and _raw_renames(repository.odb, records, limits):
            raise _WithRenames()

    cap = 2 * limits.max_bytes + files * 1024 + 65536
    for renames in (False, True):
        patches = _GitPatches(repository, limits, lambda records, renames=renames: admit(records, renames), shape)
        process = _range_diff(repository, base_id, head_id, limits, renames) if renames else first
        try:
            return _rendered(process, patches, cap, limits)
        except _WithRenames:
            continue
    return None


def _raw_renames(odb: pygit2.Odb, records: list[_Raw], limits: DiffLimits) -> bool:
    """`_renames` on the records of a diff without renames."""
    if len(records) > limits.rename_max_files:
        return False
    statuses = {raw[6] for raw in records}
    if not ("A" in statuses and "D" in statuses):
        return False
    return sum(_larger_blob(odb, raw) for raw in records) <= limits.rename_max_bytes


_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"}


def _quoted(name: str) -> str:
    """NAME as git and libgit2 write it in a patch: in double quotes, C escapes and octal bytes, when it
    has a control character, a quote, a backslash or a byte past ASCII."""
    raw = name.encode("utf-8", "surrogateescape")
    if all(32 <= byte < 127 and byte not in (34, 92) for byte in raw):
        return name
    return '"' + "".join(_ESCAPES.get(b) or (chr(b) if 32 <= b < 127 else f"\\{b:03o}") for b in raw) + '"'


def _as_libgit2(text: str, raw: _Raw) -> str:
    """Git's patch text as libgit2 writes it: no tab after a file name with a space in the `---` and
    `+++` lines, and those lines even for an empty file added or deleted."""
    if text.startswith("--- "):
        first = text.find("\n")
        second = text.find("\n", first + 1)
        if text[first - 1] == "\t" or text[second - 1] == "\t":
            first, second, rest = text.split("\n", 2)
            text = f"{first.removesuffix(chr(9))}\n{second.removesuffix(chr(9))}\n{rest}"
    elif not text and raw[6] == "A":
        text = f"--- /dev/null\n+++ {_quoted('b/' + raw[1])}\n"
    elif not text and raw[6] == "D":
        text = f"--- {_quoted('a/' + raw[0])}\n+++ /dev/null\n"
    return text


def _larger_blob(odb: pygit2.Odb, raw: _Raw) -> int:
    sizes = [0]
    for blob, mode in ((raw[4], raw[2]), (raw[5], raw[3])):
        if blob.strip("0") and mode != "160000":
            with contextlib.suppress(KeyError, ValueError, pygit2.GitError):
                sizes.append(odb.read_header(pygit2.Oid(hex=blob))[1])
    return max(sizes)


def _git_entry(raw: _Raw, diff: str, too_large: bool, collapsed: bool) -> FileDiff:
    old_path, new_path, a_mode, b_mode, _, _, status = raw
    return FileDiff(old_path, new_path, a_mode, b_mode, diff, status == "A", status == "R", status == "D",
                    too_large, collapsed)  # fmt: skip


# The empty tree: the "parent" of a root commit (git knows it without storing it).
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _renames(repository: pygit2.Repository, diff: pygit2.Diff, limits: DiffLimits) -> bool:
    """Detect renames? Only in a diff of at most rename_max_files files whose blobs together are within
    rename_max_bytes (detection reads blobs), and only when a file was added and one deleted."""
    if len(diff) > limits.rename_max_files:
        return False
    statuses = {delta.status_char() for delta in diff.deltas}
    if not ("A" in statuses and "D" in statuses):
        return False
    sizes = _Sizes(repository.odb)
    return sum(sizes.of(delta) for delta in diff.deltas) <= limits.rename_max_bytes


def file_diffs(repository: pygit2.Repository, diff: pygit2.Diff, limits: DiffLimits | None = None,
               ids: tuple[str, str] | None = None) -> list[FileDiff]:  # fmt: skip
    """The files of DIFF within LIMITS (default `LIMITS`), in git's order. When its IDS (the commits or
    trees it goes between) are given and it has no more files than a response may render, one
    `git diff` renders it whole (much faster than libgit2 file by file); otherwise, or when that
    fails, libgit2 renders file by file."""
    limits = limits or LIMITS
    renames = _renames(repository, diff, limits)
    if ids is not None and len(diff) <= min(limits.max_files, limits.max_listed):
        found = _by_git(repository, ids, len(diff), limits, renames)
        if found is not None:
            return found
    return _by_libgit2(repository, diff, limits, renames)


def commit_diff(path: Path, sha: str, limits: DiffLimits | None = None) -> list[FileDiff]:
    """What the commit SHA changed against its first parent (everything, for a root commit)."""
    repository = open_repository(path)
    found = resolve(repository, sha)
    if found.parents:
        parent = found.parents[0]
        return file_diffs(repository, repository.diff(parent, found), limits, (str(parent.id), str(found.id)))
    return file_diffs(repository, found.tree.diff_to_tree(swap=True), limits, (EMPTY_TREE, str(found.id)))


class _TimedOut(Exception):
    pass


def _git(path: Path, deadline: float, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "--git-dir", str(path), *args], capture_output=True, text=True,
                              timeout=deadline, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise _TimedOut() from None


def _started(path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(["git", "--git-dir", str(path), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)  # fmt: skip


def _finished(process: subprocess.Popen, deadline: float) -> str:
    try:
        return process.communicate(timeout=max(deadline, 0))[0]
    except subprocess.TimeoutExpired:
        raise _TimedOut() from None


def compare(path: Path, base: str, head: str, limit: int = 1000, limits: DiffLimits | None = None, *,
            commits: bool = True, files: bool = True) -> Comparison:  # fmt: skip
    """The commits on HEAD since it left BASE (at most LIMIT) and the diff from their merge base to
    HEAD (git's `base...head`); only what COMMITS and FILES ask for (the other is empty). Git sees
    only commit ids; past the deadline the comparison is empty and says so. The commits are listed
    while the diff is rendered."""
    return started_compare(path, base, head, limit, limits, commits=commits, files=files)()


def started_compare(path: Path, base: str, head: str, limit: int = 1000, limits: DiffLimits | None = None, *,
                    commits: bool = True, files: bool = True, shape: Shape = None) -> Callable[[], Comparison]:  # fmt: skip
    """`compare` with its git processes started now: the function returned reads them, in this thread
    or another (each thread has its own handle on the repository), and must be called, since it is
    what ends them. With SHAPE, the comparison's `diffs` are SHAPE of each file, applied by that
    function as git's output is rendered (while git still works on the next files)."""
    limits = limits or LIMITS
    repository = open_repository(path)
    base_commit, head_commit = resolve(repository, base), resolve(repository, head)
    base_id, head_id, head_info = str(base_commit.id), str(head_commit.id), commit_info(head_commit)
    end = time.monotonic() + limits.compare_seconds
    diffing = _range_diff(repository, base_id, head_id, limits, False) if files else None
    listing = None
    try:
        if commits:
            listing = _started(path, "rev-list", "--topo-order", f"--max-count={limit}", "--end-of-options", head_id,
                               f"^{base_id}", "--")  # fmt: skip
    except BaseException:
        if diffing is not None:
            _ended(diffing)
        raise

    def finish() -> Comparison:
        repository = open_repository(path)
        try:
            found = _changes(repository, base_id, head_id, diffing, limits, shape) if diffing is not None else []
            listed = _finished(listing, end - time.monotonic()) if listing is not None else ""
        except _TimedOut:
            return Comparison(head_info, [], [], timed_out=True)
        finally:
            for process in (diffing, listing):
                if process is not None:
                    _ended(process)
        newest = [commit_info(repository[pygit2.Oid(hex=line)]) for line in listed.split()]
        return Comparison(head_info, list(reversed(newest)), found)

    return finish


def _changes(repository: pygit2.Repository, base_id: str, head_id: str, first: subprocess.Popen,
             limits: DiffLimits, shape: Shape) -> list:  # fmt: skip
    """The files changed from the merge base of BASE_ID and HEAD_ID to HEAD_ID (each SHAPE'd): by one
    `git diff` (FIRST, `_by_git_range`'s) when it can, else the merge base first (none: from
    nothing), then `file_diffs`."""
    found = _by_git_range(repository, base_id, head_id, limits, first, shape)
    if found is not None:
        return found
    merged = _git(Path(repository.path), limits.compare_seconds, "merge-base", "--end-of-options", base_id,
                  head_id).stdout.strip()  # fmt: skip
    head = repository[pygit2.Oid(hex=head_id)]
    start = repository[pygit2.Oid(hex=merged)] if merged else None
    diff = repository.diff(start, head) if start is not None else head.tree.diff_to_tree(swap=True)
    found = file_diffs(repository, diff, limits, (merged or EMPTY_TREE, head_id))
    return found if shape is None else [shape(change) for change in found]


_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_LINE_TYPES = {"+": "new", "-": "old"}


def numbered_lines(patch: str) -> Iterator[tuple[str | None, int, int]]:
    """(type, old, new) of each line of PATCH's hunks: its type (`new`: added, `old`: removed, None:
    context) and the old and new positions GitLab 8's diff parser gave it (an added line's old
    position and a removed line's new one are those of the next line on that side)."""
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
        yield kind, old, new
        if kind != "new":
            old += 1
        if kind != "old":
            new += 1


def line_position(patch: str, new_line: int, line_type: str) -> tuple[int, int] | None:
    """(old, new) position of the LINE_TYPE line (`new`: added, `old`: removed) of PATCH whose new-side
    position is NEW_LINE, numbered as GitLab 8's diff parser numbered them (a removed line's new-side
    position is that of the next line); None when PATCH has no such line."""
    for kind, old, new in numbered_lines(patch):
        if kind == line_type and new == new_line:
            return old, new
    return None
