"""The `codeyard` command: help everywhere, migrate, admin commands, first-start bootstrap."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from codeyard.db.engine import Database
from codeyard.db.models import ApplicationSetting, Token, User
from codeyard.services import credentials
from codeyard.services.bootstrap import ROOT_PROJECTS_LIMIT

from .support import free_port

COMMANDS = [[], ["serve"], ["migrate"], ["admin"], ["admin", "create-user"], ["admin", "token"], ["admin", "runner-token"]]


# Cheap password hashing: every process hashes a dummy password on start.
CHEAP_ARGON2 = {"CODEYARD_ARGON2_MEMORY_KIB": "1024", "CODEYARD_ARGON2_TIME_COST": "1",
                "CODEYARD_ARGON2_PARALLELISM": "1"}


def run(args, data_dir, env=None, **kwargs):
    environment = {**os.environ, **CHEAP_ARGON2, **(env or {})}
    environment.pop("CODEYARD_DATABASE_URL", None)
    environment["CODEYARD_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "codeyard", *args], env=environment, capture_output=True, text=True, **kwargs)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "codeyard")
def test_every_command_has_help(command, tmp_path):
    result = run([*command, "--help"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout


def test_migrate_create_user_and_token(tmp_path):
    assert run(["migrate"], tmp_path).returncode == 0
    created = run(["admin", "create-user", "--username", "eve", "--email", "eve@example.com", "--name", "Eve",
                   "--password", "password123", "--admin"], tmp_path)
    assert created.returncode == 0, created.stderr
    assert "Created user eve" in created.stdout
    duplicate = run(["admin", "create-user", "--username", "eve", "--email", "x@example.com", "--name", "E",
                     "--password", "password123"], tmp_path)
    assert duplicate.returncode != 0 and "already been taken" in duplicate.stderr
    invalid = run(["admin", "create-user", "--username", "-x", "--email", "bad", "--name", "E", "--password", "short"], tmp_path)
    assert invalid.returncode != 0 and "email" in invalid.stderr
    issued = run(["admin", "token", "eve"], tmp_path)
    assert issued.returncode == 0
    secret = issued.stdout.strip()
    db = Database(f"sqlite:///{tmp_path / 'codeyard.db'}")
    try:
        with db.session() as session:
            user = session.query(User).filter_by(username="eve").one()
            assert user.is_admin
            assert session.query(Token).filter_by(user_id=user.id, digest=credentials.digest(secret)).count() == 1
    finally:
        db.dispose()
    assert run(["admin", "token", "nobody"], tmp_path).returncode != 0


def test_runner_registration_token(tmp_path):
    first = run(["admin", "runner-token"], tmp_path)
    assert first.returncode == 0, first.stderr
    token = first.stdout.strip()
    assert len(token) == 20 and run(["admin", "runner-token"], tmp_path).stdout.strip() == token
    reset = run(["admin", "runner-token", "--reset"], tmp_path).stdout.strip()
    assert len(reset) == 20 and reset != token
    assert run(["admin", "runner-token"], tmp_path).stdout.strip() == reset
    given = run(["admin", "runner-token"], tmp_path / "given", env={"CODEYARD_RUNNER_TOKEN": "from-the-operator"})
    assert given.returncode != 0 and "CODEYARD_RUNNER_TOKEN" in given.stderr
    db = Database(f"sqlite:///{tmp_path / 'given' / 'codeyard.db'}")
    try:
        with db.session() as session:
            stored = session.get(ApplicationSetting, 1).runners_registration_token_digest
            assert stored == credentials.digest("from-the-operator")
    finally:
        db.dispose()


def _serve(data_dir, port, env):
    """`codeyard serve` in one process without a job worker, unless ENV asks for more."""
    environment = {**os.environ, **CHEAP_ARGON2, "CODEYARD_WORKERS": "1", "CODEYARD_WORKER": "0", **env,
                   "CODEYARD_DATA_DIR": str(data_dir), "CODEYARD_LOG_LEVEL": "warning"}
    environment.pop("CODEYARD_DATABASE_URL", None)
    return subprocess.Popen([sys.executable, "-m", "codeyard", "serve", "--port", str(port)], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_for(process, url):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read()
        try:
            if httpx.get(url + "/-/health").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("server did not start")


def test_first_start_creates_root_once(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {"CODEYARD_ROOT_PASSWORD": "first-password", "CODEYARD_ROOT_TOKEN": "firsttoken0123456789"}
    for attempt, extra in enumerate([env, {"CODEYARD_ROOT_PASSWORD": "second-password", "CODEYARD_ROOT_TOKEN": "other"}]):
        process = _serve(tmp_path, port, extra)
        try:
            _wait_for(process, url)
            root = httpx.get(f"{url}/api/v3/user", headers={"PRIVATE-TOKEN": "firsttoken0123456789"}).json()
            assert root["username"] == "root" and root["projects_limit"] == ROOT_PROJECTS_LIMIT and root["can_create_project"]
            login = httpx.post(f"{url}/api/v3/session", json={"login": "root", "password": "first-password"})
            assert login.status_code == 201 and login.json()["is_admin"] is True
            assert httpx.get(f"{url}/api/v3/user", headers={"PRIVATE-TOKEN": "other"}).status_code == 401
        finally:
            process.terminate()
            output = process.communicate(timeout=30)[0]
        if attempt == 0:
            assert "login:    root" in output
        else:
            assert "Created the admin user" not in output and "root" in output


def _children(pid: int) -> list[str]:
    """Command lines of the processes PID started (Linux /proc)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
            try:
                found.append(Path(f"/proc/{child}/cmdline").read_text().replace("\0", " "))
            except FileNotFoundError:
                continue
    return found


