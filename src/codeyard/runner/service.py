"""`codeyard runner register` and `codeyard runner run`.

`run` polls the server for builds from N threads. Nothing to do (404): ask again after the poll
interval. A network error or a server error: log it and wait longer (doubling, up to a minute),
then go on. SIGINT/SIGTERM stop it at once: running builds are ended and reported failed.
SIGQUIT stops it gracefully: no new builds, the running ones finish.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from . import config as config_module
from .build import Build, JobError, Settings
from .client import Client, ServerError

log = logging.getLogger("codeyard.runner")

MAX_BACKOFF = 60.0


class RunnerError(Exception):
    """A failure to report to the user (bad configuration, refused registration)."""


def register(url: str, registration_token: str, tags: str, description: str | None, config_path: Path) -> config_module.RunnerConfig:
    """Register with the server and write CONFIG_PATH (which must not exist yet)."""
    try:
        url = config_module.server_url(url)
        tag_list = config_module.parse_tags(tags or "")
    except config_module.ConfigError as error:
        raise RunnerError(str(error)) from None
    if config_path.exists():
        raise RunnerError(f"{config_path} already exists; remove it or pass another --config")
    description = socket.gethostname() if description is None else description
    client = Client(url)
    try:
        runner_id, token = client.register_runner(registration_token, description, tag_list)
    except ServerError as error:
        raise RunnerError(f"registration failed: {error}") from None
    finally:
        client.close()
    runner = config_module.RunnerConfig(url=url, token=token, id=runner_id, description=description, tags=tag_list)
    try:
        config_module.write(config_path, runner)
    except config_module.ConfigError as error:
        raise RunnerError(str(error)) from None
    return runner


@dataclass
class RunOptions:
    concurrent: int = 1
    once: bool = False
    poll_interval: float = 3.0
    update_interval: float = 3.0
    output_limit: int | None = None
    builds_dir: Path | None = None


class Runner:
    def __init__(self, runner: config_module.RunnerConfig, config_path: Path, options: RunOptions):
        self.config = runner
        self.options = options
        builds_dir = options.builds_dir or runner.builds_path(config_path)
        builds_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.settings = Settings(builds_dir=builds_dir.resolve(), runner_token=runner.token, runner_id=runner.id,
                                 description=runner.description, update_interval=options.update_interval)  # fmt: skip
        if options.output_limit:
            self.settings.output_limit = options.output_limit
        self.client = Client(runner.url)
        self.shutdown = threading.Event()  # end running builds and stop
        self.draining = threading.Event()  # take no more builds
        self.builds_run = 0
        self._count_lock = threading.Lock()

    def serve(self) -> int:
        workers = 1 if self.options.once else max(1, self.options.concurrent)
        threads = [threading.Thread(target=self._poll, name=f"runner-{number}", daemon=True) for number in range(workers)]
        for thread in threads:
            thread.start()
        log.info("runner %s polling %s with %d worker(s)", self.config.id or "", self.config.url, workers)
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.5)
        finally:
            self.client.close()
        return self.builds_run

    def stop(self, graceful: bool = False) -> None:
        self.draining.set()
        if not graceful:
            self.shutdown.set()

    def _poll(self) -> None:
        backoff = self.options.poll_interval
        while not self.draining.is_set():
            try:
                job = self.client.request_job(self.config.token)
            except ServerError as error:
                log.warning("asking for a build failed: %s; again in %.1f s", error, backoff)
                self.draining.wait(backoff)
                backoff = min(max(backoff * 2, 1.0), MAX_BACKOFF)
                continue
            backoff = self.options.poll_interval
            if job is None:
                self.draining.wait(self.options.poll_interval)
                continue
            self._run(job)
            if self.options.once:
                self.draining.set()

    def _run(self, job: dict) -> None:
        try:
            Build(self.client, job, self.settings, self.shutdown).execute()
        except JobError as error:
            log.error("a job could not be run: %s", error)
        with self._count_lock:
            self.builds_run += 1


def run(config_path: Path, options: RunOptions) -> int:
    """Load the configuration and poll until stopped (or, with `once`, until one build ran)."""
    try:
        runner = config_module.load(config_path)
    except config_module.ConfigError as error:
        raise RunnerError(str(error)) from None
    service = Runner(runner, config_path, options)
    signal.signal(signal.SIGINT, lambda *_: service.stop())
    signal.signal(signal.SIGTERM, lambda *_: service.stop())
    signal.signal(signal.SIGQUIT, lambda *_: service.stop(graceful=True))
    return service.serve()
