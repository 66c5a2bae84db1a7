"""Kept callers (db/changes.py, services/identity.py): a token's user row is read once while nothing
that identifies callers changes, and a change made anywhere is followed — on SQLite by the next
request, on PostgreSQL at once when this process made it and when its notification arrives when
another did; there nothing is kept while the feed is down."""

from __future__ import annotations

import secrets
import sqlite3
import time
from datetime import timedelta

import psycopg
import pytest
from sqlalchemy import select, update

from codeyard.db import changes, libpq
from codeyard.db.models import Token, User, utcnow
from codeyard.services import identity

from ..support import QueryCounter


def _wait_for(condition, timeout: float = 5.0) -> float:
    """Seconds until CONDITION() held (polled); fails after TIMEOUT."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "condition not met in time"
        time.sleep(0.005)
    return time.monotonic() - started


def _feed(rt) -> changes.NotifiedRows:
    if rt.db.is_sqlite:
        pytest.skip("PostgreSQL's feed")
    return rt.db.identity


def _warm(rt, api, user) -> changes.KeptRows:
    """USER's row is kept (on PostgreSQL, once the feed listens and the notifications of the commits
    made so far, this process's own among them, have arrived: under load that takes a while)."""
    assert api.as_(user).get("/user").status_code == 200  # starts PostgreSQL's feed
    if not rt.db.is_sqlite:
        _wait_for(lambda: rt.db.identity.live)
    assert api.as_(user).get("/user").status_code == 200

    def kept() -> bool:
        with QueryCounter(rt) as counter:
            assert api.as_(user).get("/user").status_code == 200
        return counter.token_reads == 0

    _wait_for(kept)
    return rt.db.identity


class Outside:
    """A connection of another process's kind: on PostgreSQL what it commits reaches the server
    only as notifications; on SQLite it changes the file's data_version."""

    def __init__(self, rt):
        url = rt.db.engine.url
        if rt.db.is_sqlite:
            self.connection = sqlite3.connect(url.database, isolation_level=None)
        else:
            self.connection = psycopg.connect(libpq.conninfo(url.render_as_string(hide_password=False)), autocommit=True)
        self.sqlite = rt.db.is_sqlite

    def execute(self, statement: str, params: dict | tuple = ()):
        if self.sqlite:  # the same statements, in sqlite3's parameter style
            statement = statement.replace("%(", ":").replace(")s", "").replace("%s", "?")
            statement = statement.replace("now() - interval '1 day'", "datetime('now', '-1 day')")
        return self.connection.execute(statement, params)


@pytest.fixture
def outside(rt):
    outside = Outside(rt)
    yield outside
    outside.connection.close()


def test_a_callers_row_is_read_once_while_nothing_changes(rt, api, users):
    user = users.create()
    _warm(rt, api, user)
    with QueryCounter(rt) as counter:
        for _ in range(5):
            assert api.as_(user).get("/user").json()["username"] == user.username
    assert counter.token_reads == 0


def test_changes_made_by_this_process_are_followed_at_once(rt, api, users, admin, monkeypatch):
    user = users.create()
    kept = _warm(rt, api, user)
    if not rt.db.is_sqlite:
        monkeypatch.setattr(kept, "_notified", lambda: None)  # not by the notifications: they may come late
    assert api.as_(admin).put(f"/users/{user.id}", json={"name": "New Name"}).status_code == 200
    assert api.as_(user).get("/user").json()["name"] == "New Name"
    assert api.as_(user).post("/projects", json={"name": "one"}).status_code == 201
    assert api.as_(user).get("/user").json()["can_create_project"] is True
    assert api.as_(admin).put(f"/users/{user.id}/block").status_code == 200
    assert api.as_(user).get("/user").status_code == 401


def test_only_write_transactions_advance_the_generation(rt, users, monkeypatch):
    feed = _feed(rt)
    user = users.create()
    feed.ensure_started()
    _wait_for(lambda: feed.live)
    monkeypatch.setattr(feed, "_notified", lambda: None)
    before = feed.generation()
    with rt.db.transaction(write=False) as session:
        session.execute(select(User.name)).all()
    assert feed.generation() == before
    with rt.db.transaction() as session:
        session.execute(update(User).where(User.id == user.id).values(name="Changed"))
    assert feed.generation() > before


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE users SET state = 'blocked' WHERE id = %(user)s",
        "DELETE FROM tokens WHERE user_id = %(user)s",
        "UPDATE tokens SET expires_at = now() - interval '1 day' WHERE user_id = %(user)s",
    ],
)
def test_a_change_committed_elsewhere_is_followed(rt, api, users, outside, change):
    """SQLite: by the next request. PostgreSQL: when the notification arrives."""
    user = users.create()
    _warm(rt, api, user)
    outside.execute(change, {"user": user.id})
    if rt.db.is_sqlite:
        assert api.as_(user).get("/user").status_code == 401
    else:
        assert _wait_for(lambda: api.as_(user).get("/user").status_code == 401, timeout=3) < 1.0