def test_serve_runs_the_asked_number_of_processes_and_one_job_worker(tmp_path):
    port = free_port()
    process = _serve(tmp_path, port, {"CODEYARD_WORKERS": "2", "CODEYARD_WORKER": "1"})
    try:
        _wait_for(process, f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 30
        while True:
            children = _children(process.pid)
            servers = [c for c in children if "spawn_main" in c]
            if len(servers) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(servers) == 2, children
        assert len([c for c in children if "codeyard worker" in c]) == 1, children
        assert not any("codeyard worker" in c for pid in _server_pids(process.pid) for c in _children(int(pid)))
    finally:
        process.terminate()
        output = process.communicate(timeout=30)[0]
    assert "2 processes" in output


def _server_pids(pid: int) -> list[str]:
    return [child for task in os.listdir(f"/proc/{pid}/task") for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]


def test_serve_refuses_a_bad_number_of_processes(tmp_path):
    for args, env in ((["--workers", "0"], {}), ([], {"CODEYARD_WORKERS": "many"})):
        result = subprocess.run(
            [sys.executable, "-m", "codeyard", "serve", "--data-dir", str(tmp_path), *args],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert result.returncode == 2, result.stderr
        assert "workers" in result.stderr.lower()
        assert not (tmp_path / "codeyard.db").exists()


def test_first_start_prints_random_secrets(tmp_path):
    port = free_port()
    process = _serve(tmp_path, port, {})
    try:
        _wait_for(process, f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        output = process.communicate(timeout=30)[0]
    lines = dict(line.strip().split(":", 1) for line in output.splitlines() if line.strip().startswith(("password:", "token:")))
    token, password = lines["token"].strip(), lines["password"].strip()
    assert len(token) == 20 and len(password) == 16


CHILD_PROBE = """
import asyncio, os, sys
from uvicorn.config import Config
from codeyard.cli import SERVER_LOOP
os.register_at_fork(after_in_child=lambda: os.write(2, b"python ran in the child"))

async def spawn():
    process = await asyncio.create_subprocess_exec("git", "--version", stdout=asyncio.subprocess.DEVNULL)
    await process.wait()

with asyncio.Runner(loop_factory=Config(app=None, loop=sys.argv[1]).get_loop_factory()) as runner:
    runner.run(spawn())
"""


@pytest.mark.parametrize("loop", ["SERVER_LOOP", "uvloop"])
def test_the_servers_event_loop_runs_no_python_in_spawned_children(loop):
    """Python code between fork and exec can deadlock on a lock another thread held at the fork; the
    server's loop must spawn git without it (uvloop does run it: the probe shows the check works)."""
    from codeyard.cli import SERVER_LOOP

    chosen = SERVER_LOOP if loop == "SERVER_LOOP" else loop
    ran = subprocess.run([sys.executable, "-c", CHILD_PROBE, chosen], capture_output=True, check=True)
    assert (b"python ran in the child" in ran.stderr) == (chosen == "uvloop")


ROOT = Path(__file__).resolve().parents[1]


def _stat(pid: int) -> tuple[int, int] | None:
    """Parent and start time of PID (Linux /proc), None once it is gone or a zombie nobody reaps."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] == "Z" else (int(fields[1]), int(fields[19]))


def _descendants(pid: int) -> dict[int, int]:
    """The living processes PID started, and theirs: pid -> start time (which tells a reused pid)."""
    stats = {int(entry): stat for entry in os.listdir("/proc") if entry.isdigit() and (stat := _stat(int(entry)))}
    found: dict[int, int] = {}
    frontier = {pid}
    while frontier:
        frontier = {child for child, (parent, _) in stats.items() if parent in frontier and child not in found}
        found.update((child, stats[child][1]) for child in frontier)
    return found


def _alive(processes: dict[int, int]) -> list[int]:
    return [pid for pid, start in processes.items() if (stat := _stat(pid)) and stat[1] == start]


def _wait_for_health(process, port, log) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        try:
            if httpx.get(f"http://127.0.0.1:{port}/-/health").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)


def test_killing_make_serve_stops_the_server_and_its_processes(tmp_path):
    """`make serve` in a terminal stops on Ctrl-C (every process of the group gets it) and on a
    SIGTERM to make (make passes it on); a SIGKILL to make alone, or make dying otherwise, must
    not leave the server, its processes and its job worker running."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("CODEYARD_", "MAKE", "MFLAGS"))}
    log = tmp_path / "make.log"
    make = subprocess.Popen(["make", "-C", str(ROOT), "serve", f"PORT={port}", f"DATA={tmp_path / 'data'}", "WORKERS=2"],
                            env={**environment, **CHEAP_ARGON2}, stdout=log.open("wb"), stderr=subprocess.STDOUT)  # fmt: skip
    started: dict[int, int] = {}
    try:
        _wait_for_health(make, port, log)
        started = _descendants(make.pid)
        assert len(started) == 5, started  # serve, 2 server processes, their tracker, the job worker
        make.kill()
        make.wait()
        deadline = time.monotonic() + 30
        while _alive(started) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive(started) == [], log.read_text()
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/-/health", timeout=5)
    finally:
        if make.poll() is None:
            make.kill()
        for pid in _alive(started):
            os.kill(pid, signal.SIGKILL)


def test_serve_asked_to_end_with_a_process_that_is_not_its_parent_does_not_start(tmp_path):
    result = run(["serve", "--exit-with", str(os.getpid() + 10**6), "--port", str(free_port())], tmp_path, timeout=60)
    assert result.returncode != 0 and "is gone" in result.stderr
    assert not (tmp_path / "codeyard.db").exists()
