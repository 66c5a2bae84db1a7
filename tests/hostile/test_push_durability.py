"""A push's follow-up survives the death of the server that received it (issue 30).

git moves the refs inside `git receive-pack`; the event, the webhook job, the pipeline (and the
merge request refresh, the default branch) are recorded by the server afterwards. A server killed
in between must not lose them: its push journal is recorded by the next `codeyard serve` (or the
job worker), exactly once; a journal whose server still runs is left alone.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from codeyard.db.models import Event, Job, Pipeline, RecordedPush
from codeyard.jobs.worker import Worker
from codeyard.services import push_journal, pushes, webhooks
from codeyard.services.events import PUSHED

from ..githttp.conftest import Git, repo_url, server_ref
from ..support import LiveServer, WorkingCopy

ZERO = "0" * 40
CI = "job:\n  script: echo hi\n"


@pytest.fixture
def owner(users):
    return users.create("owner")


@pytest.fixture
def project(projects, owner, api):
    project = projects.create(owner, name="demo")
    hook = {"url": "http://hooks.example.com/push", "push_events": True}
    assert api.as_(owner).post(f"/projects/{project.id}/hooks", json=hook).status_code == 201
    return project


def follow_up(rt, project) -> dict[str, int]:
    """What recording a push leaves behind, counted."""
    with rt.db.session(write=False) as session:
        count = lambda *where: session.scalar(select(func.count()).where(*where))  # noqa: E731
        return {
            "events": count(Event.project_id == project.id, Event.action == PUSHED),
            "hook jobs": count(Job.kind == webhooks.KIND),
            "pipelines": count(Pipeline.project_id == project.id),
            "recorded": count(RecordedPush.push_id.is_not(None)),
        }


ONCE = {"events": 1, "hook jobs": 1, "pipelines": 1, "recorded": 1}
NOTHING = {"events": 0, "hook jobs": 0, "pipelines": 0, "recorded": 0}


def journals(rt) -> list[str]:
    folder = push_journal.directory(rt.config)
    return sorted(os.listdir(folder)) if folder.exists() else []


@pytest.fixture
def pushed(rt, project, tmp_path) -> str:
    """master with a .gitlab-ci.yml, pushed straight into the bare repository (no server, no hooks,
    nothing recorded): the state a server leaves when it dies after git moved the ref."""
    work = WorkingCopy(rt, project, tmp_path / "work")
    sha = work.commit("first", {".gitlab-ci.yml": CI})
    work.push()
    return sha


def dead_server_journal(rt, project, owner, sha: str, push_id: str = "a" * 32) -> str:
    """A journal as a server that died leaves it: named, unlocked, with what the hook appended."""
    folder = push_journal.directory(rt.config)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    lines = [
        f"codeyard-push {push_id} {project.id} {owner.id}",
        f"{ZERO} {sha} refs/heads/master",
        f"{ZERO} {sha} HEAD",  # git reports the symbolic HEAD following the branch
        f"{ZERO} {sha[:20]}",  # torn by a crash while appending
    ]
    name = f"{push_id}{push_journal.SUFFIX}"
    (folder / name).write_text("\n".join(lines))
    return name


# --- recovery, in process (both backends) ------------------------------------------------------------


def test_a_dead_servers_journal_is_recorded_once(rt, project, owner, pushed):
    dead_server_journal(rt, project, owner, pushed)
    assert follow_up(rt, project) == NOTHING

    assert push_journal.recover(rt) == 1
    assert follow_up(rt, project) == ONCE
    assert journals(rt) == []
    with rt.db.session(write=False) as session:
        event = session.scalars(select(Event).where(Event.project_id == project.id, Event.action == PUSHED)).one()
        assert event.data["after"] == pushed and event.data["ref"] == "refs/heads/master"

    assert push_journal.recover(rt) == 0
    assert follow_up(rt, project) == ONCE


def test_a_journal_whose_push_is_recorded_is_only_removed(rt, project, owner, pushed):
    """The server committed the recording and died before removing its journal."""
    with rt.db.transaction() as session:
        session.add(RecordedPush(push_id="b" * 32))
    dead_server_journal(rt, project, owner, pushed, push_id="b" * 32)

    assert push_journal.recover(rt) == 0
    assert journals(rt) == []
    assert follow_up(rt, project) == {**NOTHING, "recorded": 1}


def test_a_journal_of_a_running_server_is_left_alone(rt, project, owner, pushed):
    journal = push_journal.Journal.create(rt.config, project.id, owner.id)
    os.write(journal.fd, f"{ZERO} {pushed} refs/heads/master\n".encode())

    assert push_journal.recover(rt) == 0
    assert journals(rt) == [journal.path.name]
    assert follow_up(rt, project) == NOTHING

    journal.release()  # the server died
    assert push_journal.recover(rt) == 1
    assert follow_up(rt, project) == ONCE and journals(rt) == []


def test_a_journal_stays_locked_while_git_runs_after_its_server_died(rt, project, owner, pushed):
    """git inherits the journal's descriptor (the transport's keep_fds): a server that dies while
    git still runs must not let recovery record the push before git has moved every ref."""
    journal = push_journal.Journal.create(rt.config, project.id, owner.id)
    os.write(journal.fd, f"{ZERO} {pushed} refs/heads/master\n".encode())
    git = subprocess.Popen(["sleep", "600"], pass_fds=(journal.fd,))
    try:
        journal.release()  # the server is gone
        assert push_journal.recover(rt) == 0 and journals(rt) == [journal.path.name]
    finally:
        git.kill()
        git.wait(30)
    assert push_journal.recover(rt) == 1
    assert follow_up(rt, project) == ONCE


def test_the_job_worker_recovers_journals(rt, project, owner, pushed):
    dead_server_journal(rt, project, owner, pushed)
    worker = Worker(rt, poll=0.05)
    worker.start()
    try:
        deadline = time.monotonic() + 60
        while journals(rt) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop()
    assert follow_up(rt, project) == ONCE and journals(rt) == []


def test_a_journal_is_created_locked_and_synced_before_git_starts(rt, project, owner):
    journal = push_journal.Journal.create(rt.config, project.id, owner.id)
    try:
        assert journals(rt) == [journal.path.name]  # no temporary name left
        assert journal.path.read_text() == f"codeyard-push {journal.header.push_id} {project.id} {owner.id}\n"
        other = os.open(journal.path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    finally:
        journal.finish()
    assert journals(rt) == []


def test_journal_lines_are_merged_per_ref_and_refused_refs_left_out():
    a, b, c = "a" * 40, "b" * 40, "c" * 40
    text = "\n".join([
        f"codeyard-push {'d' * 32} 7 9",
        f"{a} {b} refs/heads/master",
        f"{b} {c} refs/heads/master",  # the same ref again: the first old, the last new
        f"{ZERO} {ZERO} refs/heads/gone",  # the packed-refs side of a deletion
        f"{a} {ZERO} refs/heads/gone",
        f"{ZERO} {a} HEAD",
        f"{ZERO} {a} refs/heads/-x",  # a name codeyard refuses
        f"{ZERO} {a} refs/tags/v1",
        f"{ZERO} {a} refs/tags/v2 extra",
        f"{ZERO} {a[:17]}",  # torn
    ])
    header, updates = push_journal.parse(text)
    assert header == push_journal.Header("d" * 32, 7, 9)
    assert [(u.ref, u.before, u.after) for u in updates] == [
        ("refs/heads/master", a, c),
        ("refs/heads/gone", a, ZERO),
        ("refs/tags/v1", ZERO, a),
    ]
    assert push_journal.parse(f"codeyard-push ../x 7 9\n{a} {b} refs/heads/master") == (None, [])


# --- a live server killed between the ref update and the recording ----------------------------------

# The server, with one more post-push step that marks the moment and then blocks: the refs have
# moved and the recording's transaction is open, uncommitted, when the test kills the process.
# The step is added once `serve` has set up its metrics directory, which must come before the
# services (and prometheus_client) are imported (cli._count_across_processes).
BLOCKED_SERVER = """
import os, sys, time
from codeyard import cli

