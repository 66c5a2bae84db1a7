"""PostgreSQL reads awaited on the event loop (`Database.loop`, a `db.readers.LoopReader`).

The fast path's connection is synchronous: on PostgreSQL the loop waits for each statement's round
trip, and with one worker every other request waits with it. A few asynchronous connections (in
autocommit, psycopg preparing a statement at its fifth run as on the fast path) let the loop serve
other requests meanwhile. They belong to the loop that opened them: one set per running loop.
"""

from __future__ import annotations

import asyncio
import collections

from . import libpq

CONNECTIONS = 4  # per event loop: each statement of this kind takes a fraction of a millisecond


class LoopReads:
    def __init__(self, url: str):
        self._conninfo = libpq.conninfo(url)
        self._pools: dict[asyncio.AbstractEventLoop, _Pool] = {}

    async def first(self, prepared, params: dict):
        """The first row of PREPARED (a `db.engine.Prepared`) with PARAMS, or None."""
        return await self._run(_first, prepared, params)

    async def all(self, prepared, params: dict) -> list:
        """Every row of PREPARED with PARAMS."""
        return await self._run(_all, prepared, params)

    async def _run(self, fetch, prepared, params: dict):
        import psycopg

        pool = self._pool()
        connection = await pool.take()
        try:
            try:
                found = await fetch(connection, prepared, params)
            except psycopg.OperationalError:
                if not connection.closed:
                    raise
                # The server dropped it (restart, failover): once more, on a new connection.
                await pool.discard(connection)
                connection = None
                connection = await pool.take()
                found = await fetch(connection, prepared, params)
        except BaseException:
            if connection is not None:
                await pool.discard(connection)  # its state is unknown (an error, a cancelled wait)
            raise
        pool.give_back(connection)
        return found

    def close(self) -> None:
        """Close the idle connections of every loop (the database is closed; their loops may be gone)."""
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()

    def _pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            for ended in [other for other in self._pools if other.is_closed()]:
                self._pools.pop(ended).close()  # a loop that ended (tests run several) leaves its own
            pool = self._pools[loop] = _Pool(self._conninfo)
        return pool


async def _first(connection, prepared, params: dict):
    row = await _fetch(connection, prepared, params, lambda cursor: cursor.fetchone())
    return None if row is None else prepared.row(row)


async def _all(connection, prepared, params: dict) -> list:
    rows = await _fetch(connection, prepared, params, lambda cursor: cursor.fetchall())
    return [prepared.row(row) for row in rows]


async def _fetch(connection, prepared, params: dict, take):
    """TAKE(cursor)'s result (awaited) once PREPARED ran with PARAMS."""
    cursor = connection.cursor()
    try:
        await cursor.execute(prepared.sql, prepared.parameters(params))
        return await take(cursor)
    finally:
        await cursor.close()


class _Pool:
    """Up to CONNECTIONS connections of one loop, handed out first come, first served: a connection
    given back goes straight to the longest waiter (with a queue, a request arriving meanwhile took
    it first, and under load some waited for seconds)."""

    def __init__(self, conninfo: str):
        self._conninfo = conninfo
        self._idle: list = []
        self._waiters: collections.deque[asyncio.Future] = collections.deque()
        self._opened = 0

    async def take(self):
        if self._idle and not self._waiters:
            return self._idle.pop()
        if self._opened < CONNECTIONS:
            return await self._open()
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give_back(waiter.result())  # handed over as the wait was cancelled
            else:
                self._waiters.remove(waiter)
            raise

    def give_back(self, connection) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        self._idle.append(connection)

    def close(self) -> None:
        for connection in self._idle:
            connection.pgconn.finish()  # no await: the loop may be closed
        self._idle.clear()

    async def discard(self, connection) -> None:
        self._opened -= 1
        try:
            await connection.close()
        except Exception:
            pass
        if self._waiters:  # a waiter would otherwise wait for a connection that is gone
            try:
                self.give_back(await self._open())
            except Exception as error:  # the server cannot be reached: no waiter waits in vain
                while self._waiters:
                    waiter = self._waiters.popleft()
                    if not waiter.done():
                        waiter.set_exception(error)

    async def _open(self):
        import psycopg

        self._opened += 1
        try:
            # Statements come written with PostgreSQL's own placeholders (`engine.Prepared`).
            return await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True, cursor_factory=psycopg.AsyncRawCursor)
        except BaseException:
            self._opened -= 1
            raise
