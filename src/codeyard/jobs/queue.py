"""The job queue: enqueue in the caller's transaction, claim with a lease, finish, retry or fail.

A job is written in the same transaction as the change that causes it, so a change that commits
always has its job and a rolled-back one never does. Workers claim jobs atomically: PostgreSQL
locks the rows it takes with `FOR UPDATE SKIP LOCKED`, SQLite serialises the short claim
transaction with `BEGIN IMMEDIATE` (every write session begins so). A claimed job is leased to one
worker until `locked_until`, and the worker renews the lease while the job runs (`extend`, its
heartbeat), so a live worker never loses a job it runs; a worker that dies loses nothing, its lease
runs out (at once when the supervisor that restarts it says so: `lapse`) and another worker takes
the job again. Every claim counts an attempt, a crash too: a job that kills its worker every time
is failed when its attempts are used up instead of killing each new worker. Finishing deletes the
job (its effect keeps its own record); a job that runs out of attempts stays, failed, with the reason.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import socket
import threading

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from ..db.engine import Database
from ..db.hooks import on_commit
from ..db.models import FAILED, PENDING, RUNNING, Job, utcnow

MAX_BACKOFF = 3600.0  # seconds
DIED = "the worker running it died"

class Retry(Exception):
    """Raised by a handler: run the job again after a back-off (until its attempts are used up)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Fail(Exception):
    """Raised by a handler: the job will not run again."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# Set when a job is committed in this process, so that a worker living here starts at once
# instead of at its next poll. Workers in other processes on this machine are woken by a datagram
# to the abstract socket `wake_address(database URL)`, which the first worker started binds.
WAKE = threading.Event()
_notify = {"address": None, "socket": None}


def wake_address(database_url: str) -> str:
    """The abstract (Linux) socket name the workers of one database listen on for wake-ups."""
    return "\0codeyard-jobs-" + hashlib.sha256(database_url.encode()).hexdigest()[:24]


def notify_workers_at(address: str | None) -> None:
    """Send a wake-up to ADDRESS after each commit that added jobs (set once per process)."""
    _notify["address"] = address


def wake() -> None:
    WAKE.set()
    address = _notify["address"]
    if address is None:
        return
    try:
        if _notify["socket"] is None:
            sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sender.setblocking(False)
            _notify["socket"] = sender
        _notify["socket"].sendto(b"!", address)
    except OSError:
        pass  # no worker listening here (or its queue is full): the workers' poll finds the job


def enqueue(session: Session, kind: str, payload: dict, *, max_attempts: int = 5, delay: float = 0.0) -> Job:
    """Add a job to the caller's transaction; it exists when (and only if) that transaction commits."""
    job = Job(
        kind=kind, payload=payload, state=PENDING, attempts=0, max_attempts=max_attempts,
        run_at=utcnow() + dt.timedelta(seconds=delay),
    )  # fmt: skip
    session.add(job)
    on_commit(session, wake)
    return job


def claim(db: Database, worker: str, lease: float, limit: int = 1, *, idle: bool = True) -> list[Job]:
    """Take up to LIMIT due jobs (or jobs whose lease ran out) for WORKER, for LEASE seconds.

    A job whose worker died running it may be what killed it (`suspected`): only an IDLE worker
    takes it, and then alone, so that the jobs beside it do not die with it again and again and
    use up their attempts; the job that kills every worker uses up only its own."""
    now = utcnow()
    due = or_(
        and_(Job.state == PENDING, Job.run_at <= now),
        and_(Job.state == RUNNING, Job.locked_until < now),
    )
    query = select(Job).where(due)
    if not idle:
        query = query.where(Job.last_error.is_distinct_from(DIED))
    query = query.order_by(Job.run_at, Job.id).limit(limit).with_for_update(skip_locked=True)
    with db.transaction() as session:
        jobs = _alone_if_suspected(list(session.scalars(query)))
        for job in jobs:
            if job.state == RUNNING and job.attempts >= job.max_attempts:
                _fail(job, _lost(job), now)
                continue
            job.state = RUNNING
            job.attempts += 1
            job.locked_by = worker
            job.locked_until = now + dt.timedelta(seconds=lease)
        session.flush()
        claimed = [job for job in jobs if job.state == RUNNING]
        session.expunge_all()
    return claimed