def blocked(session, rt, push):
    open(os.environ["TEST_RECORDING_STARTED"], "w").close()
    time.sleep(600)

serve = cli._serve

def serve_blocked(config, workers):
    from codeyard.services import pushes
    pushes.STEPS = (*pushes.STEPS, blocked)
    serve(config, workers)

cli._serve = serve_blocked
sys.argv[0] = "codeyard"
cli.main()
"""


@pytest.fixture
def server_config(rt):
    if not rt.db.is_sqlite and os.environ.get("CODEYARD_TEST_ALL_BACKENDS") != "1":
        pytest.skip("process-level flows run on SQLite (tests/conftest.py)")
    return rt.config


def test_a_push_survives_the_server_dying_before_recording_it(rt, project, owner, server_config, tmp_path):
    started = tmp_path / "recording-started"
    blocked = LiveServer(server_config, tmp_path)  # its port, URL and environment
    log = (tmp_path / "blocked.log").open("ab")
    server = subprocess.Popen(
        [sys.executable, "-c", BLOCKED_SERVER, "serve", "--host", "127.0.0.1", "--port", str(blocked.port),
         "--data-dir", str(server_config.data_dir), "--workers", "1"],
        env={**blocked.env(), "TEST_RECORDING_STARTED": str(started)}, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    (tmp_path / "client").mkdir()
    git = Git(tmp_path / "client")
    work = git.new_work("work")
    sha = git.commit(work, ".gitlab-ci.yml", CI, "first commit")
    client = None
    try:
        _wait_for(lambda: _healthy(blocked), "the blocked server to start")
        client = subprocess.Popen(["git", "push", repo_url(blocked, project, owner), "master"], cwd=work,
                                  env=git.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        _wait_for(started.exists, "the recording to start")
        assert server_ref(rt, project, "refs/heads/master") == sha  # git has moved the ref
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(30)
        if client is not None:
            client.kill()
            client.wait(30)
        blocked.http.close()
    assert follow_up(rt, project) == NOTHING  # the recording died with its server

    restarted = LiveServer(server_config, tmp_path)  # `codeyard serve`, no job worker
    restarted.start()
    restarted.stop()
    assert follow_up(rt, project) == ONCE
    assert journals(rt) == []
    assert push_journal.recover(rt) == 0
    assert follow_up(rt, project) == ONCE


def _healthy(server: LiveServer) -> bool:
    try:
        return server.http.get("/-/health").status_code == 200
    except Exception:
        return False


def _wait_for(condition, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


# --- refs the server moves itself (branches and files API) -----------------------------------------


class StepFailsOnce:
    """A post-push step that fails the first recording: the ref has moved, the transaction is lost
    (as when the process dies before its commit)."""

    def __init__(self):
        self.failed = False

    def __call__(self, session, rt, push):
        if not self.failed:
            self.failed = True
            raise RuntimeError("the recording's transaction is lost")


@pytest.mark.parametrize("change", ["create branch", "delete branch", "commit file"])
def test_a_ref_moved_by_the_api_is_recorded_when_its_transaction_is_lost(rt, project, owner, pushed, api, monkeypatch, change):
    base = f"/projects/{project.id}/repository"
    if change == "delete branch":
        dead_server_journal(rt, project, owner, pushed)  # master recorded: the default branch
        assert push_journal.recover(rt) == 1
        assert api.as_(owner).post(f"{base}/branches", json={"branch_name": "topic", "ref": "master"}).status_code == 201
    before = follow_up(rt, project)
    monkeypatch.setattr(pushes, "STEPS", (*pushes.STEPS, StepFailsOnce()))
    request = {
        "create branch": lambda: api.as_(owner).post(f"{base}/branches", json={"branch_name": "topic", "ref": "master"}),
        "delete branch": lambda: api.as_(owner).delete(f"{base}/branches/topic"),
        "commit file": lambda: api.as_(owner).post(f"{base}/files", json={
            "file_path": "new.txt", "branch_name": "master", "content": "x", "commit_message": "add"}),
    }[change]
    assert request().status_code == 500
    # the ref moved all the same
    if change == "create branch":
        assert server_ref(rt, project, "refs/heads/topic") == pushed
    elif change == "delete branch":
        assert server_ref(rt, project, "refs/heads/topic") is None
    else:
        assert server_ref(rt, project, "refs/heads/master") not in (None, pushed)
    assert follow_up(rt, project) == before

    assert push_journal.recover(rt) == 1
    after = follow_up(rt, project)
    assert after["events"] == before["events"] + 1 and after["recorded"] == before["recorded"] + 1
    assert push_journal.recover(rt) == 0 and journals(rt) == []


def test_a_refused_api_change_leaves_no_journal(rt, project, owner, pushed, api):
    base = f"/projects/{project.id}/repository"
    response = api.as_(owner).post(f"{base}/files", json={
        "file_path": ".gitlab-ci.yml", "branch_name": "master", "content": "x", "commit_message": "again"})
    assert response.status_code == 400
    response = api.as_(owner).post(f"{base}/branches", json={"branch_name": "topic", "ref": "no-such-ref"})
    assert response.status_code == 400
    assert journals(rt) == []
