"""One build, from the job the server handed out to the state reported back.

A fresh work directory; `git clone` of `repo_url` (which carries the build token) and a checkout
of the sha; the artifacts of the builds it depends on; the commands in bash; the artifacts
uploaded after a success; `success` or `failed` reported with the trace. Meanwhile a thread sends
the new part of the trace every few seconds (PATCH, or PUT of the whole trace when the server
has no incremental traces) and learns from the answers when the build was canceled, which ends
the build's processes. The build token is masked in everything written to the trace.
"""

from __future__ import annotations

import glob
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from . import VERSION, archive, process, shell
from .client import Client, ServerError
from .trace import DEFAULT_LIMIT, Trace

log = logging.getLogger("codeyard.runner")

SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
DEFAULT_TIMEOUT = 3600
TRACE_CHUNK = 256 * 1024
REPORT_ATTEMPTS = 8
SUCCESS, FAILED, CANCELED = "success", "failed", "canceled"


class JobError(Exception):
    """A job the runner cannot run as sent."""


@dataclass
class Settings:
    builds_dir: Path
    runner_token: str = ""  # build updates (PUT) carry the runner's token; the rest the build's
    runner_id: int | None = None
    description: str = ""
    update_interval: float = 3.0
    output_limit: int = DEFAULT_LIMIT
    max_artifacts_bytes: int = 1024**3
    kill_grace: float = process.KILL_GRACE
    base_env: dict[str, str] = field(default_factory=lambda: inherited_environment(os.environ))


