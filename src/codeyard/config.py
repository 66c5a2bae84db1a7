"""Typed settings of one codeyard process, read from CODEYARD_* environment variables.

These are the deployment settings (where data lives, which database, the external URL).
Instance behaviour that admins change at run time lives in the database instead
(`services.settings`, the `/application/settings` API).
"""

from __future__ import annotations

import functools
import ipaddress
import os
from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_METRICS_ALLOW = "127.0.0.0/8,::1/128"  # loopback, as GitLab's monitoring whitelist


@dataclass(frozen=True)
class Config:
    data_dir: Path
    database_url: str
    base_url: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    root_password: str | None = None
    root_token: str | None = None
    # argon2id cost; the defaults are argon2-cffi's (RFC 9106 low-memory profile).
    argon2_time_cost: int = 3
    argon2_memory_kib: int = 65536
    argon2_parallelism: int = 4
    # Password checks: at most `password_workers` argon2 runs at once, `password_queue` waiting (503
    # beyond); `password_failure_limit` failures per account or address within the window -> 429.
    password_workers: int = 2
    password_queue: int = 8
    password_failure_limit: int = 10
    password_failure_window: int = 60  # seconds
    # Proxies whose X-Forwarded-For names the client (uvicorn's forwarded_allow_ips); empty: none.
    forwarded_allow_ips: str = ""
    log_level: str = "info"
    secret_key: str | None = None  # CODEYARD_SECRET_KEY; else <data dir>/secret_key, created on first use
    # CODEYARD_RUNNER_TOKEN: the shared runners' registration token, taken on first use (else derived).
    runner_token: str | None = None
    # The HTTP edge (codeyard.http.server): seconds to send a request head, seconds between two
    # pieces of a request body, open connections per server process.
    header_timeout: float = 20.0
    body_timeout: float = 60.0
    max_connections: int = 512
    archive_cache_mb: int = 1024  # archives kept on disk beyond this are dropped, least recently used first
    # Server processes of `codeyard serve` (CODEYARD_WORKERS or --workers): default one per usable core.
    workers: int = 1
    # Background jobs: `serve` runs a worker unless CODEYARD_WORKER=0; seconds for poll, lease, back-off.
    embedded_worker: bool = True
    worker_concurrency: int = 4
    worker_poll: float = 1.0
    worker_lease: float = 60.0
    worker_backoff: float = 10.0
    # Who may read /-/metrics (CODEYARD_METRICS_ALLOW): networks, comma-separated; others get 404.
    metrics_allow: str = DEFAULT_METRICS_ALLOW
    # CODEYARD_ACCESS_LOG: empty or 0 off, 1 one line per request on standard error, else a file path.
    access_log: str = ""

    @property
    def metrics_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        return networks(self.metrics_allow)

    @property
    def repositories_dir(self) -> Path:
        return self.data_dir / "repositories"

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"

    @property
    def tmp_dir(self) -> Path:
        return self.data_dir / "tmp"

    @property
    def metrics_dir(self) -> Path:
        return self.data_dir / "metrics"

    @property
    def archive_cache_dir(self) -> Path:
        return self.data_dir / "cache" / "archives"

    @property
    def secret_key_path(self) -> Path:
        return self.data_dir / "secret_key"

    def with_overrides(self, **changes) -> Config:
        return replace(self, **changes)


def sqlite_url(data_dir: Path) -> str:
    return f"sqlite:///{(data_dir / 'codeyard.db').resolve()}"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which containers and `taskset` narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _positive(value: str | None, name: str) -> int | None:
    if value is None or not value.strip():
        return None
    if not value.strip().isdigit() or int(value) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
    return int(value)


@functools.lru_cache(maxsize=8)
def networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Comma-separated networks (`10.0.0.0/8`, `::1/128`, a bare address); ValueError names a bad one."""
    found = []
    for part in text.split(","):
        if part.strip():
            try:
                found.append(ipaddress.ip_network(part.strip(), strict=False))
            except ValueError:
                raise ValueError(f"CODEYARD_METRICS_ALLOW: {part.strip()!r} is not a network") from None
    return tuple(found)


def _log_target(value: str) -> str:
    """"", "0" and "1" as given; a file's path made absolute (every process appends to the same file)."""
    value = value.strip()
    return value if value in ("", "0", "1") else str(Path(value).resolve())


