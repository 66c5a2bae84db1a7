"""The `codeyard` command: serve, worker, migrate, admin, runner."""

from __future__ import annotations

import logging
import os
import sys

import click

from . import config as config_module
from . import datadir


def _config(data_dir: str | None = None, **overrides) -> config_module.Config:
    return config_module.load(data_dir=data_dir, **{k: v for k, v in overrides.items() if v is not None})


def _prepare(config: config_module.Config) -> None:
    datadir.prepare(config)
    from .db import migrate

    migrate.upgrade(config.database_url)
    datadir.protect_database(config.database_url)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """codeyard: self-hosted code hosting with a GitLab API v3 compatible JSON API."""
    datadir.restrict_umask()


@main.command()
@click.option("--host", default=None, help="Address to listen on (default 127.0.0.1, env CODEYARD_HOST).")
@click.option("--port", type=int, default=None, help="Port to listen on (default 8080, env CODEYARD_PORT).")
@click.option("--data-dir", default=None, help="Where the database, repositories and uploads live (default ./data).")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Server processes (default one per usable core, env CODEYARD_WORKERS).",
)
@click.option("--exit-with", "parent", type=int, default=None, hidden=True,
              help="Stop when process PARENT, which started this one, is gone (Linux).")
def serve(host: str | None, port: int | None, data_dir: str | None, workers: int | None, parent: int | None) -> None:
    """Apply migrations, create the admin on first start, and serve HTTP from several processes
    (and run background jobs in one worker process unless CODEYARD_WORKER=0)."""
    if parent is not None:
        _end_with_parent(parent)
    try:
        config = _config(data_dir, host=host, port=port, workers=workers)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    _prepare(config)
    _count_across_processes(config)
    _start_up(config)
    os.environ.update(config_module.to_env(config))
    processes = "process" if config.workers == 1 else "processes"
    click.echo(f"codeyard listening on http://{config.host}:{config.port} (external URL {config.base_url}), {config.workers} {processes}")
    # One job worker whatever the number of server processes: it is started here, before uvicorn
    # forks its workers, and those never start one.
    jobs = _start_worker(config) if config.embedded_worker else None
    try:
        _serve(config, config.workers)
    finally:
        if jobs is not None:
            jobs.stop()


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _end_with_parent(parent: int) -> None:
    """Have the kernel send this process SIGTERM when its parent ends (Linux's PR_SET_PDEATHSIG), as
    if stopped by hand: `make serve` passes make's pid, so that make killed even with SIGKILL leaves
    no server behind. PARENT tells whether the parent ended before the request was made."""
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "prctl"):
        raise click.UsageError("--exit-with needs Linux")
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise click.ClickException(f"--exit-with: {os.strerror(ctypes.get_errno())}")
    if os.getppid() != parent:
        raise click.ClickException(f"--exit-with: process {parent}, which started this one, is gone")


def _count_across_processes(config: config_module.Config) -> None:
    """prometheus_client's multiprocess mode for this server, its processes and its job worker
    (codeyard.metrics): the library reads the variable when it is imported, so before that."""
    if "prometheus_client" in sys.modules:
        raise RuntimeError("prometheus_client was imported before its multiprocess directory was set")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(datadir.empty_metrics_dir(config))


def _stop_before_dying(jobs) -> None:
    """A single uvicorn process re-raises the SIGTERM it stopped on once it has stopped, with the
    handler that was there before it: this one, which stops the job worker first (the `finally` of
    `serve` would not run) and then dies of the signal as expected."""
    import signal

    def stop_then_die(number, frame) -> None:
        jobs.stop()
        signal.signal(number, signal.SIG_DFL)
        signal.raise_signal(number)

    signal.signal(signal.SIGTERM, stop_then_die)


def _start_worker(config: config_module.Config):
    """The job worker beside the server: its own process (see jobs/worker.py), ending with this one,
    started again when it dies (jobs/supervisor.py)."""
    from .jobs.supervisor import Supervisor

    command = [sys.executable, "-m", "codeyard", "worker", "--data-dir", str(config.data_dir), "--exit-with", str(os.getpid())]
    supervisor = Supervisor(command, config.database_url)
    supervisor.start()
    _stop_before_dying(supervisor)
    return supervisor


# asyncio's loop, not uvloop: uvloop runs Python's at-fork handlers (and so possibly the garbage
# collector) in every child it spawns between fork and exec; with threads holding locks at that moment
# (database pools, logging) the child deadlocks before exec and the server waits on it forever. asyncio
# spawns through subprocess's C fork_exec, which runs no Python in the child. It costs a little of
# GET /api/v3/user's throughput (docs/MEASUREMENTS.md, the requests floor).
SERVER_LOOP = "asyncio"


