"""Storage: migrations are the schema, the fast path reads what SQLAlchemy reads, SQLite settings."""

from __future__ import annotations

import datetime as dt
import gc
import itertools
import sqlite3
import threading
import time
import uuid
import warnings
from collections import namedtuple

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Boolean, Integer, bindparam, inspect, literal_column, select, type_coerce, update
from sqlalchemy.dialects import sqlite as sqlite_dialect

from codeyard.db import migrate
from codeyard.db.engine import CHECKPOINTED_AUTOCHECKPOINT, Database, WalCheckpointer, _row_maker, inline_form
from codeyard.db.models import Base, Project, User, utcnow
from codeyard.db.models.base import JsonList, UtcIsoText
from codeyard.entities.common import iso
from codeyard.services import credentials, project_reads, visibility
from codeyard.services.identity import USER_BY_TOKEN

from ..conftest import BACKENDS, POSTGRES_URL, _libpq, schema_url


@pytest.fixture(params=BACKENDS)
def fresh_url(request, tmp_path):
    """An empty database (no tables at all) of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    schema = f"cy_fresh_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_URL), autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema_url(schema)
    finally:
        with psycopg.connect(_libpq(POSTGRES_URL), autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based index")
@pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index")
def test_migrations_create_exactly_the_models(fresh_url):
    migrate.upgrade(fresh_url)
    db = Database(fresh_url)
    try:
        with db.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
        assert migrate.current_revision(db.engine) == migrate.head_revision()
    finally:
        db.dispose()


def test_migrations_keep_every_index_of_the_models(fresh_url):
    """Expression indexes (lower(path)) escape the comparison above: SQLite cannot reflect them,
    and a batch migration that rebuilds a table drops them silently. Ask the catalog by name. (The
    migration warns of none of this: the first start printed five such warnings.)"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        migrate.upgrade(fresh_url)
    assert [str(warning.message) for warning in caught if "expression-based index" in str(warning.message)] == []
    wanted = {index.name for table in Base.metadata.tables.values() for index in table.indexes}
    catalog = (
        "SELECT name FROM sqlite_master WHERE type = 'index'"
        if fresh_url.startswith("sqlite")
        else "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
    )
    db = Database(fresh_url)
    try:
        with db.engine.connect() as connection:
            present = set(connection.exec_driver_sql(catalog).scalars())
    finally:
        db.dispose()
    assert wanted - present == set()


def test_migrations_downgrade_and_upgrade_again(fresh_url):
    migrate.upgrade(fresh_url)
    migrate.downgrade(fresh_url, "base")
    db = Database(fresh_url)
    try:
        assert set(inspect(db.engine).get_table_names()) <= {"alembic_version"}
    finally:
        db.dispose()
    migrate.upgrade(fresh_url)


def test_fast_path_reads_what_sqlalchemy_reads(rt, users):
    alice = users.create("alice", bio="hi")
    digest = credentials.digest(alice.token)
    fast = rt.db.fast_first(USER_BY_TOKEN, {"digest": digest, "other_kind": "oauth"})
    with rt.db.session() as session:
        slow = session.execute(USER_BY_TOKEN, {"digest": digest, "other_kind": "oauth"}).one()
    assert tuple(fast) == tuple(slow)
    assert fast.is_admin is False and fast.username == "alice"
    with rt.db.session() as session:
        model = session.get(User, fast.id)
        assert fast.created_at == iso(model.created_at)  # the caller's timestamps come as the API's text
    (moment,) = rt.db.fast_first(select(User.created_at).where(User.id == fast.id), {})
    assert moment == model.created_at and moment.tzinfo is not None
    assert rt.db.fast_first(USER_BY_TOKEN, {"digest": "0" * 64, "other_kind": "oauth"}) is None


def test_fast_path_reads_project_rows_as_the_session_does(rt, users, projects):
    alice = users.create("alice")
    for name in ("one", "two", "three"):
        projects.create(alice, name=name, visibility=20)
    with rt.db.session() as session:
        ids = list(session.scalars(select(Project.id).order_by(Project.id)))
        params = {"ids": ids, "user_id": alice.id}
        slow = [tuple(row) for row in session.execute(project_reads.BY_IDS, params)]
    assert [tuple(row) for row in rt.db.fast_all(project_reads.BY_ID, {"id": ids[1], "user_id": alice.id})] == [slow[1]]
    statements = project_reads._page_statements("member", visibility.ADMIN, False, False, False, (("id", "asc"),), 2, rt.db.is_sqlite)
    page = rt.db.fast_all(statements[1], {"user_id": alice.id, "offset": 1, "window": 3, "walk_budget": 30})
    # The caller's own projects: each row carries the total after the entity's columns.
    assert [tuple(row)[:-1] for row in page] == slow[1:3] and [row.total for row in page] == [3, 3]
    assert rt.db.fast_first(statements[0], {"user_id": alice.id}) == (3,)
    assert page[0].created_at.endswith("Z") and page[0].tag_list == [] and page[0].archived is False


