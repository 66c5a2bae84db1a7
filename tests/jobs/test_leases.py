"""A running job keeps its lease: the worker's heartbeat renews it, so a job that runs longer than
the lease is not taken by a second worker (a slow webhook delivered twice); once the worker is gone
the lease runs out and the job is taken again."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from sqlalchemy import select

from codeyard import config as config_module
from codeyard.db.models import RUNNING, Job, utcnow
from codeyard.jobs import queue
from codeyard.jobs.worker import Worker

ROOT = Path(__file__).resolve().parents[2]
LEASE = 0.6


def enqueue(rt, kind: str, payload: dict, **options) -> int:
    with rt.db.transaction() as session:
        job = queue.enqueue(session, kind, payload, **options)
        session.flush()
        return job.id


def stored(rt, job_id: int) -> Job | None:
    with rt.db.session() as session:
        return session.get(Job, job_id)


def never_claimed_by_another(rt, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert queue.claim(rt.db, "another", lease=LEASE) == [], "a second worker took the running job"
        time.sleep(LEASE / 6)


def test_a_job_running_longer_than_its_lease_stays_with_its_worker(rt):
    started, release, runs = threading.Event(), threading.Event(), []

    def slow(rt_, job):
        runs.append(job.id)
        started.set()
        release.wait(30)

    worker = Worker(rt, handlers={"slow": slow}, lease=LEASE, poll=0.05)
    worker.start()
    try:
        job_id = enqueue(rt, "slow", {})
        assert started.wait(10)
        never_claimed_by_another(rt, 5 * LEASE)
        release.set()
        deadline = time.monotonic() + 10
        while stored(rt, job_id) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stored(rt, job_id) is None and runs == [job_id]
    finally:
        release.set()
        worker.stop()


def test_the_job_of_a_killed_worker_is_taken_again_after_its_lease(rt, tmp_path):
    env = {**os.environ, **config_module.to_env(rt.config), "CODEYARD_WORKER_LEASE": str(LEASE),
           "CODEYARD_WORKER_POLL": "0.05", "CODEYARD_LOG_LEVEL": "warning", "PYTHONPATH": str(ROOT)}  # fmt: skip
    job_id = enqueue(rt, "test.sleep", {"seconds": 3600})
    worker = subprocess.Popen([sys.executable, "-m", "tests.jobs.worker_with_test_kinds", "worker"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=(tmp_path / "worker.log").open("wb"))  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while (job := stored(rt, job_id)).state != RUNNING and time.monotonic() < deadline:
            time.sleep(0.05)
        assert job.state == RUNNING and f":{worker.pid}:" in job.locked_by
        never_claimed_by_another(rt, 5 * LEASE)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    deadline = time.monotonic() + 30
    while not (taken := queue.claim(rt.db, "another", lease=60)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [job.id for job in taken] == [job_id]
    assert taken[0].attempts == 2


def test_the_heartbeat_renews_only_this_workers_running_jobs(rt):
    mine, theirs = enqueue(rt, "probe", {}), enqueue(rt, "probe", {})
    queue.claim(rt.db, "me", lease=1)
    queue.claim(rt.db, "them", lease=1)
    assert queue.extend(rt.db, "me", 600) == 1
    with rt.db.session() as session:
        until = dict(session.execute(select(Job.id, Job.locked_until)).all())
    assert until[mine] > utcnow() + dt.timedelta(seconds=500)
    assert until[theirs] < utcnow() + dt.timedelta(seconds=5)
