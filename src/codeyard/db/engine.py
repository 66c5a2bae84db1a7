"""The engine, sessions and the fast read connection of one process.

SQLite runs in WAL mode with foreign keys on. Transactions are begun explicitly: sessions made
for writing start with BEGIN IMMEDIATE, so concurrent writers (several server workers, the job
worker, git hooks) queue on the busy timeout instead of failing when a read lock is upgraded.

`Database.fast_first` and `fast_all` run one prepared statement on a long-lived autocommit
connection of the calling thread. They exist for the lookups done on every request (the token
digest) and for the hot reads clients poll (projects): checking a connection out of the pool,
wrapping a statement in BEGIN/ROLLBACK and SQLAlchemy's execution machinery each cost more than the
query itself (docs/MEASUREMENTS.md, the requests floor). A statement given to them must be built once
(a module constant or a cached builder): it is compiled once and kept, keyed by the object.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import threading
from collections import namedtuple
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import orjson
import psycopg
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.engine.processors import int_to_boolean
from sqlalchemy.orm import Session, sessionmaker

from .changes import NotifiedRows, VersionedRows
from .loop_reads import LoopReads
from .readers import FastReader, LoopReader, OverlappingWrite

WRITE_OPTION = "codeyard_write"
READ_OPTION = "codeyard_read"
# With a WalCheckpointer running, a commit checkpoints only past this many WAL pages (128 MiB): the
# bound should the thread stop. SQLite's default (1,000 pages) stays for every other process.
CHECKPOINTED_AUTOCHECKPOINT = 32_768
_WRITES_KEY = "codeyard_open_writes"


def normalize_url(url: str) -> str:
    """Accept postgres:// and postgresql:// URLs and run them through psycopg 3."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str) -> Engine:
    url = normalize_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 30}, pool_size=10, json_deserializer=orjson.loads
        )
        _configure_sqlite(engine)
        return engine
    return create_engine(url, pool_size=10, max_overflow=20, pool_recycle=3600, json_deserializer=orjson.loads)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        # Take transaction control away from the sqlite3 module; `_on_begin` emits BEGIN itself.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):
        write = connection.get_execution_options().get(WRITE_OPTION)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


# Threads that run a server's reads off the event loop (`Database.readers`). Two: one waits on the
# server while the other turns rows into values; with a thread per waiting request (anyio's pool),
# sixteen requests' threads fought for the GIL and a project page's p99 doubled (docs/MEASUREMENTS.md,
# project reads).
READER_THREADS = 2