def test_fast_path_statements_keep_percent_signs_and_repeated_parameters(rt):
    """On PostgreSQL a fast statement is sent with PostgreSQL's own placeholders (`$1`): a parameter
    used twice is one placeholder, and the % SQLAlchemy doubled for psycopg's placeholders is one %."""
    a, b = bindparam("a", type_=Integer), bindparam("b", type_=Integer)
    statement = select(literal_column("'100%'").label("text"), (a % 7).label("rest"), (a - b).label("difference"), a.label("a"))
    assert tuple(rt.db.fast_first(statement, {"a": 23, "b": 3})) == ("100%", 2, 20, 23)
    if not rt.db.is_sqlite:
        sql = rt.db.prepared(statement).sql
        assert "%%" not in sql and "%(" not in sql and sql.count("$1") == 3, sql


def test_rows_read_at_once_are_the_rows_read_one_by_one(rt, users, projects):
    """`fast_all_at_once` (SQLite: one JSON array) gives what `fast_all` gives, in its order: NULLs,
    booleans, timestamps, JSON lists, quotes, backslashes, control characters and other scripts."""
    alice = users.create("alice")
    for name, description in (("one", 'say "hi"\\ \t\n'), ("two", None), ("three", "日本語 ✓ \u2028")):
        projects.create(alice, name=name, visibility=20, description=description)
    with rt.db.session() as session:
        session.execute(update(Project).where(Project.path == "two").values(tag_list=["a", "b,c"], archived=True))
        session.commit()
    for order in ((("id", "asc"),), (("name", "desc"), ("id", "desc"))):
        statements = project_reads._page_statements("member", visibility.ADMIN, False, False, False, order, 3, rt.db.is_sqlite)
        params = {"user_id": alice.id, "offset": 0, "window": 3, "walk_budget": 30}
        one_by_one = rt.db.fast_all(statements[1], params)
        at_once = rt.db.fast_all_at_once(statements[1], params)
        assert at_once == one_by_one and len(at_once) == 3
        assert [type(value) for value in at_once[0]] == [type(value) for value in one_by_one[0]]
    assert rt.db.fast_all_at_once(statements[1], {**params, "offset": 10}) == []


@pytest.mark.parametrize(
    "moment",
    [
        dt.datetime(2016, 1, 4, 15, 31, 46, 176999, tzinfo=dt.UTC),
        dt.datetime(2016, 1, 4, 15, 31, 46, tzinfo=dt.UTC),
        dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    ],
)
def test_timestamps_read_as_text_are_what_the_entities_print(rt, users, projects, moment):
    """`UtcIsoText` (the read path's timestamps) gives `iso()` of what `UtcDateTime` reads back."""
    project_id = projects.create(users.create("alice")).id
    with rt.db.session() as session:
        session.get(Project, project_id).created_at = moment
        session.commit()
    as_text = select(type_coerce(Project.created_at, UtcIsoText()).label("at")).where(Project.id == bindparam("id"))
    with rt.db.session() as session:
        stored = session.scalar(select(Project.created_at).where(Project.id == project_id))
        assert session.execute(as_text, {"id": project_id}).scalar() == iso(stored) == iso(moment.astimezone(dt.UTC))
    assert rt.db.fast_first(as_text, {"id": project_id})[0] == iso(stored)


