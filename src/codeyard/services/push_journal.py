"""A push's journal: which refs git moved, on disk before git answers the client, until the push is
recorded; and the recovery of pushes whose server died before recording them.

A push over HTTP moves refs in `git receive-pack`; its follow-up (`pushes.post_push`: events,
webhook jobs, the merge request refresh job, pipelines, the default branch) is recorded after git
exits, by the server process. A server that dies in between (crash, kill -9, OOM, restart) would
leave the refs moved and the follow-up lost. So:

1. before starting git, the server creates the journal `<data dir>/push-journal/<push id>.push`,
   first line `codeyard-push <push id> <project id> <user id>`, synced with its directory, and holds
   an exclusive `flock` on it (git inherits the descriptor: the lock lasts while the server or git
   lives). It is made under a temporary name and renamed once locked, so no one sees it unlocked;
2. git's reference-transaction hook (githooks) appends `<old> <new> <ref>` to it as each ref
   transaction commits, synced before receive-pack goes on to report to the client;
3. the server records the push: the push id into `recorded_pushes` and `post_push`, in one
   transaction; then removes the journal;
4. `recover` takes every journal whose lock it gets (its server and git are gone) and does step 3
   for it, unless its push id is recorded already (the server died between commit and removal).
   `codeyard serve` runs it before serving, the job worker every few seconds.

The branches and files API move refs themselves, inside a request's transaction: they open a
journal before moving the ref (`for_ref_moves`), append the update once moved and record it in the
request's transaction (`record_moved`); the commit removes the journal, a rollback leaves it to
recovery when a ref moved (it stays moved), and a process that dies leaves it too.

Lines are merged per ref (the first old value, the last new one); lines of refs a push may not name
(HEAD, which git reports when it follows the pushed branch) and lines that change nothing (the
packed-refs side of a deletion) are left out.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import os
import re
import secrets
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import delete
from sqlalchemy.orm import Session

from .. import datadir
from ..db.hooks import on_commit, on_rollback
from ..db.models import Project, RecordedPush, User, utcnow
from ..git.refs import acceptable_ref
from . import pushes
from .ref_updates import RefUpdate

log = logging.getLogger("codeyard.pushes")

SUFFIX = ".push"
TEMPORARY = ".part"
MAGIC = "codeyard-push"
KEEP_RECORDED = dt.timedelta(days=1)  # recorded push ids kept this long (recovery runs at every start)
STALE_TEMPORARY = 60.0  # seconds after which an unlocked, never-renamed journal is removed
RETRY_AFTER = 60.0  # seconds before recovery tries again a journal it failed to record
_LINE = re.compile(r"([0-9a-f]{40}) ([0-9a-f]{40}) (refs/\S+)")
_PUSH_ID = re.compile(r"[0-9a-f]{32}")


def directory(config) -> Path:
    return config.data_dir / "push-journal"


@dataclass(frozen=True)
class Header:
    push_id: str
    project_id: int
    user_id: int


class Journal:
    """An open journal, locked by this process until `finish` (recorded: removed) or `release`
    (left for `recover`)."""

    def __init__(self, path: Path, fd: int, header: Header):
        self.path = path
        self.fd = fd
        self.header = header
        self._close = weakref.finalize(self, os.close, fd)  # once, even when dropped unreleased

    @classmethod
    def create(cls, config, project_id: int, user_id: int) -> Journal:
        folder = datadir.private_dir(directory(config))
        header = Header(secrets.token_hex(16), project_id, user_id)
        temporary = folder / f"{header.push_id}{TEMPORARY}"
        fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, f"{MAGIC} {header.push_id} {project_id} {user_id}\n".encode())
            os.fsync(fd)
            path = folder / f"{header.push_id}{SUFFIX}"
            os.rename(temporary, path)
            _sync_directory(folder)
        except BaseException:
            os.close(fd)
            temporary.unlink(missing_ok=True)
            raise
        return cls(path, fd, header)

    def updates(self) -> list[RefUpdate]:
        return parse(_read(self.fd))[1]

    def append(self, updates: list[RefUpdate]) -> None:
        """Journal refs this process moved (as the hook does for git's), synced to disk."""
        os.write(self.fd, "".join(f"{u.before} {u.after} {u.ref}\n" for u in updates).encode())
        os.fsync(self.fd)

    def finish(self) -> None:
        """The push is recorded: remove the journal, then let go of it."""
        self.path.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        """Let go of the journal, leaving the file (if any) to `recover`."""
        self._close()
        self.fd = -1

    def settle(self) -> None:
        """Remove the journal when no ref moved, else leave it to `recover`."""
        if self.fd >= 0 and not self.updates():
            self.finish()
        else:
            self.release()


def parse(text: str) -> tuple[Header | None, list[RefUpdate]]:
    """The header and the merged ref updates of a journal's TEXT (a torn last line is left out)."""
    lines = text.split("\n")
    fields = lines[0].split(" ")
    if len(fields) != 4 or fields[0] != MAGIC or not _PUSH_ID.fullmatch(fields[1]) or not all(
        field.isascii() and field.isdigit() for field in fields[2:]
    ):
        return None, []
    merged: dict[str, tuple[str, str]] = {}
    for line in lines[1:]:
        match = _LINE.fullmatch(line)
        if match is None:
            continue
        before, after, ref = match.groups()
        if before == after or not acceptable_ref(ref):
            continue
        merged[ref] = (merged[ref][0] if ref in merged else before, after)
    updates = [RefUpdate(ref, before, after) for ref, (before, after) in merged.items() if before != after]
    return Header(fields[1], int(fields[2]), int(fields[3])), updates


def record(session: Session, rt, header: Header, updates: list[RefUpdate]) -> bool:
    """Record the push in SESSION's transaction, unless it is recorded already; whether it was now."""
    if session.get(RecordedPush, header.push_id) is not None:
        return False
    session.execute(delete(RecordedPush).where(RecordedPush.recorded_at < utcnow() - KEEP_RECORDED))
    session.add(RecordedPush(push_id=header.push_id))
    session.flush()
    project = session.get(Project, header.project_id)
    pusher = session.get(User, header.user_id)
    if project is not None and pusher is not None:
        pushes.post_push(session, rt, project, pusher, updates)
    return True


def for_ref_moves(session: Session, rt, project_id: int, user_id: int) -> Journal:
    """A journal for refs this process moves inside SESSION's transaction; open it before moving
    one. Removed when the transaction commits, left to recovery when it rolls back after a move."""
    journal = Journal.create(rt.config, project_id, user_id)
    on_commit(session, journal.finish)
    on_rollback(session, journal.settle)
    return journal


def record_moved(session: Session, rt, journal: Journal, updates: list[RefUpdate]) -> None:
    """The refs moved: journal them, then record the push in SESSION's transaction."""
    journal.append(updates)
    record(session, rt, journal.header, updates)


def record_journal(rt, journal: Journal) -> None:
    """After git has exited: record the journal's push and remove the journal. A failure is logged
    and leaves the journal to `recover`; it never fails the push."""
    try:
        updates = journal.updates()
        if updates:
            with rt.db.transaction() as session:
                record(session, rt, journal.header, updates)
    except Exception:
        log.exception("recording push %s to project %s failed; it is left to recovery", journal.header.push_id, journal.header.project_id)
        journal.release()
    else:
        journal.finish()


_retry_at: dict[str, float] = {}  # journals this process failed to record, and when to try again


def recover(rt) -> int:
    """Record the pushes of every journal no live server or git holds; the number recorded now."""
    folder = directory(rt.config)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return 0
    recorded = 0
    for name in names:
        if name.endswith(SUFFIX) and _retry_at.get(name, 0.0) <= time.monotonic():
            recorded += _recover_one(rt, folder / name)
        elif name.endswith(TEMPORARY):
            _remove_stale(folder / name)
    return recorded


def _recover_one(rt, path: Path) -> bool:
    fd = _locked(path)
    if fd is None:
        return False  # its server (or git) still runs, or it is gone
    try:
        header, updates = parse(_read(fd))
        done = False
        if header is not None and updates:
            with rt.db.transaction() as session:
                done = record(session, rt, header, updates)
        if done:
            log.warning("recorded push %s to project %s after its server ended", header.push_id, header.project_id)
        path.unlink(missing_ok=True)
        _retry_at.pop(path.name, None)
        return done
    except Exception:
        log.exception("recovering push journal %s failed; trying again in %ss", path.name, RETRY_AFTER)
        _retry_at[path.name] = time.monotonic() + RETRY_AFTER
        return False
    finally:
        os.close(fd)


def _locked(path: Path) -> int | None:
    """A descriptor of PATH holding its lock, or None when another holds it or the file is gone
    (also when it was removed between opening and locking: its push is recorded)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_nlink > 0:
            return fd
    except BlockingIOError:
        pass
    os.close(fd)
    return None


def _remove_stale(path: Path) -> None:
    """A journal whose server died before naming it: git never ran for it."""
    fd = _locked(path)
    if fd is None:
        return
    try:
        if time.time() - os.fstat(fd).st_mtime > STALE_TEMPORARY:
            path.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _read(fd: int) -> str:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 16, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _sync_directory(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
