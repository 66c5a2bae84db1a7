"""Repository archives cached on disk, built a bounded number at a time.

An archive is `<cache dir>/<project id>/<name>.<extension>`, where the name holds the project's
path and the commit id: a commit's tree never changes, so an entry is valid until it is pruned.
At most `builds` run at once and `queue` more wait for a slot; beyond that a request gets 503 with
Retry-After. Requests for an archive being built wait on that one build. After each build, entries
unused for `unused_seconds` go, then the least recently used until the cache fits `max_bytes`.

The bookkeeping lives on the event loop (no locks: it only changes between awaits); builds run in
worker threads.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from collections import deque
from pathlib import Path
from typing import BinaryIO

from starlette.concurrency import run_in_threadpool

from ..errors import CodeyardError, Unavailable
from ..git import archives

log = logging.getLogger("codeyard.archives")
RETRY_AFTER = "10"


class ArchiveBusy(Unavailable):
    def __init__(self):
        super().__init__("503 Too many archives are being generated, try again later", {"Retry-After": RETRY_AFTER})


class ArchiveFailed(CodeyardError):
    default_message = "500 The archive could not be generated"


class ArchiveCache:
    def __init__(self, root: Path, max_bytes: int, builds: int = 2, queue: int = 10,
                 unused_seconds: float = 2 * 3600, build_seconds: float = 600):  # fmt: skip
        self.root, self.max_bytes = root, max_bytes
        self.builds, self.queue = builds, queue
        self.unused_seconds, self.build_seconds = unused_seconds, build_seconds
        self._pending: dict[Path, asyncio.Task] = {}
        self._running = 0
        self._waiting: deque[asyncio.Future] = deque()

    def path(self, project_id: int, file_name: str) -> Path:
        return self.root / str(project_id) / file_name

    async def open(self, repository: Path, project_id: int, sha: str, git_format: str, prefix: str,
                   file_name: str) -> BinaryIO:  # fmt: skip
        """The archive's file, open for reading, built first if it is not cached; ArchiveBusy if too
        many builds already wait. Open, it stays readable even if pruned meanwhile."""
        target = self.path(project_id, file_name)
        for _ in range(3):  # a build pruned before it could be opened (a tiny cache) is built again
            handle = _open_used(target)
            if handle is not None:
                return handle
            pending = self._pending.get(target)
            if pending is None:
                if self._running >= self.builds and len(self._waiting) >= self.queue:
                    raise ArchiveBusy()
                pending = asyncio.ensure_future(self._build(repository, sha, git_format, prefix, target))
                self._pending[target] = pending
                pending.add_done_callback(self._done)
            await asyncio.shield(pending)  # a client that goes away does not stop the build others wait on
        raise ArchiveFailed()

    def _done(self, task: asyncio.Task) -> None:
        self._pending = {target: pending for target, pending in self._pending.items() if pending is not task}
        if not task.cancelled():
            task.exception()  # retrieved here too, for a build whose clients all went away

    async def _build(self, repository: Path, sha: str, git_format: str, prefix: str, target: Path) -> None:
        await self._slot()
        try:
            started = time.monotonic()
            await run_in_threadpool(archives.build, repository, sha, git_format, prefix, target, self.build_seconds)
            log.info("built %s in %.2f s", target.name, time.monotonic() - started)
        except archives.ArchiveFailed as error:
            log.error("%s", error)
            raise ArchiveFailed() from None
        finally:
            self._release()
        await run_in_threadpool(self.prune, target)

    async def _slot(self) -> None:
        if self._running < self.builds:
            self._running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        await turn  # _release hands its slot over: the count stays

    def _release(self) -> None:
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self._running -= 1

    def prune(self, keep: Path | None = None) -> None:
        """Drop entries unused for `unused_seconds` (and temporary files of builds long dead), then
        the least recently used until the cache fits `max_bytes`; never KEEP, the archive just built."""
        now, kept = time.time(), []
        for entry in self.root.glob("*/*"):
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            temporary = entry.name.endswith(archives.TEMP_SUFFIX)
            if now - stat.st_mtime > (self.build_seconds * 2 if temporary else self.unused_seconds):
                entry.unlink(missing_ok=True)
            elif not temporary and entry != keep:
                kept.append((stat.st_mtime, stat.st_size, entry))
        total = sum(size for _, size, _ in kept)
        for _, size, entry in sorted(kept):
            if total <= self.max_bytes:
                break
            entry.unlink(missing_ok=True)
            total -= size

    def remove_project(self, project_id: int) -> None:
        shutil.rmtree(self.root / str(project_id), ignore_errors=True)


def _open_used(target: Path) -> BinaryIO | None:
    """The cached archive, open and marked as used now (its mtime orders pruning); None if not cached."""
    try:
        os.utime(target)
        return open(target, "rb")
    except FileNotFoundError:
        return None