def test_postgresql_writes_the_api_s_timestamps_whatever_the_date_style(rt, users, projects):
    """PostgreSQL writes UtcIsoText's text itself (`to_char`): a session's DateStyle does not change it."""
    if rt.db.is_sqlite:
        pytest.skip("PostgreSQL only")
    project_id = projects.create(users.create("alice")).id
    moment = dt.datetime(2016, 1, 4, 15, 31, 46, 176999, tzinfo=dt.UTC)
    with rt.db.session() as session:
        session.get(Project, project_id).created_at = moment
        session.commit()
    as_text = select(type_coerce(Project.created_at, UtcIsoText()).label("at")).where(Project.id == bindparam("id"))
    cursor = rt.db._fast_connection().cursor()
    try:
        for style in ("SQL, DMY", "German", "Postgres, MDY", "ISO"):
            cursor.execute(f"SET DateStyle TO '{style}'")
            assert rt.db.fast_first(as_text, {"id": project_id})[0] == "2016-01-04T15:31:46.176Z", style
    finally:
        cursor.execute("RESET DateStyle")


@pytest.mark.parametrize("walk_rows", [project_reads.WALK_ROWS, 0])
@pytest.mark.parametrize("per_page", [2, 10])
def test_postgresql_gathers_the_callers_projects_only_when_a_walk_falls_short(rt, users, projects, walk_rows, per_page):
    """A member page in an indexed order is walked to along it (past others' projects), also when the
    caller has fewer projects than it holds; the branches gathering every project of the caller's
    run only when the walk found too few (WALK_ROWS 0)."""
    if rt.db.is_sqlite:
        pytest.skip("PostgreSQL only")
    alice, bob = users.create("alice", projects_limit=100), users.create("bob")
    mine = [projects.create(alice, name=f"a{i}").id for i in range(6)]
    projects.create(bob, name="newest")
    order = (("created_at", "desc"), ("id", "desc"))
    statement = project_reads._page_statements("member", visibility.ADMIN, False, False, False, order, per_page)[1]
    prepared = rt.db.prepared(statement)
    params = {"user_id": alice.id, "offset": 0, "window": per_page, "walk_budget": per_page * walk_rows}
    params = prepared.parameters(params)
    cursor = rt.db._fast_connection().cursor()
    cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + prepared.sql, params)
    gates = [node for node in _plan_nodes(cursor.fetchone()[0][0]["Plan"]) if "One-Time Filter" in node]
    ran = {(node["One-Time Filter"].split()[1], _gated(node)["Actual Loops"] > 0) for node in gates}
    walked = walk_rows > 0
    assert len(gates) == 3 and ran == {(">=", walked), ("<", not walked)}, ran
    cursor.execute(prepared.sql, params)
    assert [row[0] for row in cursor.fetchall()] == mine[::-1][:per_page]


def _gated(node: dict) -> dict:
    """The node a one-time filter runs or not (beside the initplans computing the condition)."""
    (gated,) = (child for child in node["Plans"] if child["Parent Relationship"] == "Outer")
    return gated


def _plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", ()):
        yield from _plan_nodes(child)


def test_timestamps_in_other_sqlite_forms_are_read_too():
    processor = UtcIsoText().result_processor(sqlite_dialect.dialect(), None)
    assert processor("2016-01-04 15:31:46.176999") == "2016-01-04T15:31:46.176Z"
    assert processor("2016-01-04 15:31:46") == "2016-01-04T15:31:46.000Z"
    assert processor("2016-01-04T15:31:46.5+00:00") == "2016-01-04T15:31:46.500Z"
    assert processor(None) is None
    with pytest.raises(TypeError):
        UtcIsoText().process_bind_param(dt.datetime.now(dt.UTC), sqlite_dialect.dialect())


@pytest.mark.parametrize(
    ("column_type", "values"),
    [
        (UtcIsoText(), ["2016-01-04 15:31:46.176999", "2016-01-04 15:31:46", "2016-01-04T15:31:46.5+00:00"]),
        (JsonList(), ["[]", '["a", "b"]', "[ ]"]),
        (Boolean(), [0, 1]),
    ],
)
def test_rows_write_out_what_the_processors_return(column_type, values):
    """The fast path's rows write some SQLite processors out as expressions (`engine.inline_form`):
    each gives what the processor gives, for the usual values and the odd ones, and None stays None."""
    dialect = sqlite_dialect.dialect()
    processor = column_type.dialect_impl(dialect).result_processor(dialect, None)
    assert inline_form(processor) is not None
    row = _row_maker(namedtuple("Row", ["value", "other"]), [processor, None])
    for value in values:
        assert row((value, 7)) == (processor(value), 7), value
    assert row((None, 7)) == (None, 7)