class Build:
    def __init__(self, client: Client, job: dict, settings: Settings, shutdown: threading.Event):
        self.client = client
        self.job = job
        self.settings = settings
        self.shutdown = shutdown
        self.id = job.get("id")
        self.token = job.get("token") if isinstance(job.get("token"), str) else ""
        self.trace = Trace(settings.output_limit, secrets=(self.token,))
        self.canceled = threading.Event()
        self.sent = 0  # bytes of the trace the server holds
        self.incremental = True
        self._put_size = -1  # trace size at the last whole-trace PUT
        self._sync_lock = threading.Lock()

    def aborted(self) -> bool:
        return self.canceled.is_set() or self.shutdown.is_set()

    def execute(self) -> str:
        """Run the build and report it; the final state (`canceled` when the server canceled it)."""
        if not isinstance(self.id, int):
            raise JobError("the job has no id")
        log.info("build %s (project %s, %s) received", self.id, self.job.get("project_id"), self.job.get("name"))
        stop_streaming = threading.Event()
        streamer = threading.Thread(target=self._stream, args=(stop_streaming,), name=f"trace-{self.id}", daemon=True)
        streamer.start()
        workdir = None
        try:
            workdir = Path(tempfile.mkdtemp(prefix=f"build-{self.id}-", dir=self.settings.builds_dir))
            state = self._run(workdir)
        except JobError as error:
            self.trace.line(f"ERROR: Build failed: {error}")
            state = FAILED
        except Exception as error:
            log.exception("build %s: the runner failed", self.id)
            self.trace.line(f"ERROR: Build failed: the runner failed ({type(error).__name__})")
            state = FAILED
        finally:
            stop_streaming.set()
            streamer.join()
            if workdir is not None:
                shutil.rmtree(workdir, ignore_errors=True)
        self.trace.flush()
        if self.canceled.is_set():
            log.info("build %s was canceled on the server; stopped", self.id)
            return CANCELED
        self._report(state)
        log.info("build %s finished: %s", self.id, state)
        return state

    # --- the steps ----------------------------------------------------------------------------------

    def _run(self, workdir: Path) -> str:
        job = self.job
        sha, repo_url, commands = job.get("sha"), job.get("repo_url"), job.get("commands")
        if not isinstance(sha, str) or not SHA.match(sha):
            raise JobError(f"invalid sha {sha!r}")
        if not isinstance(repo_url, str) or urlsplit(repo_url).scheme not in ("http", "https"):
            raise JobError("repo_url is not an http(s) URL")
        if not isinstance(commands, str):
            raise JobError("the job has no commands")
        if not self.token:
            raise JobError("the job has no build token")
        timeout = job.get("timeout")
        timeout = timeout if isinstance(timeout, int) and timeout > 0 else DEFAULT_TIMEOUT
        deadline = time.monotonic() + timeout
        on = f" on {self.settings.description}" if self.settings.description else ""
        self.trace.line(f"Running with codeyard-runner {VERSION}{on}")
        self.trace.line("Using Shell executor...")
        project = workdir / "project"
        git_env = {**self.settings.base_env, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
        ref = job.get("ref") or ""

        self.trace.line(f"Cloning repository for {ref}...")
        steps = [
            (["git", "-c", "credential.helper=", "clone", "--quiet", "--no-checkout", "--", repo_url, str(project)], workdir),
            (["git", "switch", "--quiet", "--force", "--detach", "--end-of-options", sha], project),
            (["git", "remote", "set-url", "origin", without_credentials(repo_url)], project),
        ]
        for number, (argv, cwd) in enumerate(steps):
            if number == 1:
                self.trace.line(f"Checking out {sha[:8]} as {ref}...")
            result = self._command(argv, cwd, git_env, deadline)
            if not result.ok:
                return self._failed(result, timeout)

        self._fetch_dependencies(workdir, project)

        env, skipped = shell.environment(self.settings.base_env, job, str(project), self.settings.runner_id)
        for key in skipped:
            self.trace.line(f"WARNING: variable {key!r} skipped: not a valid environment variable")
        script = workdir / "script.sh"
        script.write_text(shell.script(commands))
        result = self._command(["bash", "--noprofile", "--norc", str(script)], project, env, deadline)
        if not result.ok:
            return self._failed(result, timeout)
        if not self._upload_artifacts(workdir, project, env, deadline):
            return FAILED
        self.trace.line("Build succeeded")
        return SUCCESS

    def _command(self, argv: list[str], cwd: Path, env: dict[str, str], deadline: float) -> process.Result:
        return process.run(argv, cwd=str(cwd), env=env, trace=self.trace, deadline=deadline,
                           aborted=self.aborted, grace=self.settings.kill_grace)  # fmt: skip

    def _failed(self, result: process.Result, timeout: int) -> str:
        if self.canceled.is_set():
            self.trace.line("ERROR: Build canceled")
        elif self.shutdown.is_set():
            self.trace.line("ERROR: Build failed: the runner was stopped")
        elif result.timed_out:
            self.trace.line(f"ERROR: Build failed: execution took longer than {timeout} seconds")
        else:
            self.trace.line(f"ERROR: Build failed: exit code {result.exit_code}")
        return FAILED

    def _fetch_dependencies(self, workdir: Path, project: Path) -> None:
        wanted = (self.job.get("options") or {}).get("dependencies")
        for dependency in self.job.get("depends_on_builds") or ():
            if not isinstance(dependency, dict) or not isinstance(dependency.get("id"), int):
                continue
            if isinstance(wanted, list) and dependency.get("name") not in wanted:
                continue
            if not dependency.get("artifacts_file"):
                continue
            name, build_id = dependency.get("name"), dependency["id"]
            self.trace.line(f"Downloading artifacts for {name} ({build_id})...")
            zipped = workdir / f"artifacts-{build_id}.zip"
            try:
                if not self.client.download_artifacts(build_id, self.token, zipped, self.settings.max_artifacts_bytes):
                    self.trace.line("WARNING: the server has no artifacts for it")
                    continue
                count = archive.extract(zipped, project, self.settings.max_artifacts_bytes)
            except (ServerError, archive.ArchiveError) as error:
                raise JobError(f"artifacts of {name} ({build_id}): {error}") from None
            finally:
                zipped.unlink(missing_ok=True)
            self.trace.line(f"{count} files extracted")

    def _upload_artifacts(self, workdir: Path, project: Path, env: dict[str, str], deadline: float) -> bool:
        options = (self.job.get("options") or {}).get("artifacts")
        if not isinstance(options, dict):
            return True
        patterns = [pattern for pattern in options.get("paths") or () if isinstance(pattern, str)]
        files, warnings = archive.collect(project, patterns)
        if options.get("untracked"):
            files = sorted(set(files) | set(self._untracked(project, env, deadline)))
        for warning in warnings:
            self.trace.line(f"WARNING: {warning}")
        if not files:
            self.trace.line("WARNING: no files to upload as artifacts")
            return True
        self.trace.line(f"Uploading artifacts ({len(files)} files)...")
        zipped = workdir / "artifacts.zip"
        try:
            size = archive.create(project, files, zipped)
            refused = self.client.upload_artifacts(self.id, self.token, zipped)
        except ServerError as error:
            refused = str(error)
        finally:
            zipped.unlink(missing_ok=True)
        if refused is not None:
            self.trace.line(f"ERROR: Uploading artifacts failed: {refused}")
            return False
        self.trace.line(f"Uploaded {size} bytes")
        return True

    def _untracked(self, project: Path, env: dict[str, str], deadline: float) -> list[str]:
        listed = subprocess.run(["git", "ls-files", "-z", "--others"], cwd=project, env=env, capture_output=True,
                                timeout=max(1.0, deadline - time.monotonic()))  # fmt: skip
        names = [name.decode("utf-8", "surrogateescape") for name in listed.stdout.split(b"\0") if name]
        return archive.collect(project, [glob.escape(name) for name in names])[0]

    # --- talking to the server while it runs, and at the end --------------------------------------------

    def _stream(self, stop: threading.Event) -> None:
        while not stop.wait(self.settings.update_interval) and not self.canceled.is_set():
            self._sync()

    def _sync(self) -> None:
        """Send what the server does not have of the trace; a keep-alive when there is nothing new.
        A network error is logged and retried at the next turn."""
        with self._sync_lock:
            try:
                if self.incremental and self._append():
                    return
                if not self.incremental and len(self.trace) != self._put_size:
                    size = len(self.trace)
                    alive = self.client.update_build(self.id, self.settings.runner_token, "running", self.trace.text())
                    self._put_size = self.sent = size
                else:
                    alive = self.client.update_build(self.id, self.settings.runner_token, "running")
                if not alive:
                    self.canceled.set()
            except ServerError as error:
                log.warning("build %s: trace update failed: %s", self.id, error)

    def _append(self) -> bool:
        """PATCH the new part of the trace in chunks; whether anything was sent."""
        mismatches = 0
        sent_any = False
        while data := self.trace.since(self.sent, TRACE_CHUNK):
            answer = self.client.append_trace(self.id, self.token, self.sent, data)
            if answer.accepted:
                self.sent += len(data)
                sent_any = True
            if answer.gone:
                self.canceled.set()
                return True
            if answer.unsupported:
                self.incremental = False
                return False
            if not answer.accepted:
                mismatches += 1
                if answer.server_size is None or answer.server_size > len(self.trace) or mismatches > 2:
                    self.incremental = False
                    return False
                self.sent = answer.server_size
        return sent_any

    def _report(self, state: str) -> None:
        """Send the rest of the trace and the final state, retrying through network errors."""
        for attempt in range(REPORT_ATTEMPTS):
            self._sync_rest()
            whole = None if self.incremental and self.sent == len(self.trace) else self.trace.text()
            try:
                if not self.client.update_build(self.id, self.settings.runner_token, state, whole):
                    log.info("build %s: the server no longer runs it (canceled?)", self.id)
                return
            except ServerError as error:
                log.warning("build %s: reporting %s failed (attempt %d): %s", self.id, state, attempt + 1, error)
                time.sleep(min(2**attempt, 30))
        log.error("build %s: could not report its state %s", self.id, state)

    def _sync_rest(self) -> None:
        if not self.incremental:
            return
        with self._sync_lock:
            try:
                self._append()
            except ServerError as error:
                log.warning("build %s: trace update failed: %s", self.id, error)


def inherited_environment(environ) -> dict[str, str]:
    """What builds inherit of the runner's environment: everything but codeyard's own settings
    (a runner started beside a server must not hand its secret key or database URL to builds)."""
    return {key: value for key, value in environ.items() if not key.startswith("CODEYARD_")}


def without_credentials(url: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