def _serve(config: config_module.Config, workers: int) -> None:
    import uvicorn

    uvicorn.run(
        "codeyard.app:create_app",
        factory=True,
        host=config.host,
        port=config.port,
        workers=workers,
        http="codeyard.http.server:BoundedHttpToolsProtocol",
        ws="none",  # no WebSocket routes: an upgrade request is served as plain HTTP
        loop=SERVER_LOOP,
        access_log=False,
        # X-Forwarded-For names the client only when it comes from a configured proxy.
        proxy_headers=bool(config.forwarded_allow_ips),
        forwarded_allow_ips=config.forwarded_allow_ips or None,
        server_header=False,
        log_level=config.log_level,
        timeout_graceful_shutdown=10,
    )


def _start_up(config: config_module.Config) -> None:
    """What runs once before serving, on one runtime: the admin on the first start, then the pushes
    a previous server left unrecorded."""
    from .runtime import Runtime

    runtime = Runtime(config)
    try:
        _announce_root(runtime)
        _recover_pushes(runtime)
    finally:
        runtime.close()


def _announce_root(runtime) -> None:
    from .services.bootstrap import ensure_root

    config = runtime.config
    with runtime.db.transaction() as session:
        created = ensure_root(session, runtime.passwords, config.root_password, config.root_token)
    if created is None:
        click.echo("Admin login: root (its token is shown only when created; `codeyard admin token root` issues a new one)")
        return
    click.echo("Created the admin user.")
    click.echo(f"  login:    {created.username}")
    click.echo(f"  password: {created.password or '(from CODEYARD_ROOT_PASSWORD)'}")
    click.echo(f"  token:    {created.token or '(from CODEYARD_ROOT_TOKEN)'}")
    click.echo("These are shown once; keep them.")


def _recover_pushes(runtime) -> None:
    """Record the pushes a previous server moved refs for but died before recording
    (services/push_journal.py); before serving, so that they come first."""
    from .services import push_journal

    recorded = push_journal.recover(runtime)
    if recorded:
        click.echo(f"Recorded {recorded} push(es) a previous server had left unrecorded.")


@main.command()
@click.option("--data-dir", default=None, help="Data directory (default ./data).")
@click.option("--concurrency", type=int, default=None, help="Jobs run at once (default 4, env CODEYARD_WORKER_CONCURRENCY).")
@click.option("--exit-with", "parent", type=int, default=None, hidden=True, help="Stop when process PARENT is gone.")
def worker(data_dir: str | None, concurrency: int | None, parent: int | None) -> None:
    """Run background jobs (webhook deliveries) until stopped; any number may run against one database."""
    import signal
    import threading

    from .jobs import queue
    from .jobs.worker import Worker
    from .runtime import Runtime

    config = _config(data_dir)
    _prepare(config)
    logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    runtime = Runtime(config)
    stopped = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stopped.set())
    jobs = Worker.from_config(runtime, concurrency)
    jobs.start(listen=queue.wake_address(runtime.db.url))
    click.echo(f"codeyard worker {jobs.name} running {jobs.concurrency} jobs at once")
    try:
        while not stopped.wait(1.0):
            if parent is not None and os.getppid() != parent:
                break  # the server it was started beside is gone
    finally:
        jobs.stop()
        runtime.close()


@main.command()
@click.option("--data-dir", default=None, help="Data directory (default ./data).")
def migrate(data_dir: str | None) -> None:
    """Apply the database migrations."""
    config = _config(data_dir)
    _prepare(config)
    click.echo("Database is up to date.")


@main.group()
def admin() -> None:
    """Administration: users and tokens."""


@admin.command("create-user")
@click.option("--username", required=True)
@click.option("--email", required=True)
@click.option("--name", required=True)
@click.option("--password", default=None, help="Password (at least 8 characters); asked for when omitted.")
@click.option("--admin", "is_admin", is_flag=True, help="Make the user an administrator.")
@click.option("--data-dir", default=None, help="Data directory (default ./data).")
def create_user(username: str, email: str, name: str, password: str | None, is_admin: bool, data_dir: str | None) -> None:
    """Create a user."""
    from .api.v3.users import CREATE_PARAMS, fields_from
    from .errors import CodeyardError
    from .http.params import validate
    from .runtime import Runtime
    from .services import users

    if password is None:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    raw = {"username": username, "email": email, "name": name, "password": password, "admin": is_admin}
    config = _config(data_dir)
    _prepare(config)
    runtime = Runtime(config)
    try:
        args = validate(CREATE_PARAMS, raw)
        with runtime.db.transaction() as session:
            user = users.create(session, fields_from(args), runtime.passwords.hash(password))
            click.echo(f"Created user {user.username} (id {user.id}{', admin' if is_admin else ''}).")
    except CodeyardError as error:
        raise click.ClickException(_describe(error.message)) from None
    finally:
        runtime.close()


