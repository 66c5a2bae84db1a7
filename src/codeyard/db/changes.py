"""Whether the rows that identify a caller may have changed: the generation a cache of them is
checked against (`services.identity`'s token cache).

On PostgreSQL, triggers on users, tokens, namespaces and projects (migration 0012) send a
notification on the `codeyard_identity` channel when a transaction that changed them commits; a
thread of each process LISTENs on its own connection and advances the generation for each. The
process's own write transactions advance it when they commit, before their response is sent, so
a request that revoked a token or blocked a user is followed at once by this process, and by the
others as soon as the notification arrives (about a millisecond on one machine).

While the listening connection is down — before it is up, after an error, when a check of it
fails — the feed is not `live` and a cache must not be used: every lookup goes to the database.
The connection is checked every CHECK_INTERVAL seconds, so a silently lost one is noticed then.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time

from sqlalchemy.engine import make_url

log = logging.getLogger("codeyard.db")

CHANNEL = "codeyard_identity"
CHECK_INTERVAL = 1.0  # seconds between checks of the listening connection
RETRY_DELAY = 1.0  # seconds before listening again after the connection failed


class IdentityFeed:
    """The generation of the identity rows as this process knows it (PostgreSQL only), and the
    values read from them that are kept while it is current (`cached`)."""

    MAX_ENTRIES = 10_000  # at this many kept values the cache starts over
    MAX_AGE = 60.0  # seconds a value is kept at most, whatever the feed says

    def __init__(self, url: str):
        self._conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._counter = itertools.count(1)
        self.generation = 0
        self.live = False
        self._pid: int | None = None
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.backend_pid: int | None = None  # the listening connection's server process (tests end it)
        self._kept: dict = {}

    def cached(self, key, load):
        """The value kept for KEY if it was read at the current generation (and MAX_AGE ago at most)
        while the feed is live; else LOAD()'s, kept unless it is None (nothing is kept of what does
        not exist: a guesser fills nothing)."""
        self.ensure_started()
        generation, live, now = self.generation, self.live, time.monotonic()
        entry = self._kept.get(key)
        if live and entry is not None and entry[0] == generation and now - entry[1] < self.MAX_AGE:
            return entry[2]
        value = load()
        if value is None or not live:
            self._kept.pop(key, None)
            return value
        if len(self._kept) >= self.MAX_ENTRIES:
            self._kept.clear()
        # The generation read before LOAD: a change committed meanwhile leaves the value stale.
        self._kept[key] = (generation, now, value)
        return value

    def advance(self) -> None:
        """Some identity row may have changed: what was read before is stale."""
        self.generation = next(self._counter)  # atomic under the GIL, unlike `+= 1`

    def ensure_started(self) -> None:
        """Start listening, once per process (a forked child starts its own)."""
        if self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self.live = False
        self._kept.clear()
        self._stopped.clear()
        self._thread = threading.Thread(target=self._run, name="codeyard-identity-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop using the feed now; its thread ends within CHECK_INTERVAL."""
        self._stopped.set()
        self.live = False
        self.advance()

    def _run(self) -> None:
        import psycopg

        while not self._stopped.is_set():
            try:
                with psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5) as connection:
                    self.backend_pid = connection.info.backend_pid
                    connection.execute(f"LISTEN {CHANNEL}")
                    self.advance()  # whatever changed while nobody listened
                    self.live = True
                    self._listen(connection)
            except Exception as error:
                if not self._stopped.is_set():
                    log.warning("identity feed: %s; the token cache is off until it reconnects", error)
            finally:
                self.live = False
                self.advance()
            self._stopped.wait(RETRY_DELAY)

    def _notified(self) -> None:
        self.advance()

    def _listen(self, connection) -> None:
        while not self._stopped.is_set():
            for _ in connection.notifies(timeout=CHECK_INTERVAL):
                self._notified()
            connection.execute("SELECT 1")  # a connection lost without a word fails here
