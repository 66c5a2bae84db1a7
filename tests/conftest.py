"""Test infrastructure every capability reuses.

- `backend_url`: a migrated database, SQLite always and PostgreSQL when one answers at
  CODEYARD_TEST_POSTGRES_URL (each xdist worker in its own schema, dropped afterwards).
  Tests that use the database run once per backend.
- `rt`: the process runtime on that database, emptied before each test.
- `api`: an in-process client (Starlette's TestClient); `live`: a real `codeyard serve` process
  on a free loopback port sharing the same database and data directory.
- `users`: creates users with tokens and passwords.
"""

from __future__ import annotations

import os
import shutil
import uuid

import psycopg
import pytest
from sqlalchemy import make_url, text
from starlette.testclient import TestClient

from codeyard import config as config_module
from codeyard.app import CodeyardApp, build_router
from codeyard.db import migrate
from codeyard.db.models import Base
from codeyard.runtime import Runtime

from .support import ApiClient, LiveServer, ProjectFactory, UserFactory

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
POSTGRES_URL = os.environ.get("CODEYARD_TEST_POSTGRES_URL", DEFAULT_POSTGRES)
REQUIRE_POSTGRES = os.environ.get("CODEYARD_TEST_REQUIRE_POSTGRES") == "1"
# Cheap argon2 for tests; the production cost is exercised by the hashing tests.
TEST_HASH = {"argon2_time_cost": 1, "argon2_memory_kib": 1024, "argon2_parallelism": 1}


def _postgres_reachable() -> bool:
    try:
        with psycopg.connect(_libpq(POSTGRES_URL), connect_timeout=3):
            return True
    except psycopg.Error:
        return False


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


HAVE_POSTGRES = _postgres_reachable()
if REQUIRE_POSTGRES and not HAVE_POSTGRES:
    raise pytest.UsageError(f"CODEYARD_TEST_REQUIRE_POSTGRES=1 but no PostgreSQL answers at {POSTGRES_URL}")
BACKENDS = ["sqlite", "postgresql"] if HAVE_POSTGRES else ["sqlite"]


def _databases() -> str:
    where = make_url(POSTGRES_URL).render_as_string(hide_password=True)
    if HAVE_POSTGRES:
        return f"databases: SQLite and PostgreSQL ({where})"
    return f"databases: SQLite only (no PostgreSQL answers at {where})"


def pytest_report_header(config):
    return _databases()


def pytest_terminal_summary(terminalreporter):
    """Also at the end: `make test` runs with -q, which shows no header."""
    terminalreporter.write_line(_databases())


def schema_url(schema: str) -> str:
    """The URL of the test PostgreSQL with SCHEMA first on the search path. synchronous_commit off:
    a commit does not wait for the WAL's flush to disk (3.4 ms against 0.1 ms on the 2-core test
    machine), which only a crash of PostgreSQL itself would lose, and no test crashes it."""
    options = f"-csearch_path%3D{schema}%20-csynchronous_commit%3Doff"
    return f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}options={options}"


@pytest.fixture(scope="session", params=BACKENDS)
def backend_url(request, tmp_path_factory):
    """A migrated, empty database of one backend for this test session (and xdist worker)."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("sqlite") / "codeyard.db"
        url = f"sqlite:///{path}"
        migrate.upgrade(url)
        yield url
        return
    schema = f"cy_test_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_URL), autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    url = schema_url(schema)
    try:
        migrate.upgrade(url)
        yield url
    finally:
        with psycopg.connect(_libpq(POSTGRES_URL), autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(scope="session")
def session_config(backend_url, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("data")
    return config_module.Config(
        data_dir=data_dir,
        database_url=backend_url,
        base_url="http://testserver",
        **TEST_HASH,
    )


@pytest.fixture(scope="session")
def session_runtime(session_config):
    runtime = Runtime(session_config)
    yield runtime
    runtime.close()


def empty_database(runtime: Runtime) -> None:
    """Delete every row and restart the id sequences.

    DELETE, not TRUNCATE, on PostgreSQL too: a test leaves a few rows, and TRUNCATE of two dozen
    tables (new files for each, and their indexes) cost about 40 times as much per test."""
    deletes = [f'DELETE FROM "{table.name}"' for table in reversed(Base.metadata.sorted_tables)]
    with runtime.db.engine.begin() as connection:
        if runtime.db.is_sqlite:
            for delete in deletes:
                connection.execute(text(delete))
            connection.execute(text("DELETE FROM sqlite_sequence"))
        else:
            # One round trip: psycopg sends a statement list without parameters as one simple query.
            statements = ";".join([*deletes, _restart_sequences(connection)])
            connection.connection.driver_connection.execute(statements)


_SEQUENCE_RESETS: dict[str, str] = {}


def _restart_sequences(connection) -> str:
    """One SELECT setting every sequence of the test schema back to its start (read once)."""
    key = str(connection.engine.url)
    if key not in _SEQUENCE_RESETS:
        names = connection.execute(
            text("SELECT quote_ident(sequencename) FROM pg_sequences WHERE schemaname = current_schema()")
        ).scalars().all()
        _SEQUENCE_RESETS[key] = "SELECT " + ", ".join(f"setval('{name}', 1, false)" for name in names)
    return _SEQUENCE_RESETS[key]


def empty_data_dir(config: config_module.Config) -> None:
    for child in config.data_dir.iterdir() if config.data_dir.exists() else ():
        if child in (config.secret_key_path, config.data_dir / "metrics"):
            continue  # the live server's figures (codeyard.metrics) are its own
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()
    for directory in (config.repositories_dir, config.uploads_dir, config.tmp_dir):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)


@pytest.fixture
def rt(session_runtime):
    """The runtime, with an empty database and data directory."""
    empty_database(session_runtime)
    empty_data_dir(session_runtime.config)
    session_runtime.presentation.invalidate()
    return session_runtime


@pytest.fixture(scope="session")
def _test_client(session_runtime):
    app = CodeyardApp(session_runtime, build_router(), owns_runtime=False)
    with TestClient(app, base_url="http://testserver", raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def api(rt, _test_client) -> ApiClient:
    """In-process client of /api/v3; `api.as_(user)` sends that user's token."""
    return ApiClient(_test_client)


@pytest.fixture
def users(rt) -> UserFactory:
    return UserFactory(rt)


@pytest.fixture
def projects(rt) -> ProjectFactory:
    return ProjectFactory(rt)


@pytest.fixture
def admin(users):
    return users.create(admin=True, username="sysadmin")


@pytest.fixture
def alice(users):
    """A regular user, the owner of most projects in the tests."""
    return users.create("alice")


@pytest.fixture(scope="session")
def live_server(session_config, tmp_path_factory):
    server = LiveServer(session_config, tmp_path_factory.mktemp("live-logs"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def live(rt, live_server) -> LiveServer:
    """A real server process on a free loopback port, sharing this test's (emptied) database."""
    live_server.check_alive()
    return live_server


# Tests through a real server process (git over HTTP, runners, browsers, real clients) run on
# SQLite, except those marked `both_backends`: what the database does differently is tested
# in-process on both backends, and running every process-level flow twice cost the suite minutes.
# CODEYARD_TEST_ALL_BACKENDS=1 runs them all on both.
ALL_BACKENDS = os.environ.get("CODEYARD_TEST_ALL_BACKENDS") == "1"


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        live = "live" in getattr(item, "fixturenames", ())
        if live:
            item.add_marker(pytest.mark.live)
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and callspec.params.get("backend_url") == "postgresql"
        if live and on_postgres and not ALL_BACKENDS and item.get_closest_marker("both_backends") is None:
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept

