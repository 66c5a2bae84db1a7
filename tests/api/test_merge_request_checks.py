"""A request's head ref and merge_status are computed by git with no transaction open (create, a new
target branch, reopen): the change is recorded first, git works, a second short transaction records
the status unless a newer one was recorded meanwhile; a check that never finished is done by its job."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest
from sqlalchemy import update

from codeyard.db.models import Job, MergeRequest
from codeyard.git import merge_refs
from codeyard.git.storage import repository_path
from codeyard.jobs.worker import Worker
from codeyard.services.merge_requests import status as service

from .test_merge_requests import _create
from .test_merge_requests import team as team


def _write_lock_free(rt) -> bool:
    """Can another connection take SQLite's write lock at once (no transaction of ours holds it)?"""
    other = sqlite3.connect(rt.db.engine.url.database, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        other.close()


def test_git_works_with_no_transaction_open(api, rt, team, monkeypatch):
    """Create, a new target branch, reopen and accept."""
    if not rt.db.is_sqlite:
        pytest.skip("SQLite's write lock")
    seen = []
    for name in ("keep_head", "can_merge"):
        real = getattr(merge_refs, name)

        def watched(*args, real=real, name=name):
            seen.append((name, _write_lock_free(rt)))
            return real(*args)

        monkeypatch.setattr(merge_refs, name, watched)
    project, dev = team.project, team.user("developer")
    created = _create(api, dev, project).json()
    assert created["merge_status"] == "can_be_merged"
    path = f"/projects/{project.id}/merge_requests/{created['id']}"
    assert api.as_(dev).put(path, json={"target_branch": "elsewhere"}).json()["merge_status"] == "cannot_be_merged"
    assert api.as_(dev).put(path, json={"target_branch": "master", "state_event": "close"}).json()["state"] == "closed"
    reopened = api.as_(dev).put(path, json={"state_event": "reopen"}).json()
    assert (reopened["state"], reopened["merge_status"]) == ("reopened", "can_be_merged")
    accepted = api.as_(team.user("master")).put(path + "/merge", json={})
    assert accepted.status_code == 200 and accepted.json()["state"] == "merged"
    assert [name for name, _ in seen] == ["keep_head", "can_merge", "can_merge", "can_merge", "keep_head", "can_merge",
                                          "can_merge"]  # fmt: skip
    assert all(free for _, free in seen), seen
    with rt.db.transaction() as session:
        assert session.query(Job).filter_by(kind=service.CHECK_KIND).count() == 0  # each check finished


def test_a_status_recorded_meanwhile_is_not_overwritten(api, rt, team, monkeypatch):
    """While git works, a push's job records a newer status: the older result is dropped."""
    real = merge_refs.can_merge

    def pushed_meanwhile(*args):
        with rt.db.transaction() as session:
            session.execute(update(MergeRequest).values(merge_status="cannot_be_merged"))
        return real(*args)

    monkeypatch.setattr(merge_refs, "can_merge", pushed_meanwhile)
    created = _create(api, team.user("developer"), team.project).json()
    assert created["merge_status"] == "cannot_be_merged"
    with rt.db.transaction() as session:
        assert session.get(MergeRequest, created["id"]).merge_status == "cannot_be_merged"


def test_a_check_that_never_finished_is_done_by_its_job(api, rt, team, monkeypatch):
    monkeypatch.setattr(service, "run_check", lambda check: None)  # git failed, or the process died
    created = _create(api, team.user("developer"), team.project).json()
    monkeypatch.undo()
    assert created["merge_status"] == "unchecked"
    target = repository_path(rt.config.repositories_dir, team.project.id)
    assert merge_refs.head_sha(target, 1) is None
    with rt.db.transaction() as session:
        session.execute(update(Job).values(run_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)))
    assert Worker(rt, backoff=0).run_until_idle() == 1
    got = api.as_(team.user("developer")).get(f"/projects/{team.project.id}/merge_requests/{created['id']}").json()
    assert got["merge_status"] == "can_be_merged" and merge_refs.head_sha(target, 1) is not None
