"""Everything one process shares between requests: configuration, database, hashing, caches."""

from __future__ import annotations

from .config import Config
from .db.engine import Database
from .services.credentials import PasswordHasher
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
        self.presentation = PresentationCache(self.db)

    def close(self) -> None:
        self.db.dispose()