class Database:
    def __init__(self, url: str):
        self.url = normalize_url(url)
        self.engine = make_engine(self.url)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        self._read_sessions = sessionmaker(self.engine.execution_options(**{READ_OPTION: True}), expire_on_commit=False)
        self._write_sessions = sessionmaker(
            self.engine.execution_options(**{WRITE_OPTION: True}), expire_on_commit=False
        )
        self._local = threading.local()
        self._dbapi = self.engine.dialect.loaded_dbapi
        self._prepared: dict = {}
        self._checkpointer: WalCheckpointer | None = None
        self._readers: ThreadPoolExecutor | None = None
        # Called with the SQL of every fast-path statement (tests count them; empty otherwise).
        self.fast_observers: list = []
        # Callers' rows kept while unchanged (`db/changes.py`).
        self.identity = VersionedRows(self.data_version) if self.is_sqlite else NotifiedRows(self.url)
        self._serials = itertools.count(1)
        self._loop_reads = None if self.is_sqlite else LoopReads(self.url)
        # The readers (`db/readers.py`) a read is given: on the event loop, or this thread's fast path.
        self.loop = LoopReader(self, self._loop_reads)
        self.fast = FastReader(self)
        if not self.is_sqlite:
            event.listen(self.engine, "commit", self._committed)
        # Which threads hold a session's write transaction (`fast_write` refuses to overlap one).
        event.listen(self.engine, "begin", self._began)
        event.listen(self.engine, "commit", self._ended)
        event.listen(self.engine, "rollback", self._ended)

    def _began(self, connection) -> None:
        if connection.get_execution_options().get(WRITE_OPTION):
            writes = self._open_writes()
            writes[0] += 1
            # Ended from whichever thread commits it (the one that began it is counted down).
            connection.info[_WRITES_KEY] = writes

    @staticmethod
    def _ended(connection) -> None:
        writes = connection.info.pop(_WRITES_KEY, None)
        if writes is not None:
            writes[0] -= 1

    def _open_writes(self) -> list[int]:
        """[the number of session write transactions this thread began and nobody ended yet]."""
        writes = getattr(self._local, "writes", None)
        if writes is None:
            writes = self._local.writes = [0]
        return writes

    def _committed(self, connection) -> None:
        """A transaction of this process committed: unless it was a read session's, it may have
        changed a caller's rows, and what this process keeps must not answer before it knows
        (PostgreSQL; on SQLite any commit moves the generation by itself)."""
        if not connection.get_execution_options().get(READ_OPTION):
            self.identity.advance()

    def data_version(self) -> tuple[int, int]:
        """SQLite: (serial of this thread's fast connection, its `PRAGMA data_version`), which changes
        when any other connection commits."""
        connection = self._fast_connection()
        return self._local.serial, connection.dbapi_connection.execute("PRAGMA data_version").fetchone()[0]

    def session(self, write: bool = True) -> Session:
        """A new session; the caller commits or rolls back and closes it."""
        return (self._write_sessions if write else self._read_sessions)()

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Session]:
        """A session whose work is committed when the block ends normally, rolled back otherwise."""
        with self.session(write) as session, session.begin():
            yield session

    @property
    def readers(self) -> ThreadPoolExecutor:
        """The threads for database reads off the event loop (each with its own fast connection)."""
        if self._readers is None:
            self._readers = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="codeyard-reader")
        return self._readers

    def fast_first(self, statement, params: dict):
        """First row of a Core SELECT, prepared once, on this thread's raw autocommit connection."""
        return self._fast(statement, params, Prepared.first)

    def fast_all(self, statement, params: dict) -> list:
        """Every row of a Core SELECT (named tuples), like `fast_first`."""
        return self._fast(statement, params, Prepared.all)

    def fast_all_at_once(self, statement, params: dict) -> list:
        """`fast_all` for a thread beside the event loop. sqlite3 takes the GIL back after each row
        SQLite steps to, and with the loop busy each take waited for it: SQLite builds the rows as
        one JSON array instead, in one step (the GIL released for all of SQLite's work). No BLOB
        column: JSON has no bytes."""
        return self._fast(statement, params, Prepared.all_at_once if self.is_sqlite else Prepared.all)

    @contextmanager
    def fast_write(self) -> Iterator[FastWrite]:
        """A short write transaction on this thread's fast connection: BEGIN (IMMEDIATE on SQLite,
        so that it queues for the write lock at once) ... COMMIT, or ROLLBACK when the block raises.

        For a hot write of a few prepared statements (a runner's claim). The thread must not hold a
        session's write transaction meanwhile: on SQLite the two would wait for each other, so it
        raises `OverlappingWrite` at once, on either backend.
        """
        if self._open_writes()[0]:
            raise OverlappingWrite("a fast write while this thread holds a session's write transaction")
        begin = "BEGIN IMMEDIATE" if self.is_sqlite else "BEGIN"
        connection, _ = self._run_fast(lambda connection: _execute(connection, begin))
        try:
            yield FastWrite(self, connection)
            _execute(connection, "COMMIT")
        except BaseException:
            self._rollback(connection)
            raise

    def _rollback(self, connection) -> None:
        try:
            _execute(connection, "ROLLBACK")
        except Exception:
            # A connection in an unknown state is not used again.
            connection.invalidate()
            self._local.connection = None

    def _fast(self, statement, params: dict, fetch):
        prepared = self.prepared(statement)
        return self._run_fast(lambda connection: fetch(prepared, connection, params))[1]

    def prepared(self, statement) -> Prepared:
        """STATEMENT compiled once (per Database), each use told to the observers."""
        prepared = self._prepared.get(statement)
        if prepared is None:
            prepared = self._prepared[statement] = Prepared(statement, self.engine.dialect)
        for observer in self.fast_observers:
            observer(prepared.sql)
        return prepared

    def _run_fast(self, action):
        """(connection, ACTION(connection)) on this thread's fast connection, outside a transaction."""
        connection = self._fast_connection()
        try:
            return connection, action(connection)
        except self._dbapi.Error:
            if not self._connection_lost(connection):
                raise
            # The server dropped the connection (restart, failover): reconnect once.
            self._local.connection = None
            connection = self._fast_connection()
            return connection, action(connection)

    def _fast_connection(self):
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self.engine.raw_connection()
            if not self.is_sqlite:
                # Outside any transaction, so that it never holds locks or an old snapshot.
                connection.driver_connection.autocommit = True
                # Its statements (`Prepared`) are written with PostgreSQL's own placeholders.
                connection.driver_connection.cursor_factory = psycopg.RawCursor
            # Never back to the pool (closed when its thread's copy goes): a pooled connection left
            # in autocommit would make a later session's transaction commit statement by statement.
            connection.detach()
            self._local.connection = connection
            self._local.serial = next(self._serials)
        return connection

    @staticmethod
    def _connection_lost(connection) -> bool:
        try:
            connection.cursor().execute("SELECT 1")
            return False
        except Exception:
            connection.invalidate()
            return True

    def start_checkpointer(self) -> None:
        """On SQLite, checkpoint the WAL from a thread of this process (WalCheckpointer) instead of in
        the commits of its requests: this process's connections checkpoint only past
        CHECKPOINTED_AUTOCHECKPOINT pages from now on."""
        if not self.is_sqlite or self._checkpointer is not None:
            return
        pragma = f"PRAGMA wal_autocheckpoint={CHECKPOINTED_AUTOCHECKPOINT}"
        event.listen(self.engine, "connect", lambda dbapi_connection, _record: _execute(dbapi_connection, pragma))
        self.engine.dispose()  # pooled connections made before are closed; new ones get the pragma
        _execute(self._fast_connection(), pragma)
        self._checkpointer = WalCheckpointer(self.engine)
        self._checkpointer.start()

    def dispose(self) -> None:
        self.identity.stop()
        if self._loop_reads is not None:
            self._loop_reads.close()
        if self._readers is not None:
            self._readers.shutdown(wait=False)
            self._readers = None
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
        self.engine.dispose()


