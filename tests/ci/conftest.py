"""End to end: a real server process, a real runner process (`codeyard runner run`), real git
pushes over HTTP; the builds are watched through the API."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeyard.db.models import Project
from codeyard.services import projects as project_service

from ..githttp.conftest import Git, repo_url

FINISHED = ("success", "failed", "canceled")


class RunnerProcess:
    """`codeyard runner register` then `codeyard runner run` as the README gives them (the default
    configuration, HOME at ROOT, in a directory standing for a checkout), polling and updating often."""

    def __init__(self, root: Path, url: str, registration_token: str, *options: str):
        self.root = root
        self.config = root / ".config" / "codeyard" / "runner.toml"
        self.checkout = root / "checkout"
        self.checkout.mkdir()
        self.log_path = root / "runner.log"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CODEYARD_", "XDG_"))}
        self.env["HOME"] = str(root)
        registered = subprocess.run(
            [sys.executable, "-m", "codeyard", "runner", "register", "--url", url, "--registration-token", registration_token,
             "--description", "e2e runner"],
            cwd=self.checkout, env=self.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert registered.returncode == 0, registered.stderr
        assert f"configuration written to {self.config}" in registered.stdout
        self.process = subprocess.Popen(
            [sys.executable, "-m", "codeyard", "runner", "run", "--poll-interval", "0.2", "--update-interval", "0.5", *options],
            cwd=self.checkout, env=self.env, stdout=self.log_path.open("ab"), stderr=subprocess.STDOUT,
        )  # fmt: skip

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def owner(users):
    return users.create("owner")


@pytest.fixture
def project(projects, owner):
    return projects.create(owner, name="ci-demo")


@pytest.fixture
def start_runner(live, rt, project, tmp_path):
    """Registers (with the project's runners token) and starts runner processes; stops them after."""
    started: list[RunnerProcess] = []

    def start(*options: str) -> RunnerProcess:
        with rt.db.session() as session:
            token = project_service.runners_token(rt.secret_key, session.get(Project, project.id))
        root = tmp_path / f"runner{len(started)}"
        root.mkdir()
        started.append(RunnerProcess(root, live.base_url, token, *options))
        return started[-1]

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def runner(start_runner):
    return start_runner("--concurrent", "2")


@pytest.fixture
def git(tmp_path) -> Git:
    root = tmp_path / "git"
    root.mkdir()
    return Git(root)


class Pusher:
    """A working copy of the project pushed over HTTP as its owner."""

    def __init__(self, git: Git, live, project, owner):
        self.git = git
        self.work = git.new_work("work")
        self.url = repo_url(live, project, owner)

    def commit(self, files: dict[str, str], message: str = "change") -> str:
        for name, content in files.items():
            (self.work / name).parent.mkdir(parents=True, exist_ok=True)
            (self.work / name).write_text(content)
            self.git.run("add", name, cwd=self.work)
        self.git.run("commit", "-q", "-m", message, cwd=self.work)
        return self.git.run("rev-parse", "HEAD", cwd=self.work).stdout.strip()

    def push(self, *refspecs: str) -> None:
        self.git.run("push", "-q", self.url, *(refspecs or ("master",)), cwd=self.work)


@pytest.fixture
def pusher(git, live, project, owner) -> Pusher:
    return Pusher(git, live, project, owner)


def wait_for(check, what: str, runner: RunnerProcess | None = None, timeout: float = 60.0):
    """Poll CHECK until it returns something truthy; fail with the runner's log after TIMEOUT."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            log = runner.log() if runner else ""
            raise AssertionError(f"timed out waiting for {what}; runner log:\n{log}")
        time.sleep(0.1)