def test_fast_path_parameters_follow_sqlalchemys_rules(rt, users):
    alice = users.create("alice")
    by_id = select(User.username).where(User.id == bindparam("id"))
    assert rt.db.fast_first(by_id, {"id": alice.id}).username == "alice"
    with pytest.raises(KeyError, match="'id'"):
        rt.db.fast_first(by_id, {})
    defaulted = select(User.username).where(User.id == bindparam("id", alice.id, required=False))
    assert rt.db.fast_first(defaulted, {}).username == "alice"
    computed = select(User.username).where(User.id == bindparam("id", callable_=lambda: alice.id))
    assert rt.db.fast_first(computed, {}).username == "alice"


def test_fast_path_reconnects_after_losing_its_connection(rt, users):
    alice = users.create("alice")
    params = {"digest": credentials.digest(alice.token), "other_kind": "oauth"}
    assert rt.db.fast_first(USER_BY_TOKEN, params) is not None
    rt.db._local.connection.dbapi_connection.close()
    assert rt.db.fast_first(USER_BY_TOKEN, params).username == "alice"


def test_sqlite_runs_in_wal_mode_with_foreign_keys(rt):
    if not rt.db.is_sqlite:
        pytest.skip("SQLite only")
    with rt.db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_sqlite_wal_is_checkpointed_by_a_thread_not_by_commits(tmp_path, monkeypatch):
    """Once the checkpointer runs, the process's commits leave the WAL to it (SQLite's own
    checkpoint only past CHECKPOINTED_AUTOCHECKPOINT pages, on every connection, the fast one
    too); the thread copies what they wrote, and stops with the database."""
    url = f"sqlite:///{tmp_path / 'cy.db'}"
    migrate.upgrade(url)
    db = Database(url)
    rounds = []
    checkpoint = WalCheckpointer.checkpoint
    monkeypatch.setattr(WalCheckpointer, "INTERVAL", 0.01)
    monkeypatch.setattr(WalCheckpointer, "checkpoint", classmethod(lambda cls, c: rounds.append(checkpoint(c)) or rounds[-1]))
    autocheckpoint = lambda connection: connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar()  # noqa: E731
    try:
        with db.engine.connect() as connection:
            assert autocheckpoint(connection) == 1000  # SQLite's own, in processes without the thread
        db.start_checkpointer()
        with db.engine.connect() as connection:
            assert autocheckpoint(connection) == CHECKPOINTED_AUTOCHECKPOINT
        cursor = db._fast_connection().cursor()
        assert cursor.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == CHECKPOINTED_AUTOCHECKPOINT
        cursor.close()
        for n in range(20):
            with db.engine.begin() as connection:
                connection.exec_driver_sql("CREATE TABLE IF NOT EXISTS wal_probe (n)")
                connection.exec_driver_sql(f"INSERT INTO wal_probe VALUES ({n})")
        deadline = time.monotonic() + 10
        while not any(r and r[1] > 0 and r[1] == r[2] for r in rounds) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert any(r and r[1] > 0 and r[1] == r[2] for r in rounds), rounds  # (busy, WAL pages, copied)
    finally:
        db.dispose()
    done = len(rounds)
    time.sleep(0.1)
    assert len(rounds) == done  # the thread stopped


def test_sqlite_wal_is_rewound_while_writes_never_pause(tmp_path, monkeypatch):
    """A WAL goes back to its start only when a checkpoint copied it whole with no writer coming in
    meanwhile: with commits back to back on a busy machine, PASSIVE checkpoints alone let it grow
    with every commit (on a quiet one they may suffice). Past RESTART_FRAMES the thread rewinds it
    (RESTART) while the writer goes on; either way the thread's checkpoints see it rewound."""
    path = str(tmp_path / "cy.db")
    monkeypatch.setattr(WalCheckpointer, "INTERVAL", 0.002)
    monkeypatch.setattr(WalCheckpointer, "RESTART_FRAMES", 100)
    sizes = []  # the WAL's pages as each checkpoint found them
    checkpoint = WalCheckpointer.checkpoint
    monkeypatch.setattr(WalCheckpointer, "checkpoint", classmethod(lambda cls, c: sizes.append(checkpoint(c)) or sizes[-1]))
    db = Database(f"sqlite:///{path}")
    try:
        db.start_checkpointer()
        cursor = db._fast_connection().cursor()
        cursor.execute("CREATE TABLE wal_probe (n, payload)")
        checked, rewinds, frames = 0, 0, []
        # Commits back to back until two rewinds were seen after the first 1,000 (a busy machine
        # runs the thread rarely: it may take many more commits), for at most 30 s.
        deadline = time.monotonic() + 30
        for n in itertools.count():
            cursor.execute("BEGIN IMMEDIATE")
            cursor.execute("INSERT INTO wal_probe VALUES (?, randomblob(3000))", (n,))  # a page or two
            cursor.execute("COMMIT")
            if n == 1000:
                checked = len(sizes)
            if n > 1000 and n % 100 == 0:
                frames = [r[1] for r in sizes[checked:] if r is not None]
                rewinds = sum(1 for before, after in itertools.pairwise(frames) if after < before)
                if rewinds >= 2 or time.monotonic() > deadline:
                    break
        cursor.close()
    finally:
        db.dispose()
    assert rewinds >= 2, frames