def test_each_watched_table_notifies_at_commit(rt, users, projects, outside):
    _feed(rt)
    user = users.create()
    project = projects.create(user, name="watched")
    outside.execute(f"LISTEN {changes.CHANNEL}")
    changed = [
        "UPDATE users SET name = 'x' WHERE id = %(user)s",
        "UPDATE tokens SET name = 'x' WHERE user_id = %(user)s",
        "UPDATE namespaces SET owner_id = owner_id WHERE id = %(namespace)s",
        "UPDATE projects SET namespace_id = namespace_id WHERE id = %(project)s",
        "DELETE FROM projects WHERE id = %(project)s",
    ]
    unwatched = "UPDATE projects SET description = 'x' WHERE id = %(project)s"
    params = {"user": user.id, "namespace": project.namespace_id, "project": project.id}
    listener = outside.connection
    with psycopg.connect(listener.info.dsn, autocommit=True) as writer:

        def received(timeout: float) -> list[tuple[str, str]]:
            """The writer's notifications (other test processes share the channel)."""
            found = listener.notifies(timeout=timeout)
            return [(n.channel, n.payload) for n in found if n.pid == writer.info.backend_pid]

        schema = writer.execute("SELECT current_schema()").fetchone()[0]

        writer.execute(unwatched, params)
        assert received(0.2) == []
        for statement in changed:
            with writer.transaction():
                writer.execute(statement, params)
                writer.execute(statement, params)  # folded into one notification at commit
            assert received(0.3) == [(changes.CHANNEL, schema)], statement


def test_notifications_about_another_schema_are_ignored(rt, api, users, outside):
    feed = _feed(rt)
    user = users.create()
    _warm(rt, api, user)
    before = feed.current
    outside.execute(f"NOTIFY {changes.CHANNEL}, 'another_installation'")
    time.sleep(0.2)
    assert feed.current == before
    outside.execute("SELECT pg_notify(%s, current_schema())", (changes.CHANNEL,))
    _wait_for(lambda: feed.current != before, timeout=2)


def test_nothing_kept_is_used_while_the_feed_is_down(rt, api, users, outside, monkeypatch):
    monkeypatch.setattr(changes, "RETRY_DELAY", 0.2)
    feed = _feed(rt)
    user = users.create()
    _warm(rt, api, user)
    down_at = feed.current
    outside.execute("SELECT pg_terminate_backend(%s)", (feed.backend_pid,))
    _wait_for(lambda: not feed.live)
    assert feed.current > down_at
    with QueryCounter(rt) as counter:
        while not feed.live:  # a lost notification could not be told from none: every request reads
            assert api.as_(user).get("/user").status_code == 200
            assert counter.token_reads == 1
            counter.fast.clear()
        _wait_for(lambda: feed.live)
        assert api.as_(user).get("/user").status_code == 200
        assert api.as_(user).get("/user").status_code == 200
    assert counter.token_reads <= 1


def test_expiry_is_checked_on_every_use(rt, api, users, monkeypatch):
    user = users.create()
    with rt.db.transaction() as session:
        session.query(Token).filter_by(user_id=user.id).update({"expires_at": utcnow() + timedelta(hours=1)})
    _warm(rt, api, user)
    monkeypatch.setattr(identity, "utcnow", lambda: utcnow() + timedelta(hours=2))
    with QueryCounter(rt) as counter:
        assert api.as_(user).get("/user").status_code == 401
    assert counter.token_reads == 0  # refused from the kept row


def test_unknown_tokens_are_not_kept(rt, api, users):
    user = users.create()
    kept = _warm(rt, api, user)
    size = len(kept._kept)
    for _ in range(50):
        assert api.get("/user", headers={"PRIVATE-TOKEN": secrets.token_urlsafe(20)}).status_code == 401
    assert len(kept._kept) == size


def test_a_kept_row_is_read_again_after_max_age(rt, api, users, monkeypatch):
    user = users.create()
    kept = _warm(rt, api, user)
    monkeypatch.setattr(kept, "MAX_AGE", 0.0)
    with QueryCounter(rt) as counter:
        assert api.as_(user).get("/user").status_code == 200
        assert api.as_(user).get("/user").status_code == 200
    assert counter.token_reads == 2


def test_sqlite_generation_is_per_connection_and_moves_with_other_connections(rt, outside, users):
    if not rt.db.is_sqlite:
        pytest.skip("SQLite's data_version")
    user = users.create()
    first = rt.db.data_version()
    assert rt.db.data_version() == first  # nothing committed meanwhile
    outside.execute("UPDATE users SET name = 'x' WHERE id = %(user)s", {"user": user.id})
    assert rt.db.data_version() != first
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as other_thread:  # another thread's connection: another serial
        assert other_thread.submit(rt.db.data_version).result()[0] != first[0]
