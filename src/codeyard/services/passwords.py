"""What keeps password checks from exhausting the server: a gate and a throttle of failures.

argon2id costs tens of milliseconds and 64 MiB per check (the configured cost): run one per
request thread and 40 concurrent wrong passwords take gigabytes and stall everyone. The gate runs
them on a few worker threads with a short queue and refuses the rest at once (503). The throttle
refuses, without running argon2, an account or an address that failed too often within a window
(429): the failures are rows, so every process of an installation counts the same ones.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from sqlalchemy import bindparam, delete, insert, select, update

from ..db.engine import Database
from ..db.models import PasswordFailure, utcnow
from ..errors import Unavailable
from .credentials import PasswordHasher

BUSY = "too many password checks at once"
BUSY_RETRY_AFTER = 1  # seconds: a slot frees as soon as one check ends


class PasswordGate:
    """argon2 hash and verify on WORKERS threads with at most QUEUE more waiting; 503 beyond.

    A caller that has work to do before the check (lookups, the throttle) takes its `slot()` first,
    so that a refused attempt costs no database round trip either."""

    def __init__(self, hasher: PasswordHasher, workers: int = 2, queue: int = 8):
        self._hasher = hasher
        self._executor = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="password")
        self._capacity = max(1, workers) + max(0, queue)
        self._admitted = 0
        self._lock = threading.Lock()

    @contextmanager
    def admission(self):
        """Whether a slot was free (True: it is held until the block ends)."""
        with self._lock:
            admitted = self._admitted < self._capacity
            if admitted:
                self._admitted += 1
        try:
            yield admitted
        finally:
            if admitted:
                with self._lock:
                    self._admitted -= 1

    @contextmanager
    def slot(self):
        with self.admission() as admitted:
            if not admitted:
                raise Unavailable(BUSY, headers={"retry-after": str(BUSY_RETRY_AFTER)})
            yield self

    async def verify_in_slot(self, stored: str | None, password: str) -> bool:
        return await asyncio.wrap_future(self._executor.submit(self._hasher.verify, stored, password))

    async def verify(self, stored: str | None, password: str) -> bool:
        with self.slot():
            return await self.verify_in_slot(stored, password)

    async def hash(self, password: str) -> str:
        with self.slot():
            return await asyncio.wrap_future(self._executor.submit(self._hasher.hash, password))

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class PasswordThrottle:
    """LIMIT failures for one account or from one address within WINDOW seconds: further attempts
    get 429, with Retry-After the seconds until the attempt would be admitted again."""

    def __init__(self, db: Database, limit: int = 10, window: int = 60):
        self._db = db
        self.limit = max(1, limit)
        self.window = dt.timedelta(seconds=max(1, window))
        table = PasswordFailure.__table__
        since = bindparam("since", type_=table.c.created_at.type)
        # The limit-th most recent failure: once it leaves the window, fewer than LIMIT remain.
        self._by_user = self._nth_latest(table, table.c.user_id == bindparam("key"), since)
        self._by_address = self._nth_latest(table, table.c.address == bindparam("key"), since)
        self._any_by_user = select(table.c.id).where(table.c.user_id == bindparam("key")).limit(1)

    def _nth_latest(self, table, matches, since):
        created = table.c.created_at
        return select(created).where(matches, created > since).order_by(created.desc()).offset(self.limit - 1).limit(1)

    def wait(self, user_id: int | None, address: str) -> int:
        """The seconds until the account and the address are under the limit again (0: they are)."""
        now = utcnow()
        waits = [self._wait(self._by_address, _column(address), now)]
        if user_id is not None:
            waits.append(self._wait(self._by_user, user_id, now))
        return max(waits)

    def _wait(self, statement, key, now: dt.datetime) -> int:
        row = self._db.fast_first(statement, {"key": key, "since": now - self.window})
        if row is None:
            return 0
        return max(1, math.ceil((row.created_at + self.window - now).total_seconds()))

    def record_failure(self, user_id: int | None, address: str) -> None:
        """Store one failure and forget those that left the window."""
        now = utcnow()
        with self._db.transaction() as session:
            session.execute(delete(PasswordFailure).where(PasswordFailure.created_at <= now - self.window))
            session.execute(insert(PasswordFailure).values(user_id=user_id, address=_column(address), created_at=now))

    def forget_account(self, user_id: int) -> None:
        """A successful sign-in clears the account's count; the failures still count for their address."""
        if self._db.fast_first(self._any_by_user, {"key": user_id}) is None:
            return
        with self._db.transaction() as session:
            session.execute(update(PasswordFailure).where(PasswordFailure.user_id == user_id).values(user_id=None))


def _column(address: str) -> str:
    """The address as stored: a proxy's X-Forwarded-For could name something longer than the column."""
    return address[: PasswordFailure.__table__.c.address.type.length]