def test_sqlite_write_sessions_take_the_write_lock_at_once(rt):
    if not rt.db.is_sqlite:
        pytest.skip("SQLite only")
    path = rt.db.engine.url.database
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        with rt.db.session(write=False) as reader:
            reader.execute(select(1))
            other.execute("BEGIN IMMEDIATE")  # a reader does not block writers
            other.execute("ROLLBACK")
        with rt.db.session(write=True) as writer:
            writer.execute(select(1))
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
    finally:
        other.close()


def test_usernames_emails_and_paths_are_unique_whatever_the_case(rt, users):
    from sqlalchemy.exc import IntegrityError

    from codeyard.db.models import Namespace, User

    users.create("alice")
    for row in (
        User(username="ALICE", email="other@example.com", name="x", projects_limit=1),
        User(username="other", email="ALICE@example.com", name="x", projects_limit=1),
        Namespace(path="Alice", name="x", kind="group"),
    ):
        with rt.db.session() as session, pytest.raises(IntegrityError):
            session.add(row)
            session.flush()


def test_fast_connections_of_ended_threads_never_reach_a_transaction(rt):
    """The fast path's autocommit connections are not pooled: were one handed to a session later, its
    transaction would commit statement by statement (a rolled-back change kept, a job claimed twice)."""
    if rt.db.is_sqlite:
        pytest.skip("PostgreSQL: SQLite connections have no autocommit switch to leak")

    def look_up() -> None:
        assert rt.db.fast_first(USER_BY_TOKEN, {"digest": "none", "other_kind": "oauth"}) is None

    for _ in range(3):
        thread = threading.Thread(target=look_up)
        thread.start()
        thread.join()
    gc.collect()
    sessions = [rt.db.session() for _ in range(12)]  # more than the pool holds: every pooled connection
    try:
        assert not any(session.connection().connection.driver_connection.autocommit for session in sessions)
    finally:
        for session in sessions:
            session.close()


USERNAME_OF = select(User.username).where(User.id == bindparam("id"))
RENAME = (
    update(User)
    .where(User.id == bindparam("id"))
    .values(username=bindparam("name"), updated_at=bindparam("now"))
    .returning(User.id)
)


def test_fast_writes_commit_at_the_end_and_roll_back_on_an_error(rt, users):
    alice = users.create("alice")
    with rt.db.fast_write() as transaction:
        assert transaction.first(RENAME, {"id": alice.id, "name": "alicia", "now": utcnow()}) == (alice.id,)
        assert transaction.first(USERNAME_OF, {"id": alice.id}) == ("alicia",)  # its own change
    with pytest.raises(RuntimeError), rt.db.fast_write() as transaction:
        assert transaction.first(RENAME, {"id": alice.id, "name": "other", "now": utcnow()}) == (alice.id,)
        raise RuntimeError("after the update")
    with rt.db.session() as session:
        assert session.scalar(select(User.username).where(User.id == alice.id)) == "alicia"
    assert rt.db.fast_first(USERNAME_OF, {"id": alice.id}) == ("alicia",)


def test_fast_statements_must_give_python_side_defaults_values(rt):
    with pytest.raises(ValueError, match="updated_at"), rt.db.fast_write() as transaction:
        transaction.rowcount(update(User).where(User.id == bindparam("id")).values(username="x"), {"id": 1})


def test_a_fast_write_holds_sqlites_write_lock_until_it_ends(rt, users):
    if not rt.db.is_sqlite:
        pytest.skip("SQLite only")
    other = sqlite3.connect(rt.db.engine.url.database, timeout=0, isolation_level=None)
    try:
        with rt.db.fast_write(), pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()