def _execute(connection, sql: str) -> None:
    cursor = connection.cursor()
    try:
        cursor.execute(sql)
    finally:
        cursor.close()


class FastWrite:
    """The statements of one `Database.fast_write` transaction (prepared once, like fast reads)."""

    def __init__(self, db: Database, connection):
        self.db = db
        self.connection = connection

    def first(self, statement, params: dict):
        return self.db.prepared(statement).first(self.connection, params)

    def all(self, statement, params: dict) -> list:
        return self.db.prepared(statement).all(self.connection, params)

    def rowcount(self, statement, params: dict) -> int:
        return self.db.prepared(statement).rowcount(self.connection, params)


class Prepared:
    """A Core SELECT (or UPDATE, with or without RETURNING) compiled once for a dialect and run on a
    raw DBAPI cursor.

    SQLAlchemy's own bind and result processors are applied, so values come back exactly as
    `Connection.execute` would return them (aware datetimes, booleans); rows are named tuples.
    It costs a seventh of `Connection.execute` for the queries every request makes.
    """

    def __init__(self, statement, dialect):
        compiled = statement.compile(dialect=dialect)
        if compiled.update_prefetch or compiled.insert_prefetch:
            # Python-side defaults (`onupdate=utcnow`) are computed by SQLAlchemy's execution, which
            # this bypasses: they would be written as NULL. Such a statement gives them values.
            names = ", ".join(column.name for column in [*compiled.update_prefetch, *compiled.insert_prefetch])
            raise ValueError(f"give the columns with Python-side defaults values: {names}")
        self.compiled = compiled
        self.sql = compiled.string
        self.positional = compiled.positional
        self.bind_processors = {
            name: bind.type.dialect_impl(dialect).bind_processor(dialect) for bind, name in compiled.bind_names.items()
        }
        self.bind_names = list(compiled.positiontup) if compiled.positional else list(self.bind_processors)
        if dialect.name == "postgresql":
            self.sql, self.bind_names = native_placeholders(self.sql)
            self.positional = True
        binds = {name: bind for bind, name in compiled.bind_names.items()}
        # (name, key, default, required, processor) of every bind in order: what construct_params
        # would look up, without its general machinery (none of these statements uses callables
        # or expanding parameters; a statement that does goes through construct_params).
        self.slots = None
        if not any(bind.callable is not None or bind.expanding for bind in binds.values()):
            self.slots = [
                (name, binds[name].key, binds[name].value, binds[name].required, self.bind_processors[name])
                for name in self.bind_names
            ]
        # A SELECT's columns, or what an UPDATE returns (none without RETURNING).
        columns = list(getattr(statement, "selected_columns", None) or statement.exported_columns)
        processors = [column.type.dialect_impl(dialect).result_processor(dialect, None) for column in columns]
        self.row_type = namedtuple("Row", [column.key for column in columns], rename=True)
        self.row = _row_maker(self.row_type, processors)
        self._at_once: str | None = None  # the SQL of `all_at_once`, made at its first use

    def parameters(self, params: dict):
        if self.slots is not None:
            values = {}
            for name, key, default, required, processor in self.slots:
                if key in params:
                    value = params[key]
                elif required:
                    raise KeyError(f"A value is required for bind parameter {key!r}")
                else:
                    value = default
                values[name] = processor(value) if processor is not None and value is not None else value
            return [values[name] for name in self.bind_names] if self.positional else values
        given = self.compiled.construct_params(params)
        values = {}
        for name in self.bind_names:
            value = given[name]
            processor = self.bind_processors[name]
            values[name] = processor(value) if processor is not None and value is not None else value
        return [values[name] for name in self.bind_names] if self.positional else values

    def first(self, connection, params: dict):
        cursor = connection.cursor()
        try:
            cursor.execute(self.sql, self.parameters(params))
            row = cursor.fetchone()
        finally:
            cursor.close()
        return None if row is None else self.row(row)

    def all(self, connection, params: dict) -> list:
        cursor = connection.cursor()
        try:
            cursor.execute(self.sql, self.parameters(params))
            rows = cursor.fetchall()
        finally:
            cursor.close()
        return [self.row(row) for row in rows]

    def all_at_once(self, connection, params: dict) -> list:
        """`all` on SQLite through one JSON array (`Database.fast_all_at_once`). SQLite keeps the
        rows' order: it never flattens an ordered subquery into an aggregate (its query flattener's
        rule 16, kept for group_concat)."""
        if self._at_once is None:
            names = ", ".join(f"c{index}" for index in range(len(self.row_type._fields)))
            self._at_once = f"WITH page({names}) AS ({self.sql}) SELECT json_group_array(json_array({names})) FROM page"
        cursor = connection.cursor()
        try:
            cursor.execute(self._at_once, self.parameters(params))
            (packed,) = cursor.fetchone()
        finally:
            cursor.close()
        return [self.row(row) for row in orjson.loads(packed)]

    def rowcount(self, connection, params: dict) -> int:
        cursor = connection.cursor()
        try:
            cursor.execute(self.sql, self.parameters(params))
            return cursor.rowcount
        finally:
            cursor.close()


