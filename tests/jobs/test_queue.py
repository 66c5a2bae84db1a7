"""The job queue and the worker, on every backend: transactions, claims, leases, back-off, failure."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time
import uuid

import pytest
from sqlalchemy import select, update

from codeyard.db.models import FAILED, PENDING, RUNNING, Job, utcnow
from codeyard.jobs import queue
from codeyard.jobs.worker import Worker


def jobs(rt) -> list[Job]:
    with rt.db.session() as session:
        return list(session.scalars(select(Job).order_by(Job.id)))


def add(rt, count: int = 1, kind: str = "probe", **options) -> list[int]:
    with rt.db.transaction() as session:
        made = [queue.enqueue(session, kind, {"n": n}, **options) for n in range(count)]
        session.flush()
        return [job.id for job in made]


def test_a_job_exists_only_when_its_transaction_commits(rt):
    queue.WAKE.clear()
    with pytest.raises(RuntimeError), rt.db.transaction() as session:
        queue.enqueue(session, "probe", {"n": 1})
        session.flush()
        raise RuntimeError("the change fails")
    assert jobs(rt) == [] and not queue.WAKE.is_set()
    add(rt)
    [job] = jobs(rt)
    assert (job.kind, job.payload, job.state, job.attempts) == ("probe", {"n": 0}, PENDING, 0)
    assert queue.WAKE.is_set()


def test_claim_leases_due_jobs_once(rt):
    add(rt, 2)
    add(rt, 1, delay=3600)
    first = queue.claim(rt.db, "w1", lease=60, limit=5)
    assert [job.payload["n"] for job in first] == [0, 1]
    assert all(job.state == RUNNING and job.attempts == 1 and job.locked_by == "w1" for job in first)
    assert queue.claim(rt.db, "w2", lease=60, limit=5) == []  # leased, or not due yet
    stored = {job.id: job for job in jobs(rt)}
    assert stored[first[0].id].locked_until > utcnow() + dt.timedelta(seconds=50)


def test_an_expired_lease_lets_another_worker_take_the_job(rt):
    [job_id] = add(rt)
    [job] = queue.claim(rt.db, "dead", lease=60)
    with rt.db.transaction() as session:
        session.execute(update(Job).where(Job.id == job_id).values(locked_until=utcnow() - dt.timedelta(seconds=1)))
    [again] = queue.claim(rt.db, "alive", lease=60)
    assert again.id == job_id and again.attempts == 2 and again.locked_by == "alive"
    assert queue.finish(rt.db, job) is False  # the dead worker's late report changes nothing
    assert queue.finish(rt.db, again) is True and jobs(rt) == []


def test_an_expired_lease_on_the_last_attempt_fails_the_job(rt):
    [job_id] = add(rt, max_attempts=1)
    queue.claim(rt.db, "dead", lease=60)
    with rt.db.transaction() as session:
        session.execute(update(Job).where(Job.id == job_id).values(locked_until=utcnow() - dt.timedelta(seconds=1)))
    assert queue.claim(rt.db, "alive", lease=60) == []
    [job] = jobs(rt)
    assert job.state == FAILED and "stopped" in job.last_error


def test_retry_backs_off_exponentially_then_fails_with_the_reason(rt):
    add(rt, max_attempts=3)
    delays = []
    for attempt in (1, 2):
        [job] = queue.claim(rt.db, "w", lease=60)
        assert job.attempts == attempt
        before = utcnow()
        assert queue.retry(rt.db, job, f"boom {attempt}", backoff=10) is True
        [stored] = jobs(rt)
        assert stored.state == PENDING and stored.locked_by is None and stored.last_error == f"boom {attempt}"
        delays.append((stored.run_at - before).total_seconds())
        with rt.db.transaction() as session:
            session.execute(update(Job).values(run_at=utcnow()))
    assert 8 <= delays[0] <= 12.5 and 16 <= delays[1] <= 24.5
    [job] = queue.claim(rt.db, "w", lease=60)
    queue.retry(rt.db, job, "boom 3", backoff=10)
    [stored] = jobs(rt)
    assert stored.state == FAILED and stored.last_error == "boom 3" and stored.finished_at is not None
    assert queue.claim(rt.db, "w", lease=60) == []


def test_concurrent_claimers_never_take_the_same_job(rt):
    ids = add(rt, 60)
    taken: list[tuple[str, int]] = []
    lock = threading.Lock()

    def claimer(name: str) -> None:
        while True:
            found = queue.claim(rt.db, name, lease=60, limit=3)
            if not found:
                return
            with lock:
                taken.extend((name, job.id) for job in found)

    threads = [threading.Thread(target=claimer, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(job_id for _name, job_id in taken) == ids


def test_worker_runs_handlers_and_records_outcomes(rt):
    seen = []

    def ok(rt_, job):
        seen.append(("ok", job.payload["n"]))

    def flaky(rt_, job):
        raise queue.Retry("try later")

    def broken(rt_, job):
        raise ValueError("bad data")

    def final(rt_, job):
        raise queue.Fail("never")

    for kind in ("ok", "flaky", "broken", "final", "unknown"):
        add(rt, kind=kind)
    worker = Worker(rt, handlers={"ok": ok, "flaky": flaky, "broken": broken, "final": final}, backoff=3600)
    assert worker.run_until_idle() == 5
    assert seen == [("ok", 0)]
    by_kind = {job.kind: job for job in jobs(rt)}
    assert set(by_kind) == {"flaky", "broken", "final", "unknown"}
    assert by_kind["flaky"].state == PENDING and by_kind["flaky"].last_error == "try later"
    assert by_kind["broken"].state == PENDING and by_kind["broken"].last_error == "ValueError: bad data"
    assert by_kind["final"].state == FAILED and by_kind["final"].last_error == "never"
    assert by_kind["unknown"].state == FAILED and "unknown job kind" in by_kind["unknown"].last_error


def test_background_worker_starts_on_commit_and_stops(rt):
    done = threading.Event()
    started = []

    def handler(rt_, job):
        started.append(time.monotonic())
        done.set()

    worker = Worker(rt, handlers={"probe": handler}, poll=30, concurrency=2)
    worker.start()
    try:
        time.sleep(0.2)
        committed = time.monotonic()
        add(rt)
        assert done.wait(10)
        assert started[0] - committed < 5  # woken by the commit, not by the 30 s poll
        deadline = time.monotonic() + 5
        while jobs(rt) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jobs(rt) == []
    finally:
        worker.stop()


def test_a_datagram_wakes_the_worker_listening_for_its_database(rt):
    address = queue.wake_address(f"test-{uuid.uuid4()}")
    done = threading.Event()
    first = Worker(rt, handlers={"probe": lambda rt_, job: done.set()}, poll=30)
    second = Worker(rt, handlers={"probe": lambda rt_, job: done.set()}, poll=30)
    first.start(listen=address)
    second.start(listen=address)  # the name is taken: this one only polls
    try:
        time.sleep(0.3)
        with rt.db.transaction() as session:
            session.add(Job(kind="probe", payload={}, state=PENDING, attempts=0, max_attempts=1, run_at=utcnow()))
        assert not done.wait(0.5)  # committed without a wake-up: nobody looks before the poll
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.sendto(b"!", address)
        assert done.wait(10)
    finally:
        first.stop()
        second.stop()
