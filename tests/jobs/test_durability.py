"""Durability with real processes: a server killed with deliveries pending loses none and, to a
receiver that drops repeated delivery ids, delivers each once; two `codeyard worker` processes on
PostgreSQL never run the same job at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from codeyard import config as config_module
from codeyard.db.engine import Database
from codeyard.db.models import HookDelivery, Job, ProjectHook
from codeyard.services import settings as settings_service
from codeyard.services import webhooks

from ..conftest import HAVE_POSTGRES, TEST_HASH
from ..githttp.conftest import Git
from ..receiver import Receiver
from ..support import ApiClient, LiveServer, ProjectFactory, UserFactory

pytestmark = pytest.mark.both_backends

ROOT_TOKEN = "durability-root-token-0123456789"
BRANCHES = [f"b{n}" for n in range(8)]


class WorkingServer(LiveServer):
    """`codeyard serve` with its embedded worker, a short lease and a short back-off."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "CODEYARD_WORKER": "1", "CODEYARD_WORKER_LEASE": "2", "CODEYARD_WORKER_BACKOFF": "0.2",
                "CODEYARD_WORKER_CONCURRENCY": "2", "CODEYARD_ROOT_TOKEN": ROOT_TOKEN}  # fmt: skip

    def kill(self) -> None:
        """SIGKILL the server and its worker process at once, as a machine that goes down would."""
        children = [int(pid) for path in Path(f"/proc/{self.process.pid}/task").glob("*/children")
                    for pid in path.read_text().split()]  # fmt: skip
        for pid in [self.process.pid, *children]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # a short-lived child (git, a hook) that ended since it was listed
                pass
        self.process.wait(10)


def outstanding(db: Database) -> list[Job]:
    with db.session() as session:
        return list(session.scalars(select(Job)))


@pytest.mark.live
def test_killed_server_loses_no_delivery_and_each_is_processed_once(tmp_path):
    data_dir = tmp_path / "data"
    config = config_module.Config(data_dir=data_dir, database_url=config_module.sqlite_url(data_dir),
                                  base_url="http://127.0.0.1", **TEST_HASH)  # fmt: skip
    server = WorkingServer(config, tmp_path)
    db = None
    with Receiver(delay=0.5) as receiver:
        server.start()
        try:
            api = ApiClient(server.http).as_(ROOT_TOKEN)
            assert api.put("/application/settings", json={"allow_local_requests_from_hooks": True}).status_code == 200
            project = api.post("/projects", json={"name": "crash"}).json()
            assert api.post(f"/projects/{project['id']}/hooks", json={"url": receiver.url()}).status_code == 201
            (tmp_path / "git").mkdir()
            git = Git(tmp_path / "git")
            work = git.new_work("work")
            git.commit(work, "a.txt", "a\n", "first")
            for branch in BRANCHES:
                git.run("branch", branch, cwd=work)
            remote = server.base_url.replace("http://", f"http://root:{ROOT_TOKEN}@") + f"/{project['path_with_namespace']}.git"
            git.run("push", "-q", remote, *BRANCHES, cwd=work)
            server.kill()
            db = Database(config.database_url)
            pending = outstanding(db)
            assert len(receiver.processed) < len(BRANCHES) and pending  # killed with deliveries pending
            server.start()
            deadline = time.monotonic() + 60
            while outstanding(db) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert outstanding(db) == []
        finally:
            server.stop()
            if db is not None:
                with db.session() as session:
                    succeeded = {row.delivery for row in session.scalars(select(HookDelivery)) if row.response_status == 200}
                db.dispose()
    refs = sorted(got.json["ref"] for got in receiver.processed)
    assert refs == sorted(f"refs/heads/{branch}" for branch in BRANCHES)  # each once, none lost
    assert {got.delivery for got in receiver.requests} == {got.delivery for got in receiver.processed} == succeeded


@pytest.mark.live
@pytest.mark.skipif(not HAVE_POSTGRES, reason="needs PostgreSQL")
def test_two_worker_processes_on_postgresql_never_run_a_job_twice(rt, tmp_path):
    if rt.db.is_sqlite:
        pytest.skip("PostgreSQL only")
    with rt.db.transaction() as session:
        settings_service.update(session, {"allow_local_requests_from_hooks": True})
    owner = UserFactory(rt).create("owner")
    project = ProjectFactory(rt).create(owner)
    count = 30
    with Receiver(delay=0.2) as receiver:
        with rt.db.transaction() as session:
            hook = ProjectHook(project_id=project.id, url=receiver.url(), failure_count=0)
            session.add(hook)
            session.flush()
            hook_id = hook.id
        env = {**config_module.to_env(rt.config), "CODEYARD_WORKER_POLL": "0.1", "CODEYARD_LOG_LEVEL": "warning",
               "PATH": os.environ["PATH"]}  # fmt: skip
        workers = [
            subprocess.Popen([sys.executable, "-m", "codeyard", "worker", "--concurrency", "3"], env=env,
                             stdout=subprocess.PIPE, stderr=(tmp_path / f"worker{n}.log").open("wb"), text=True)
            for n in range(2)
        ]  # fmt: skip
        try:
            for worker in workers:
                assert "running 3 jobs at once" in worker.stdout.readline()
            with rt.db.transaction() as session:
                for n in range(count):
                    webhooks.enqueue(session, hook_id, "Push Hook", f'{{"n": {n}}}')
            receiver.wait_for(count, timeout=60)
            deadline = time.monotonic() + 30
            while outstanding(rt.db) and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            for worker in workers:
                worker.terminate()
            for worker in workers:
                assert worker.wait(30) == 0
    assert outstanding(rt.db) == []
    assert len(receiver.requests) == count
    assert sorted(got.json["n"] for got in receiver.requests) == list(range(count))
    assert receiver.max_in_flight > 3  # both workers were delivering at the same time