_PYFORMAT = re.compile(r"%%|%\(([^)]+)\)s")


def native_placeholders(sql: str) -> tuple[str, list[str]]:
    """(SQL with psycopg's `%(name)s` placeholders written as PostgreSQL's own `$1`..., the names in
    their order), for psycopg's raw cursors, which send a statement as it is. A psycopg Cursor
    rewrites every statement longer than 4 KiB on every execution (it caches only shorter ones):
    for the page of the caller's projects (6.5 KiB) the client's CPU per page went from 0.59-0.68
    ms to 0.54-0.56 (the best of 6 rounds of 100, alternating)."""
    names: list[str] = []

    def placeholder(match) -> str:
        name = match.group(1)
        if name is None:
            return "%"  # SQLAlchemy doubled a literal % for pyformat
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    return _PYFORMAT.sub(placeholder, sql), names


def _row_maker(row_type, processors: list):
    """A function making a ROW_TYPE from a DBAPI row, each value through its processor (None stays
    None). Written out per statement: a loop over the processors cost a page of 100 wide rows
    about a quarter of its Python time. A processor with an `inline` form (`inline_form`) is
    written into the function as an expression instead of called: a call per value cost more than
    the conversion of SQLite's booleans and timestamps."""
    if not any(processors):
        return row_type._make
    names = {"_new": tuple.__new__, "_row": row_type}
    values = []
    for index, processor in enumerate(processors):
        if processor is None:
            values.append(f"raw[{index}]")
            continue
        names[f"_p{index}"] = processor
        inline = inline_form(processor)
        if inline is None:
            values.append(f"(None if raw[{index}] is None else _p{index}(raw[{index}]))")
        else:
            values.append(f"(None if (value := raw[{index}]) is None else {inline('value', f'_p{index}')})")
    exec(f"def row(raw):\n    return _new(_row, ({', '.join(values)},))", names)
    return names["row"]


