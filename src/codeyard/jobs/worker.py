"""The worker: claims due jobs and runs their handlers in threads, never on the event loop.

`codeyard worker` runs one in its own process, on any machine that reaches the database;
`codeyard serve` starts one such process beside the server (with worker threads in the server
process, a fork under uvloop, which runs Python code in the child between fork and exec, deadlocked
on a lock another thread held; see `cli.SERVER_LOOP`). One dispatcher thread claims at most as many jobs as
there are free slots and hands them to a thread pool; it sleeps until a job is committed (in this
process: `queue.WAKE`; in another process on this machine: a datagram to the abstract socket this
worker binds, when it is the first to), a slot frees up, or the poll interval passes. A heartbeat
thread renews the lease of the jobs this worker runs every third of the lease (one UPDATE for all
of them), so a job that runs longer than its lease is not taken and run again by another worker,
while a dead worker's jobs still come back when their lease runs out.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from .. import metrics
from ..services import push_journal
from . import queue
from .handlers import HANDLERS
from .queue import Fail, Retry

log = logging.getLogger("codeyard.jobs")


def _again(job) -> str:
    """The outcome of a retry: `retried`, or `failed` when it was the job's last attempt (queue.retry)."""
    return "failed" if job.attempts >= job.max_attempts else "retried"

RECOVER_PUSHES_EVERY = 5.0  # seconds between looks for pushes a dead server left unrecorded


class Worker:
    def __init__(self, rt, *, concurrency: int = 4, poll: float = 1.0, lease: float = 60.0,
                 backoff: float = 10.0, handlers: dict | None = None):  # fmt: skip
        self.rt = rt
        self.concurrency = concurrency
        self.poll = poll
        self.lease = lease
        self.backoff = backoff
        self.handlers = HANDLERS if handlers is None else handlers
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._running = 0
        self._alone = False  # a job whose last worker died running it runs, alone (queue.claim)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stopped = threading.Event()  # the last running job ended after a stop
        self._pool: ThreadPoolExecutor | None = None
        self._thread: threading.Thread | None = None
        self._pushes_recovered_at = float("-inf")

    @classmethod
    def from_config(cls, rt, concurrency: int | None = None) -> Worker:
        config = rt.config
        return cls(rt, concurrency=concurrency or config.worker_concurrency, poll=config.worker_poll,
                   lease=config.worker_lease, backoff=config.worker_backoff)  # fmt: skip

    # --- running in the background ---

    def start(self, listen: str | None = None) -> None:
        """Run in background threads; LISTEN is an abstract socket name to take wake-ups on."""
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="codeyard-job")
        self._thread = threading.Thread(target=self._dispatch, name="codeyard-jobs", daemon=True)
        self._thread.start()
        threading.Thread(target=self._heartbeat, name="codeyard-jobs-lease", daemon=True).start()
        if listen is not None:
            self._listen(listen)
        log.info("job worker %s started (%d at once)", self.name, self.concurrency)

    def _listen(self, address: str) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            listener.bind(address)
        except OSError:
            listener.close()  # another worker on this machine takes the wake-ups; this one polls
            return
        listener.settimeout(1.0)

        def receive() -> None:
            while not self._stop.is_set():
                try:
                    listener.recv(64)
                except TimeoutError:
                    continue
                except OSError:
                    return
                queue.WAKE.set()
            listener.close()

        threading.Thread(target=receive, name="codeyard-jobs-wake", daemon=True).start()

    def stop(self, timeout: float = 15.0) -> None:
        """Stop claiming; wait for the jobs being run (a job cut short runs again after its lease)."""
        self._stop.set()
        queue.WAKE.set()

        if self._thread is not None:
            self._thread.join(timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._stopped.set()

    def _dispatch(self) -> None:
        while not self._stop.is_set():
            queue.WAKE.clear()  # before claiming: a commit from now on wakes the wait below
            try:
                claimed = self._claim_free_slots()
            except Exception:
                log.exception("claiming jobs failed")
                claimed = False
            self._recover_pushes_when_due()
            if not claimed:
                queue.WAKE.wait(self.poll)

    def _recover_pushes_when_due(self) -> None:
        """Record the pushes of server processes that died before recording them (uvicorn starts a
        new one; `codeyard serve` recovers only when it starts): a directory listing, at most every
        RECOVER_PUSHES_EVERY seconds."""
        now = time.monotonic()
        if now - self._pushes_recovered_at < RECOVER_PUSHES_EVERY:
            return
        self._pushes_recovered_at = now
        try:
            push_journal.recover(self.rt)
        except Exception:
            log.exception("recovering unrecorded pushes failed")

    def _heartbeat(self) -> None:
        """Renew the leases of the jobs running here, every third of the lease while any runs (also
        while a stop waits for them)."""
        while not self._stopped.wait(self.lease / 3):
            with self._lock:
                running = self._running
            if not running:
                continue
            try:
                queue.extend(self.rt.db, self.name, self.lease)
            except Exception:
                log.exception("renewing the leases of running jobs failed")

    def _claim_free_slots(self) -> bool:
        """Whether every free slot got a job (so there may be more due at once)."""
        with self._lock:
            free = 0 if self._alone else self.concurrency - self._running
            idle = self._running == 0
        if free <= 0:
            return False
        jobs = queue.claim(self.rt.db, self.name, self.lease, limit=free, idle=idle)
        alone = len(jobs) == 1 and queue.suspected(jobs[0])
        with self._lock:
            self._running += len(jobs)
            self._alone = alone
        for job in jobs:
            self._pool.submit(self._run_and_release, job)
        return len(jobs) == free and not alone

    def _run_and_release(self, job) -> None:
        try:
            self.run(job)
        finally:
            with self._lock:
                self._running -= 1
                self._alone = False  # a suspected job runs alone: when it ends, nothing else runs
            queue.WAKE.set()

    # --- one job ---

    def run(self, job) -> None:
        """Run a claimed job's handler and record the outcome: finished, retried later, or failed."""
        handler = self.handlers.get(job.kind)
        kind = job.kind if handler is not None else "unknown"  # a bounded label
        started = time.perf_counter()
        try:
            if handler is None:
                raise Fail(f"unknown job kind {job.kind!r}")
            result = handler(self.rt, job)
        except Retry as outcome:
            ended, kept = _again(job), queue.retry(self.rt.db, job, outcome.reason, self.backoff)
        except Fail as outcome:
            ended, kept = "failed", queue.fail(self.rt.db, job, outcome.reason)
        except Exception as error:
            log.exception("job %s (%s) failed", job.id, job.kind)
            ended, kept = _again(job), queue.retry(self.rt.db, job, f"{type(error).__name__}: {error}", self.backoff)
        else:
            ended, kept = "finished", True if result is queue.FINISHED else queue.finish(self.rt.db, job)
        metrics.JOB_SECONDS.labels(kind).observe(time.perf_counter() - started)
        metrics.JOBS.labels(kind, ended).inc()
        if not kept:
            log.warning("job %s (%s) outlived its lease; another worker owns it now", job.id, job.kind)

    def run_until_idle(self, timeout: float = 30.0) -> int:
        """Claim and run due jobs in this thread until none is due; the number run (for tests, tools)."""
        deadline = time.monotonic() + timeout
        done = 0
        while time.monotonic() < deadline:
            jobs = queue.claim(self.rt.db, self.name, self.lease, limit=1)
            if not jobs:
                return done
            self.run(jobs[0])
            done += 1
        return done
