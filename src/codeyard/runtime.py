"""Everything one process shares between requests: configuration, database, hashing (its gate and
throttle), caches."""

from __future__ import annotations

import os
import secrets

from .config import Config
from .db.engine import Database
from .entities.common import View
from .jobs import queue
from .services.archives import ArchiveCache
from .services.credentials import PasswordHasher
from .services.passwords import PasswordGate, PasswordThrottle
from .services.settings import PresentationCache


class Runtime:
    def __init__(self, config: Config):
        self.config = config
        self.db = Database(config.database_url)
        self.passwords = PasswordHasher(
            time_cost=config.argon2_time_cost,
            memory_kib=config.argon2_memory_kib,
            parallelism=config.argon2_parallelism,
        )
        self.password_gate = PasswordGate(self.passwords, config.password_workers, config.password_queue)
        self.password_throttle = PasswordThrottle(
            self.db, config.password_failure_limit, config.password_failure_window
        )
        self.presentation = PresentationCache(self.db)
        self.secret_key = load_secret_key(config)
        self._views: dict[bool, View] = {}
        self.archives = ArchiveCache(config.archive_cache_dir, config.archive_cache_mb * 1024 * 1024)
        queue.notify_workers_at(queue.wake_address(self.db.url))

    def view(self) -> View:
        """How entities are rendered now: the external URL, and whether avatars are shown (one View
        per setting, made once: its host is worked out once too)."""
        avatars = self.presentation.avatars_enabled()
        view = self._views.get(avatars)
        if view is None:
            view = self._views[avatars] = View(self.config.base_url, avatars)
        return view

    def close(self) -> None:
        self.password_gate.close()
        self.db.dispose()


def load_secret_key(config: Config) -> bytes:
    """The server's secret (derives runners tokens): from the environment, else a file in the data
    directory, created once with mode 0600. Every process of an installation must share it."""
    if config.secret_key:
        return config.secret_key.encode()
    path = config.secret_key_path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(descriptor, "w") as handle:
        handle.write(secrets.token_hex(32))
    return path.read_bytes().strip()
