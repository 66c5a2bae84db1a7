"""One read, three readers (db/readers.py): inside a session's transaction, on this thread's fast
path, awaited on the loop; the same rows from each. And the rule of the fast writes, checked:
none while this thread holds a session's write transaction."""

from __future__ import annotations

import asyncio
import threading

import pytest

from codeyard.db.models import ProjectMember, utcnow
from codeyard.db.readers import OverlappingWrite, SessionReader, SuspendedRead, now
from codeyard.services import members
from codeyard.services.merge_requests import reads

from .test_storage import RENAME


def test_a_read_gives_the_same_rows_through_every_reader(rt, users, projects):
    alice, bob = users.create("alice"), users.create("bob")
    made = projects.create(alice, name="one")
    projects.add_member(made, bob, 30)

    def read(reader):
        return members.read_page(reader, ProjectMember, made.id, None, 0, 20)

    with rt.db.session() as session:
        in_session = now(read(SessionReader(session)))
    fast = now(read(rt.db.fast))
    on_loop = asyncio.run(read(rt.db.loop))
    assert in_session == fast == on_loop and "bob" in [row.username for row in in_session[1]]
    assert type(in_session[1][0])._fields == type(on_loop[1][0])._fields


def test_a_session_reader_sees_its_transactions_writes(rt, users, projects):
    alice, bob = users.create("alice"), users.create("bob")
    made = projects.create(alice, name="one")
    with rt.db.transaction() as session:
        session.add(ProjectMember(project_id=made.id, user_id=bob.id, access_level=20))
        def total(reader) -> int:
            return now(members.read_page(reader, ProjectMember, made.id, None, 0, 20))[0]

        assert total(SessionReader(session)) == total(rt.db.fast) + 1  # bob, not committed yet


def test_now_refuses_a_read_that_waits(rt, users, projects):
    if rt.db.is_sqlite:
        pytest.skip("on SQLite the loop's reader is the fast path: it never waits")
    alice = users.create("alice")
    made = projects.create(alice, name="one")

    async def attempt():
        with pytest.raises(SuspendedRead):
            now(reads.read_page(rt.db.loop, made.id, state=None, order_by="created_at", sort="desc",
                                         offset=0, limit=20))  # fmt: skip

    asyncio.run(attempt())


def test_a_fast_write_never_overlaps_a_sessions_write_transaction(rt, users):
    alice = users.create("alice")
    rename = {"id": alice.id, "name": "alicia", "now": utcnow()}
    with rt.db.session() as session, session.begin():
        session.connection()  # the write transaction begins
        with pytest.raises(OverlappingWrite), rt.db.fast_write() as transaction:
            transaction.first(RENAME, rename)
    with rt.db.session(write=False) as session, session.begin():
        session.connection()  # a read transaction is no obstacle
        with rt.db.fast_write() as transaction:
            assert transaction.first(RENAME, rename) == (alice.id,)


def test_a_write_transaction_ended_by_another_thread_no_longer_counts(rt, users):
    alice = users.create("alice")
    session = rt.db.session()
    session.begin()
    session.connection()
    ended = threading.Thread(target=lambda: (session.commit(), session.close()))
    ended.start()
    ended.join()
    with rt.db.fast_write() as transaction:
        assert transaction.first(RENAME, {"id": alice.id, "name": "alicia", "now": utcnow()}) == (alice.id,)