def load(env: dict[str, str] | None = None, **overrides) -> Config:
    """Build the configuration from the environment; keyword overrides win (CLI flags)."""
    env = os.environ if env is None else env
    host = overrides.pop("host", None) or env.get("CODEYARD_HOST", DEFAULT_HOST)
    port = int(overrides.pop("port", None) or env.get("CODEYARD_PORT", DEFAULT_PORT))
    data_dir = Path(overrides.pop("data_dir", None) or env.get("CODEYARD_DATA_DIR", "./data")).resolve()
    database_url = env.get("CODEYARD_DATABASE_URL") or sqlite_url(data_dir)
    base_url = (env.get("CODEYARD_BASE_URL") or f"http://{host}:{port}").rstrip("/")
    config = Config(
        data_dir=data_dir,
        database_url=database_url,
        base_url=base_url,
        host=host,
        port=port,
        root_password=env.get("CODEYARD_ROOT_PASSWORD") or None,
        root_token=env.get("CODEYARD_ROOT_TOKEN") or None,
        argon2_time_cost=int(env.get("CODEYARD_ARGON2_TIME_COST", 3)),
        argon2_memory_kib=int(env.get("CODEYARD_ARGON2_MEMORY_KIB", 65536)),
        argon2_parallelism=int(env.get("CODEYARD_ARGON2_PARALLELISM", 4)),
        password_workers=int(env.get("CODEYARD_PASSWORD_WORKERS", 2)),
        password_queue=int(env.get("CODEYARD_PASSWORD_QUEUE", 8)),
        password_failure_limit=int(env.get("CODEYARD_PASSWORD_FAILURE_LIMIT", 10)),
        password_failure_window=int(env.get("CODEYARD_PASSWORD_FAILURE_WINDOW", 60)),
        forwarded_allow_ips=env.get("CODEYARD_FORWARDED_ALLOW_IPS", ""),
        log_level=env.get("CODEYARD_LOG_LEVEL", "info"),
        secret_key=env.get("CODEYARD_SECRET_KEY") or None,
        runner_token=env.get("CODEYARD_RUNNER_TOKEN") or None,
        header_timeout=float(env.get("CODEYARD_HEADER_TIMEOUT", 20)),
        body_timeout=float(env.get("CODEYARD_BODY_TIMEOUT", 60)),
        max_connections=int(env.get("CODEYARD_MAX_CONNECTIONS", 512)),
        archive_cache_mb=int(env.get("CODEYARD_ARCHIVE_CACHE_MB", 1024)),
        workers=_positive(env.get("CODEYARD_WORKERS"), "CODEYARD_WORKERS") or usable_cores(),
        embedded_worker=env.get("CODEYARD_WORKER", "1").strip().lower() not in ("0", "false", "no", "off"),
        worker_concurrency=int(env.get("CODEYARD_WORKER_CONCURRENCY", 4)),
        worker_poll=float(env.get("CODEYARD_WORKER_POLL", 1.0)),
        worker_lease=float(env.get("CODEYARD_WORKER_LEASE", 60.0)),
        worker_backoff=float(env.get("CODEYARD_WORKER_BACKOFF", 10.0)),
        metrics_allow=env.get("CODEYARD_METRICS_ALLOW", DEFAULT_METRICS_ALLOW),
        access_log=_log_target(env.get("CODEYARD_ACCESS_LOG", "")),
    )
    networks(config.metrics_allow)  # refused at start, not at the first scrape
    return config.with_overrides(**overrides) if overrides else config


def to_env(config: Config) -> dict[str, str]:
    """The environment that makes `load()` in another process return this configuration."""
    env = {
        "CODEYARD_HOST": config.host,
        "CODEYARD_PORT": str(config.port),
        "CODEYARD_DATA_DIR": str(config.data_dir),
        "CODEYARD_DATABASE_URL": config.database_url,
        "CODEYARD_BASE_URL": config.base_url,
        "CODEYARD_ARGON2_TIME_COST": str(config.argon2_time_cost),
        "CODEYARD_ARGON2_MEMORY_KIB": str(config.argon2_memory_kib),
        "CODEYARD_ARGON2_PARALLELISM": str(config.argon2_parallelism),
        "CODEYARD_PASSWORD_WORKERS": str(config.password_workers),
        "CODEYARD_PASSWORD_QUEUE": str(config.password_queue),
        "CODEYARD_PASSWORD_FAILURE_LIMIT": str(config.password_failure_limit),
        "CODEYARD_PASSWORD_FAILURE_WINDOW": str(config.password_failure_window),
        "CODEYARD_FORWARDED_ALLOW_IPS": config.forwarded_allow_ips,
        "CODEYARD_LOG_LEVEL": config.log_level,
        "CODEYARD_HEADER_TIMEOUT": str(config.header_timeout),
        "CODEYARD_BODY_TIMEOUT": str(config.body_timeout),
        "CODEYARD_MAX_CONNECTIONS": str(config.max_connections),
        "CODEYARD_ARCHIVE_CACHE_MB": str(config.archive_cache_mb),
        "CODEYARD_WORKERS": str(config.workers),
        "CODEYARD_WORKER": "1" if config.embedded_worker else "0",
        "CODEYARD_WORKER_CONCURRENCY": str(config.worker_concurrency),
        "CODEYARD_WORKER_POLL": str(config.worker_poll),
        "CODEYARD_WORKER_LEASE": str(config.worker_lease),
        "CODEYARD_WORKER_BACKOFF": str(config.worker_backoff),
        "CODEYARD_METRICS_ALLOW": config.metrics_allow,
        "CODEYARD_ACCESS_LOG": config.access_log,
    }
    if config.root_password:
        env["CODEYARD_ROOT_PASSWORD"] = config.root_password
    if config.root_token:
        env["CODEYARD_ROOT_TOKEN"] = config.root_token
    if config.secret_key:
        env["CODEYARD_SECRET_KEY"] = config.secret_key
    if config.runner_token:
        env["CODEYARD_RUNNER_TOKEN"] = config.runner_token
    return env
