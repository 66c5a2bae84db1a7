"""Reads awaited on the event loop (db/loop_reads.py, `Database.loop`): the fast path's rows,
on PostgreSQL from the loop's own connections, handed out first come first served, a lost
connection replaced."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from codeyard.db import libpq, loop_reads
from codeyard.services import project_reads


def test_a_read_on_the_loop_is_the_fast_paths_read(rt, users, projects):
    alice = users.create("alice")
    made = projects.create(alice, name="one")
    params = {"id": made.id, "user_id": alice.id}

    async def read():
        return await rt.db.loop.first(project_reads.BY_ID, params), await rt.db.loop.first(
            project_reads.BY_ID, {**params, "id": made.id + 1}
        )

    found, missing = asyncio.run(read())
    assert found == rt.db.fast_first(project_reads.BY_ID, params) and found.name == "one"
    assert missing is None


def test_a_lost_connection_is_replaced(rt, users, projects):
    if rt.db.is_sqlite:
        pytest.skip("PostgreSQL's connections")
    alice = users.create("alice")
    made = projects.create(alice, name="one")
    params = {"id": made.id, "user_id": alice.id}

    async def read_twice_with_the_server_ending_the_connection_between():
        first = await rt.db.loop.first(project_reads.BY_ID, params)
        pool = rt.db._loop_reads._pool()
        (connection,) = pool._idle
        with psycopg.connect(libpq.conninfo(rt.db.engine.url.render_as_string(hide_password=False)), autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (connection.info.backend_pid,))
        second = await rt.db.loop.first(project_reads.BY_ID, params)
        return first, second, pool._opened

    first, second, opened = asyncio.run(read_twice_with_the_server_ending_the_connection_between())
    assert first == second and first.name == "one"
    assert opened == 1


class _Connection:
    closed = False

    async def close(self):
        self.closed = True


def test_closing_the_database_closes_the_loops_idle_connections(rt, users, projects):
    if rt.db.is_sqlite:
        pytest.skip("PostgreSQL's connections")
    from codeyard.db.engine import Database

    db = Database(rt.config.database_url)
    alice = users.create("alice")

    async def read():
        await db.loop.first(project_reads.BY_ID, {"id": 1, "user_id": alice.id})
        return db._loop_reads._pool()._idle[0]

    connection = asyncio.run(read())
    db.dispose()
    assert connection.closed


def test_connections_go_to_the_longest_waiter(monkeypatch):
    monkeypatch.setattr(loop_reads, "CONNECTIONS", 1)

    async def scenario():
        pool = loop_reads._Pool("")

        async def open_fake():
            pool._opened += 1
            return _Connection()

        monkeypatch.setattr(pool, "_open", open_fake)
        held = await pool.take()
        served = []

        async def wait(name):
            connection = await pool.take()
            served.append(name)
            pool.give_back(connection)

        waiting = [asyncio.create_task(wait(name)) for name in ("first", "second", "third")]
        await asyncio.sleep(0)
        cancelled = asyncio.create_task(wait("cancelled"))
        await asyncio.sleep(0)
        cancelled.cancel()
        pool.give_back(held)
        # A request arriving as the connection is given back queues behind the waiters.
        late = asyncio.create_task(wait("late"))
        await asyncio.gather(*waiting, late)
        return served, pool._opened, len(pool._idle), len(pool._waiters)

    served, opened, idle, waiters = asyncio.run(scenario())
    assert served == ["first", "second", "third", "late"]
    assert (opened, idle, waiters) == (1, 1, 0)


def test_waiters_fail_rather_than_wait_when_no_connection_can_be_opened(monkeypatch):
    monkeypatch.setattr(loop_reads, "CONNECTIONS", 1)

    async def scenario():
        pool = loop_reads._Pool("")
        opened = [_Connection()]

        async def open_once():
            if not opened:
                raise OSError("connection refused")
            pool._opened += 1
            return opened.pop()

        monkeypatch.setattr(pool, "_open", open_once)
        held = await pool.take()
        waiters = [asyncio.create_task(pool.take()) for _ in range(3)]
        await asyncio.sleep(0)
        await pool.discard(held)  # the server dropped it, and no new one can be opened
        return await asyncio.gather(*waiters, return_exceptions=True), pool._opened

    outcomes, opened = asyncio.run(scenario())
    assert [type(outcome) for outcome in outcomes] == [OSError] * 3 and opened == 0


def test_the_connection_settings_reach_libpq_whole():
    """An options value holding spaces (two -c settings) and a password holding a space and a '+'
    are passed as they are, not with the spaces turned into the '+' of a URL's query."""
    url = "postgresql+psycopg://someone:p%2Bw%20d@db.example:6543/codeyard?options=-csearch_path%3Dx%20-cwork_mem%3D8MB"
    assert psycopg.conninfo.conninfo_to_dict(libpq.conninfo(url)) == {
        "host": "db.example", "port": "6543", "dbname": "codeyard", "user": "someone", "password": "p+w d",
        "options": "-csearch_path=x -cwork_mem=8MB",
    }  # fmt: skip
