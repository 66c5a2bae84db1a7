"""Rows that identify callers, kept by a process while nothing says they changed
(`services.identity` keeps the user row of a token here; `services.project_reads`, on PostgreSQL,
the number of every project, which only inserts and deletes of projects change).

What was read is kept with the *generation* current before it was read, and used while the
generation is the same. What a generation is depends on the database:

- SQLite (`VersionedRows`): `PRAGMA data_version` of the calling thread's fast connection, which
  changes whenever any other connection — of this process or another — commits. Exact: a change
  is seen by the next request after its commit. The check costs a fraction of the lookup it spares
  (docs/MEASUREMENTS.md).
- PostgreSQL (`NotifiedRows`): triggers on users, tokens, namespaces and projects (migration 0012)
  notify the `codeyard_identity` channel, with their schema, when a transaction that changed them
  commits; a thread of each process LISTENs on its own connection and advances the generation for
  each. The process's own transactions advance it when they commit (all but read sessions'),
  before their response is sent: this process follows its own changes at once, the others when the
  notification arrives. While the listening connection is
  down — before it is up, after an error, when its check every CHECK_INTERVAL seconds fails —
  nothing kept is used: every lookup reads.

Either way nothing is kept longer than MAX_AGE, nor for a key whose load found nothing.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time

from . import libpq

log = logging.getLogger("codeyard.db")

CHANNEL = "codeyard_identity"
CHECK_INTERVAL = 1.0  # seconds between checks of the listening connection
RETRY_DELAY = 1.0  # seconds before listening again after the connection failed


class KeptRows:
    """Values read from identity rows, kept per process while the generation they were read at is
    current (`generation()`; None means nothing may be used or kept now)."""

    MAX_ENTRIES = 10_000  # at this many kept values the cache starts over
    MAX_AGE = 60.0  # seconds a value is kept at most, whatever the generation says

    def __init__(self):
        self._kept: dict = {}

    def generation(self):
        raise NotImplementedError

    def advance(self) -> None:
        """This process committed a change (a generation that does not see it moves itself)."""

    def stop(self) -> None:
        """The database is closed."""

    def cached(self, key, load):
        """The value kept for KEY if read at the current generation (at most MAX_AGE ago); else
        LOAD()'s, kept unless it is None (nothing is kept of what does not exist: a guesser fills
        nothing)."""
        generation, now = self.generation(), time.monotonic()
        entry = self._kept.get(key)
        if generation is not None and entry is not None and entry[0] == generation and now - entry[1] < self.MAX_AGE:
            return entry[2]
        value = load()
        if value is None or generation is None:
            self._kept.pop(key, None)
            return value
        if len(self._kept) >= self.MAX_ENTRIES:
            self._kept.clear()
        # The generation read before LOAD: a change committed meanwhile leaves the value stale.
        self._kept[key] = (generation, now, value)
        return value


class VersionedRows(KeptRows):
    """SQLite: the generation is the calling thread's fast connection and its `data_version`. (A
    commit of that connection itself would not move it: its only writes, `Database.fast_write`,
    touch no identity row.)"""

    def __init__(self, data_version):
        super().__init__()
        self._data_version = data_version  # Database.data_version: (connection serial, version)

    def generation(self):
        return self._data_version()


class NotifiedRows(KeptRows):
    """PostgreSQL: the generation is advanced by notifications and by this process's commits."""

    def __init__(self, url: str):
        super().__init__()
        self._conninfo = libpq.conninfo(url)
        self._counter = itertools.count(1)
        self.current = 0
        self.live = False
        self._pid: int | None = None
        self._stopped = threading.Event()
        self.backend_pid: int | None = None  # the listening connection's server process (tests end it)

    def generation(self):
        self.ensure_started()
        return self.current if self.live else None

    def advance(self) -> None:
        """Some identity row may have changed: what was read before is stale."""
        self.current = next(self._counter)  # atomic under the GIL, unlike `+= 1`

    def ensure_started(self) -> None:
        """Start listening, once per process (a forked child starts its own)."""
        if self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self.live = False
        self._kept.clear()
        self._stopped.clear()
        threading.Thread(target=self._run, name="codeyard-identity-feed", daemon=True).start()

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
                    schema = connection.execute("SELECT current_schema()").fetchone()[0]
                    connection.execute(f"LISTEN {CHANNEL}")
                    self.advance()  # whatever changed while nobody listened
                    self.live = True
                    self._listen(connection, schema)
            except Exception as error:
                if not self._stopped.is_set():
                    log.warning("identity feed: %s; kept callers are not used until it reconnects", error)
            finally:
                self.live = False
                self.advance()
            self._stopped.wait(RETRY_DELAY)

    def _notified(self) -> None:
        self.advance()

    def _listen(self, connection, schema: str) -> None:
        """Until stopped: advance for each notification about SCHEMA's tables (the payload)."""
        while not self._stopped.is_set():
            for notification in connection.notifies(timeout=CHECK_INTERVAL):
                if notification.payload == schema:
                    self._notified()
            connection.execute("SELECT 1")  # a connection lost without a word fails here