def inline_form(processor):
    """The expression form of a result processor, or None: a function of (the name of the value,
    the name of the processor itself) giving an expression equal to `processor(value)` for a value
    that is not None. SQLAlchemy's SQLite boolean is `bool(value)`; a processor of ours may carry
    its own as its `inline` attribute."""
    if processor is int_to_boolean:
        return _boolean_form
    return getattr(processor, "inline", None)


def _boolean_form(value: str, _processor: str) -> str:
    return f"(not not {value})"


class WalCheckpointer:
    """Copies SQLite's WAL back into the database from a thread, so that no request's commit does.

    Left to SQLite, the commit that takes the WAL past 1,000 pages checkpoints before it returns
    (two fsyncs and the pages copied), and that request waits for it (docs/MEASUREMENTS.md, storage).
    Every INTERVAL this thread runs a PASSIVE checkpoint, which blocks no reader or writer. A WAL
    is only rewound to its start when it was copied whole and no writer came in meanwhile, which
    never happens while writes follow each other closer than a checkpoint lasts: the WAL would grow
    without end, and past the commits' bound every commit would checkpoint again. So once the WAL
    holds RESTART_FRAMES pages, a RESTART checkpoint follows the PASSIVE one: it holds the write
    lock (writers wait on their busy timeout) while it copies the few pages written since and
    rewinds the WAL, giving up after BUSY_MS when a reader is slow to leave the old pages.
    Several processes doing this is harmless: a checkpoint that finds another running is skipped.
    """

    INTERVAL = 0.1
    RESTART_FRAMES = 16_384
    BUSY_MS = 10

    def __init__(self, engine: Engine):
        self.engine = engine
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-checkpoint", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        connection = sqlite3.connect(self.engine.url.database, isolation_level=None, check_same_thread=False)
        try:
            _execute(connection, f"PRAGMA busy_timeout={self.BUSY_MS}")
            while not self._stop.wait(self.INTERVAL):
                self.checkpoint(connection)
        finally:
            connection.close()

    @classmethod
    def checkpoint(cls, connection) -> tuple | None:
        """(busy, WAL pages, pages copied) of the last checkpoint run, None when SQLite refused."""
        result = _checkpoint(connection, "PASSIVE")
        if result is None or result[1] < cls.RESTART_FRAMES:
            return result
        return _checkpoint(connection, "RESTART")


def _checkpoint(connection, mode: str) -> tuple | None:
    cursor = connection.cursor()
    try:
        cursor.execute(f"PRAGMA wal_checkpoint({mode})")
        return cursor.fetchone()
    except sqlite3.Error:
        return None  # locked or busy: the next round tries again
    finally:
        cursor.close()