@admin.command("token")
@click.argument("username")
@click.option("--name", default="cli", show_default=True, help="A label for the token.")
@click.option("--data-dir", default=None, help="Data directory (default ./data).")
def token(username: str, name: str, data_dir: str | None) -> None:
    """Issue a new private token for USERNAME and print it."""
    from .runtime import Runtime
    from .services import credentials, users

    config = _config(data_dir)
    _prepare(config)
    runtime = Runtime(config)
    try:
        with runtime.db.transaction() as session:
            user = users.find_by_login(session, username)
            if user is None:
                raise click.ClickException(f"no user named {username}")
            _token, secret = credentials.issue_token(session, user.id, credentials.PRIVATE, name)
    finally:
        runtime.close()
    click.echo(secret)


@admin.command("runner-token")
@click.option("--reset", is_flag=True, help="Issue a new registration token (the old one stops working).")
@click.option("--data-dir", default=None, help="Data directory (default ./data).")
def runner_token(reset: bool, data_dir: str | None) -> None:
    """Print the registration token with which shared runners register."""
    from .runtime import Runtime
    from .services.ci import runners

    config = _config(data_dir)
    _prepare(config)
    runtime = Runtime(config)
    try:
        with runtime.db.transaction() as session:
            token = runners.registration_token(session, runtime, reset=reset)
    finally:
        runtime.close()
    if token is None:
        raise click.ClickException("the registration token was set from CODEYARD_RUNNER_TOKEN; --reset issues a new one")
    click.echo(token)


@main.group()
def runner() -> None:
    """The build runner: takes builds from a codeyard server and runs their commands ON THIS HOST,
    as the user running it (shell executor, no isolation). Imports nothing of the server."""


RUNNER_CONFIG_HELP = "Configuration file (default ~/.config/codeyard/runner.toml, under $XDG_CONFIG_HOME when set; env CODEYARD_RUNNER_CONFIG)."


@runner.command("register")
@click.option("--url", required=True, help="The server's URL, e.g. https://code.example.com.")
@click.option("--registration-token", required=True,
              help="The instance's shared-runner token (`codeyard admin runner-token`) or a project's runners token.")
@click.option("--tags", default="", help="Comma-separated tags: the runner takes builds whose tags it all has.")
@click.option("--description", default=None, help="Shown to administrators (default: the host name).")
@click.option("--config", "config_path", default=None, help=RUNNER_CONFIG_HELP)
def runner_register(url: str, registration_token: str, tags: str, description: str | None, config_path: str | None) -> None:
    """Register this host as a runner; writes the configuration file (0600) with its token."""
    from pathlib import Path

    from .runner import config as runner_config
    from .runner import service

    path = Path(config_path) if config_path else runner_config.default_path()
    try:
        registered = service.register(url, registration_token, tags, description, path)
    except service.RunnerError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Registered runner {registered.id}; configuration written to {path}")


@runner.command("run")
@click.option("--config", "config_path", default=None, help=RUNNER_CONFIG_HELP)
@click.option("--concurrent", type=click.IntRange(1, 64), default=1, show_default=True, help="Builds run at once.")
@click.option("--once", is_flag=True, help="Run one build, then exit.")
@click.option("--poll-interval", type=click.FloatRange(0.05, 3600), default=3.0, show_default=True,
              help="Seconds between requests for a build while there is none.")
@click.option("--update-interval", type=click.FloatRange(0.05, 3600), default=3.0, show_default=True,
              help="Seconds between trace updates of a running build (also how soon a cancel is noticed).")
@click.option("--builds-dir", default=None, help="Where builds run (default: builds/ beside the configuration file).")
def runner_run(config_path: str | None, concurrent: int, once: bool, poll_interval: float, update_interval: float,
               builds_dir: str | None) -> None:
    """Poll the server for builds and run them until stopped (SIGTERM ends running builds as failed;
    SIGQUIT lets them finish)."""
    from pathlib import Path

    from .runner import config as runner_config
    from .runner import service

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request drowns the runner's own
    options = service.RunOptions(concurrent=concurrent, once=once, poll_interval=poll_interval,
                                 update_interval=update_interval, builds_dir=Path(builds_dir) if builds_dir else None)
    path = Path(config_path) if config_path else runner_config.default_path()
    try:
        service.run(path, options)
    except service.RunnerError as error:
        raise click.ClickException(str(error)) from None


def _describe(message) -> str:
    if isinstance(message, dict):
        return "; ".join(f"{field} {', '.join(reasons)}" for field, reasons in message.items())
    return str(message)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
