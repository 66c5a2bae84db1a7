"""Build traces: one file per build, `<data>/builds/<project id>/<build id>.log`.

`Build.trace_size` says how much of the file is the trace. A replacement is written to a temporary
file and renamed over the old one; an append first cuts the file to the offset it was given (which
must be the recorded size) and then writes. So a transaction that rolls back after writing leaves
at most bytes past `trace_size`, which reads ignore and the next write cuts off: the file follows
the database. A trace holds at most MAX_SIZE bytes; a write beyond that is refused whole.
A project's traces go with the project (`remove_project`, after its deletion commits).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...db.models import Build
from ...errors import PayloadTooLarge

MAX_SIZE = 32 * 1024 * 1024
CHUNK = 1024 * 1024
TOO_LARGE = "413 Trace is too large"


class RangeMismatch(Exception):
    """An append did not start where the trace ends; `current_size` is where it does."""

    def __init__(self, current_size: int):
        super().__init__(f"the trace is {current_size} bytes long")
        self.current_size = current_size


def directory(rt, project_id: int) -> Path:
    return rt.config.data_dir / "builds" / str(project_id)


def path(rt, build: Build) -> Path:
    return directory(rt, build.project_id) / f"{build.id}.log"


def read(rt, build: Build) -> bytes:
    """The whole trace (empty when there is none)."""
    if not build.trace_size:
        return b""
    try:
        with path(rt, build).open("rb") as handle:
            return handle.read(build.trace_size)
    except FileNotFoundError:
        return b""


def replace(rt, build: Build, data: bytes) -> None:
    """Make DATA the whole trace."""
    if len(data) > MAX_SIZE:
        raise PayloadTooLarge(TOO_LARGE)
    target = path(rt, build)
    _ensure_directory(target.parent)
    temporary = target.with_name(f".{build.id}.{os.getpid()}.tmp")
    with _open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC) as handle:
        handle.write(data)
    os.replace(temporary, target)
    build.trace_size = len(data)


def append(rt, build: Build, offset: int, data: bytes) -> int:
    """Write DATA at OFFSET, which must be the trace's size; the new size."""
    if offset != build.trace_size:
        raise RangeMismatch(build.trace_size)
    if offset + len(data) > MAX_SIZE:
        raise PayloadTooLarge(TOO_LARGE)
    target = path(rt, build)
    _ensure_directory(target.parent)
    with _open(target, os.O_RDWR | os.O_CREAT) as handle:
        handle.truncate(offset)
        handle.seek(offset)
        handle.write(data)
    build.trace_size = offset + len(data)
    return build.trace_size


def remove(rt, build: Build) -> None:
    path(rt, build).unlink(missing_ok=True)


def remove_project(rt, project_id: int) -> None:
    shutil.rmtree(directory(rt, project_id), ignore_errors=True)


def _ensure_directory(directory_path: Path) -> None:
    directory_path.mkdir(mode=0o700, parents=True, exist_ok=True)


def _open(file_path: Path, flags: int):
    return os.fdopen(os.open(file_path, flags, 0o600), "r+b" if flags & os.O_RDWR else "wb")