def suspected(job: Job) -> bool:
    """Did the worker running JOB's last attempt die (`lapse`)?"""
    return job.last_error == DIED


def _alone_if_suspected(jobs: list[Job]) -> list[Job]:
    """The first suspected job that has attempts left, alone, when JOBS hold one; else JOBS."""
    for job in jobs:
        if suspected(job) and job.attempts < job.max_attempts:
            return [job]
    return jobs


def extend(db: Database, worker: str, lease: float) -> int:
    """WORKER's heartbeat: its running jobs stay leased LEASE seconds from now; how many it holds."""
    values = {"locked_until": utcnow() + dt.timedelta(seconds=lease)}
    with db.transaction() as session:
        result = session.execute(update(Job).where(Job.locked_by == worker, Job.state == RUNNING).values(**values))
    return result.rowcount


def lapse(db: Database, worker_prefix: str) -> int:
    """The worker(s) named WORKER_PREFIX... died: their jobs' leases end now, so that the next claim
    takes them again (counting the attempt they died on); how many there were."""
    held = and_(Job.locked_by.startswith(worker_prefix, autoescape=True), Job.state == RUNNING)
    values = {"locked_until": utcnow() - dt.timedelta(seconds=1), "last_error": DIED}
    with db.transaction() as session:
        result = session.execute(update(Job).where(held).values(**values))
    return result.rowcount


# A handler's return value: it removed its job itself, in the transaction that recorded its effect.
FINISHED = object()


def backlog(session: Session) -> tuple[int, float]:
    """The jobs due now and not taken (pending, their time come), and the seconds the oldest of them
    has waited (0 when none): one indexed query, for the metrics scrape."""
    now = utcnow()
    due = and_(Job.state == PENDING, Job.run_at <= now)
    count, oldest = session.execute(select(func.count(), func.min(Job.run_at)).where(due)).one()
    return count, (now - oldest).total_seconds() if oldest is not None else 0.0


def finish_in(session: Session, job: Job) -> bool:
    """`finish` inside the caller's transaction (the effect's record and the job's end commit together)."""
    result = session.execute(delete(Job).where(Job.id == job.id, Job.locked_by == job.locked_by))
    return result.rowcount == 1


def cancel(session: Session, job_id: int) -> None:
    """Remove the job JOB_ID in the caller's transaction unless a worker holds it (it runs then)."""
    session.execute(delete(Job).where(Job.id == job_id, Job.state == PENDING))


def finish(db: Database, job: Job) -> bool:
    """The job is done: remove it. False when its lease was lost to another worker."""
    with db.transaction() as session:
        result = session.execute(delete(Job).where(Job.id == job.id, Job.locked_by == job.locked_by))
    return result.rowcount == 1


def retry(db: Database, job: Job, error: str, backoff: float) -> bool:
    """Run the job again later (exponential back-off with jitter), or fail it when its attempts are
    used up. False when its lease was lost to another worker."""
    if job.attempts >= job.max_attempts:
        return fail(db, job, error)
    delay = min(MAX_BACKOFF, backoff * 2 ** (job.attempts - 1)) * random.uniform(0.8, 1.2)
    values = {"state": PENDING, "run_at": utcnow() + dt.timedelta(seconds=delay), "locked_by": None,
              "locked_until": None, "last_error": error}  # fmt: skip
    return _release(db, job, values)


def fail(db: Database, job: Job, error: str) -> bool:
    """The job will not run again; it stays with the reason."""
    values = {"state": FAILED, "locked_by": None, "locked_until": None, "last_error": error, "finished_at": utcnow()}
    return _release(db, job, values)


def _release(db: Database, job: Job, values: dict) -> bool:
    with db.transaction() as session:
        result = session.execute(
            update(Job).where(Job.id == job.id, Job.locked_by == job.locked_by).values(**values)
        )
    return result.rowcount == 1


def _lost(job: Job) -> str:
    """Why a job whose last attempt's lease ran out is failed."""
    ended = "died running" if job.last_error == DIED else "stopped renewing the lease of"
    return f"the worker {ended} its last attempt ({job.attempts} of {job.max_attempts})"


def _fail(job: Job, error: str, now: dt.datetime) -> None:
    job.state, job.locked_by, job.locked_until, job.last_error, job.finished_at = FAILED, None, None, error, now
