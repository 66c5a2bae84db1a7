"""One read, three places to run it: a `Reader` runs a Core SELECT built once (a module constant or
a cached builder) and gives its rows as named tuples, whatever runs it.

A read is written once, as a coroutine taking a reader (`reader.first`, `reader.all`):

- `LoopReader` (`Database.loop`): awaited on the event loop (on PostgreSQL the round trip does not
  hold the loop, `db/loop_reads.py`);
- `FastReader` (`Database.fast`): this thread's autocommit connection, for a thread beside the loop;
- `SessionReader` (`Ctx.reader`): inside the request's open transaction, so that it sees what the
  request wrote.

The last two never suspend: a synchronous caller runs the read with `now(read(...))`.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Protocol


class Reader(Protocol):
    async def first(self, statement, params: dict):
        """The first row of STATEMENT with PARAMS (a named tuple), or None."""

    async def all(self, statement, params: dict) -> list:
        """Every row of STATEMENT with PARAMS (named tuples)."""


class LoopReader:
    """On PostgreSQL awaited on one of the loop's own connections (`db/loop_reads.py`), so the loop
    serves other requests during the round trip; on SQLite, whose work is this process's own, the
    fast path itself."""

    def __init__(self, db, loop_reads):
        self.db = db
        self._loop_reads = loop_reads

    async def first(self, statement, params: dict):
        if self._loop_reads is None:
            return self.db.fast_first(statement, params)
        return await self._loop_reads.first(self.db.prepared(statement), params)

    async def all(self, statement, params: dict) -> list:
        if self._loop_reads is None:
            return self.db.fast_all(statement, params)
        return await self._loop_reads.all(self.db.prepared(statement), params)


class FastReader:
    def __init__(self, db):
        self.db = db

    async def first(self, statement, params: dict):
        return self.db.fast_first(statement, params)

    async def all(self, statement, params: dict) -> list:
        return self.db.fast_all(statement, params)


class SessionReader:
    """Reads through SESSION's connection, in its transaction. Its rows are the same named tuples as
    the fast path's (SQLAlchemy applies the same result processors)."""

    def __init__(self, session):
        self.session = session

    async def first(self, statement, params: dict):
        self.session.flush()
        row = self.session.execute(statement, params).first()
        return None if row is None else _row_type(statement)._make(row)

    async def all(self, statement, params: dict) -> list:
        make = _row_type(statement)._make
        self.session.flush()
        return [make(row) for row in self.session.execute(statement, params)]


_ROW_TYPES: dict = {}


def _row_type(statement):
    """The named tuple of STATEMENT's rows (the one `engine.Prepared` makes), kept per statement."""
    row_type = _ROW_TYPES.get(statement)
    if row_type is None:
        row_type = _ROW_TYPES[statement] = namedtuple("Row", [column.key for column in statement.selected_columns], rename=True)
    return row_type


class OverlappingWrite(RuntimeError):
    """A fast write began while this thread held a session's write transaction: on SQLite each would
    wait for the other's write lock (a programming error, `Database.fast_write`)."""


class SuspendedRead(RuntimeError):
    """A read given to `now` waited for something: it was given a `LoopReader`."""


def now(read):
    """The value of READ, a coroutine that completes without suspending (a read through a
    `SessionReader` or a `FastReader`), for a synchronous caller."""
    try:
        read.send(None)
    except StopIteration as done:
        return done.value
    read.close()
    raise SuspendedRead("a read run with `now` must be given a session or fast reader, not the loop's")
