"""The data directory is private to the service's user: the database holds password and token
digests, repositories hold private code, uploads are only for the project's readers.

Every process of codeyard runs with umask 077, so whatever it (or git, or SQLite) creates below the
data directory is 0700/0600; the directories codeyard makes itself are also created with 0700 and
narrowed when an existing one is wider.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from .config import Config

PRIVATE_UMASK = 0o077
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
SQLITE_PREFIX = "sqlite:///"


def restrict_umask() -> None:
    """Files and directories made by this process and its children are the service user's only."""
    os.umask(PRIVATE_UMASK)


def private_dir(path: Path) -> Path:
    """PATH as a directory only its owner can enter (created with its parents, narrowed if wider)."""
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    narrow(path, PRIVATE_DIR)
    return path


def narrow(path: Path, mode: int) -> None:
    """Take away the group and other bits of PATH, if it has any."""
    current = stat.S_IMODE(path.stat().st_mode)
    if current & ~mode:
        path.chmod(current & mode)


def prepare(config: Config) -> None:
    """The data directory and its fixed subdirectories, private."""
    for directory in (config.data_dir, config.repositories_dir, config.uploads_dir, config.tmp_dir):
        private_dir(directory)


def protect_database(database_url: str) -> None:
    """A SQLite database file (and its WAL companions) readable by the service's user only."""
    if not database_url.startswith(SQLITE_PREFIX):
        return
    path = Path(database_url[len(SQLITE_PREFIX) :])
    for candidate in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if candidate.exists():
            narrow(candidate, PRIVATE_FILE)


def empty_metrics_dir(config: Config) -> Path:
    """`<data>/metrics`, private and emptied: where the processes of one `codeyard serve` keep the
    figures they count (codeyard.metrics); a previous server's are gone with it."""
    shutil.rmtree(config.metrics_dir, ignore_errors=True)
    return private_dir(config.metrics_dir)
