"""The job worker beside `codeyard serve`, kept running: a worker process that dies (killed, out of
memory, crashed) is started again within seconds, so webhooks, merge request checks and automatic
merges do not stop until someone restarts the service.

A thread of the serve process waits on the worker process. When it ends without being asked to,
the leases of the jobs it held (its name starts with host:pid, see worker.py) end at once
(`queue.lapse`), so the new worker takes them again now, not after the lease: that claim counts the
attempt the worker died on, and a job that kills every worker is failed when its attempts are used
up. The restart waits a back-off that doubles while workers die young (0.5 s up to 10 s). `stop`
ends the worker (SIGTERM, then SIGKILL) and the thread; a worker also ends by itself when the serve
process is gone (`--exit-with`). Only subprocess's C fork_exec runs in the child (see
cli.SERVER_LOOP), so starting workers from this thread is safe.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import threading
import time

from .. import metrics
from ..db.engine import Database
from . import queue

log = logging.getLogger("codeyard.jobs")

FIRST_DELAY = 0.5  # seconds before restarting a worker that died young, doubled each time
MAX_DELAY = 10.0
YOUNG = 60.0  # a worker that lived longer than this died of something else: restart at once


class Supervisor:
    def __init__(self, command: list[str], database_url: str, first_delay: float = FIRST_DELAY):
        self.command = command
        self.database_url = database_url
        self.first_delay = first_delay  # tests that kill worker after worker need not wait the back-off
        self.process: subprocess.Popen | None = None
        self.restarts = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with self._lock:
            self.process = self._spawn()
        self._thread = threading.Thread(target=self._watch, name="codeyard-jobs-supervisor", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """End the worker (it finishes the jobs it runs within TIMEOUT, else is killed) and stop watching."""
        self._stopping.set()
        with self._lock:
            process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._thread is not None:
            self._thread.join(timeout)

    def _watch(self) -> None:
        delay = self.first_delay
        while True:
            started = time.monotonic()
            process = self.process
            code = process.wait()
            if self._stopping.is_set():
                return
            log.error("the job worker (pid %d) ended with %s; starting another", process.pid, code)
            self._release(process.pid)
            metrics.process_died(process.pid)
            delay = self.first_delay if time.monotonic() - started > YOUNG else delay
            if self._stopping.wait(delay):
                return
            delay = min(MAX_DELAY, delay * 2)
            with self._lock:
                if self._stopping.is_set():
                    return
                self.process = self._spawn()
                self.restarts += 1

    def _spawn(self) -> subprocess.Popen:
        # Its own session: a Ctrl-C at the terminal reaches serve, which stops the worker in order.
        return subprocess.Popen(self.command, start_new_session=True)

    def _release(self, pid: int) -> None:
        """The dead worker's jobs come back now (it is named host:pid:random)."""
        try:
            db = Database(self.database_url)
            try:
                released = queue.lapse(db, f"{socket.gethostname()}:{pid}:")
            finally:
                db.dispose()
        except Exception:
            log.exception("releasing the jobs of the dead worker %d failed; their leases will run out", pid)
            return
        if released:
            log.error("%d job(s) of the dead worker %d will run again", released, pid)
