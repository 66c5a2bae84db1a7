"""A job worker that dies is replaced, and a job that kills every worker is parked: `codeyard serve`
starts a new worker within seconds after the old one is killed (kill -9, out of memory), and a job
whose run kills its worker each time ends failed after its attempts instead of killing every new
worker, while the jobs that died beside it run again, each alone, and are not failed with it."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from codeyard import config as config_module
from codeyard.db.models import FAILED, Job
from codeyard.jobs import queue
from codeyard.jobs.supervisor import Supervisor

from ..conftest import TEST_HASH
from ..receiver import Receiver
from ..support import ApiClient, LiveServer

ROOT = Path(__file__).resolve().parents[2]
ROOT_TOKEN = "worker-crashes-root-token-0123456789"


def jobs(rt) -> list[Job]:
    with rt.db.session() as session:
        return list(session.scalars(select(Job).order_by(Job.id)))


def wait_until(condition, timeout: float, step: float = 0.1):
    deadline = time.monotonic() + timeout
    while not (result := condition()) and time.monotonic() < deadline:
        time.sleep(step)
    return result


def test_a_job_that_kills_its_worker_is_failed_and_the_jobs_beside_it_run(rt, tmp_path, monkeypatch):
    # A long lease: only the supervisor's release of a dead worker's jobs makes this prompt. Four
    # at once: the jobs claimed beside the poison one die with it once, then each suspect runs alone.
    env = {**config_module.to_env(rt.config), "CODEYARD_WORKER_LEASE": "300", "CODEYARD_WORKER_POLL": "0.1",
           "CODEYARD_WORKER_CONCURRENCY": "4", "CODEYARD_LOG_LEVEL": "warning", "PYTHONPATH": str(ROOT)}  # fmt: skip
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(ROOT)
    marks = tmp_path / "marks"
    with rt.db.transaction() as session:
        for n in range(3):  # still running when the poison job kills their worker
            queue.enqueue(session, "test.mark", {"file": str(marks), "n": n, "seconds": 1})
        poison = queue.enqueue(session, "test.die", {})
        session.flush()
        poison_id = poison.id
    # A short back-off: the worker dies once per attempt, and the production one (0.5 s doubled each
    # time) would add 15 s of waiting to what this tests.
    command = [sys.executable, "-m", "tests.jobs.worker_with_test_kinds", "worker"]
    supervisor = Supervisor(command, rt.config.database_url, first_delay=0.01)
    supervisor.start()
    try:
        assert wait_until(lambda: [(j.id, j.state) for j in jobs(rt)] == [(poison_id, FAILED)], 180), jobs(rt)
        [parked] = jobs(rt)
        assert parked.attempts == parked.max_attempts
        assert parked.last_error == f"the worker died running its last attempt ({parked.max_attempts} of {parked.max_attempts})"
        assert sorted(marks.read_text().split()) == ["0", "1", "2"]
        assert supervisor.restarts == parked.max_attempts  # one per death, none since
        worker = supervisor.process
    finally:
        supervisor.stop()
    assert worker.poll() is not None


class WorkingServer(LiveServer):
    """`codeyard serve` with its embedded worker."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "CODEYARD_WORKER": "1", "CODEYARD_WORKER_POLL": "0.2", "CODEYARD_ROOT_TOKEN": ROOT_TOKEN}

    def workers(self) -> list[int]:
        """The pids of the job worker processes this server started."""
        children = [int(pid) for path in Path(f"/proc/{self.process.pid}/task").glob("*/children")
                    for pid in path.read_text().split()]  # fmt: skip
        return [pid for pid in children if b"worker" in _cmdline(pid)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.live
def test_serve_replaces_a_killed_worker(tmp_path):
    data_dir = tmp_path / "data"
    config = config_module.Config(data_dir=data_dir, database_url=config_module.sqlite_url(data_dir),
                                  base_url="http://127.0.0.1", **TEST_HASH)  # fmt: skip
    server = WorkingServer(config, tmp_path)
    with Receiver() as receiver:
        server.start()
        try:
            [first] = wait_until(server.workers, 30)
            os.kill(first, signal.SIGKILL)
            [second] = wait_until(lambda: [pid for pid in server.workers() if pid != first], 30)
            api = ApiClient(server.http).as_(ROOT_TOKEN)
            assert api.put("/application/settings", json={"allow_local_requests_from_hooks": True}).status_code == 200
            project = api.post("/projects", json={"name": "crash"}).json()
            hook = api.post(f"/projects/{project['id']}/hooks", json={"url": receiver.url()}).json()
            assert api.post(f"/projects/{project['id']}/hooks/{hook['id']}/test").status_code == 201
            assert len(receiver.wait_for(1, timeout=60)) == 1
        finally:
            server.stop()
    assert not Path(f"/proc/{second}").exists() or b"worker" not in _cmdline(second)  # no orphan left
