"""The token cache of PostgreSQL (db/changes.py, services/identity.py): a caller's row is read once
while nothing that identifies callers changes, and a change made anywhere is followed — at once
when this process made it, when its notification arrives when another did; the cache is off while
the feed is down. SQLite reads the row on every request."""

from __future__ import annotations

import secrets
import time
from datetime import timedelta

import psycopg
import pytest
from sqlalchemy import select, update

from codeyard.db import changes
from codeyard.db.models import Token, User, utcnow
from codeyard.services import identity

from ..conftest import _libpq
from ..support import QueryCounter


def _wait_for(condition, timeout: float = 5.0) -> float:
    """Seconds until CONDITION() held (polled); fails after TIMEOUT."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "condition not met in time"
        time.sleep(0.005)
    return time.monotonic() - started


def _feed(rt):
    if rt.db.identity_feed is None:
        pytest.skip("PostgreSQL only: SQLite reads the caller on every request")
    return rt.db.identity_feed


def _warm(rt, api, user):
    """The feed is listening and USER's row is kept."""
    feed = _feed(rt)
    assert api.as_(user).get("/user").status_code == 200  # starts the feed
    _wait_for(lambda: feed.live)
    assert api.as_(user).get("/user").status_code == 200
    return feed


@pytest.fixture
def outside(rt):
    """A connection of another process's kind: what it commits reaches the app only as notifications."""
    _feed(rt)
    with psycopg.connect(
        _libpq(str(rt.db.engine.url.render_as_string(hide_password=False))), autocommit=True
    ) as connection:
        yield connection


def test_sqlite_reads_the_caller_on_every_request(rt, api, users):
    if rt.db.identity_feed is not None:
        pytest.skip("SQLite only")
    user = users.create()
    with QueryCounter(rt) as counter:
        for _ in range(3):
            assert api.as_(user).get("/user").status_code == 200
    assert counter.token_reads == 3


def test_a_callers_row_is_read_once_while_nothing_changes(rt, api, users):
    user = users.create()
    _warm(rt, api, user)
    with QueryCounter(rt) as counter:
        for _ in range(5):
            assert api.as_(user).get("/user").json()["username"] == user.username
    assert counter.token_reads == 0


def test_changes_made_by_this_process_are_followed_at_once(rt, api, users, admin, monkeypatch):
    user = users.create()
    feed = _warm(rt, api, user)
    monkeypatch.setattr(feed, "_notified", lambda: None)  # not by the notifications: they may come late
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
    before = feed.generation
    with rt.db.transaction(write=False) as session:
        session.execute(select(User.name)).all()
    assert feed.generation == before
    with rt.db.transaction() as session:
        session.execute(update(User).where(User.id == user.id).values(name="Changed"))
    assert feed.generation > before


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE users SET state = 'blocked' WHERE id = %(user)s",
        "DELETE FROM tokens WHERE user_id = %(user)s",
        "UPDATE tokens SET expires_at = now() - interval '1 day' WHERE user_id = %(user)s",
    ],
)
def test_a_change_committed_elsewhere_is_followed_when_its_notification_arrives(
    rt, api, users, outside, change
):
    user = users.create()
    _warm(rt, api, user)
    outside.execute(change, {"user": user.id})
    waited = _wait_for(lambda: api.as_(user).get("/user").status_code == 401, timeout=3)
    assert waited < 1.0


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
    with psycopg.connect(outside.info.dsn, autocommit=True) as writer:

        def received(timeout: float) -> list[str]:
            """The channels of the writer's notifications (other test processes share the channel)."""
            return [n.channel for n in outside.notifies(timeout=timeout) if n.pid == writer.info.backend_pid]

        writer.execute(unwatched, params)
        assert received(0.2) == []
        for statement in changed:
            with writer.transaction():
                writer.execute(statement, params)
                writer.execute(statement, params)  # folded into one notification at commit
            assert received(0.3) == [changes.CHANNEL], statement


def test_the_cache_is_off_while_the_feed_is_down(rt, api, users, outside, monkeypatch):
    monkeypatch.setattr(changes, "RETRY_DELAY", 0.2)
    user = users.create()
    feed = _warm(rt, api, user)
    down_at = feed.generation
    outside.execute("SELECT pg_terminate_backend(%s)", (feed.backend_pid,))
    _wait_for(lambda: not feed.live)
    assert feed.generation > down_at
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
    _warm(rt, api, user)
    with rt.db.transaction() as session:
        session.query(Token).filter_by(user_id=user.id).update({"expires_at": utcnow() + timedelta(hours=1)})
    assert api.as_(user).get("/user").status_code == 200
    assert api.as_(user).get("/user").status_code == 200  # kept
    monkeypatch.setattr(identity, "utcnow", lambda: utcnow() + timedelta(hours=2))
    with QueryCounter(rt) as counter:
        assert api.as_(user).get("/user").status_code == 401
    assert counter.token_reads == 0  # refused from the kept row


def test_unknown_tokens_are_not_kept(rt, api, users):
    user = users.create()
    feed = _warm(rt, api, user)
    kept = len(feed._kept)
    for _ in range(50):
        assert api.get("/user", headers={"PRIVATE-TOKEN": secrets.token_urlsafe(20)}).status_code == 401
    assert len(feed._kept) == kept


def test_a_kept_row_is_read_again_after_max_age(rt, api, users, monkeypatch):
    user = users.create()
    feed = _warm(rt, api, user)
    monkeypatch.setattr(feed, "MAX_AGE", 0.0)
    with QueryCounter(rt) as counter:
        assert api.as_(user).get("/user").status_code == 200
        assert api.as_(user).get("/user").status_code == 200
    assert counter.token_reads == 2
