"""Apply the Alembic migrations: the only way the schema changes."""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.exc import SAWarning

from .engine import normalize_url

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(url: str) -> AlembicConfig:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["url"] = normalize_url(url)
    return config


def upgrade(url: str, revision: str = "head") -> None:
    with _expression_indexes_rebuilt():
        command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    with _expression_indexes_rebuilt():
        command.downgrade(alembic_config(url), revision)


@contextmanager
def _expression_indexes_rebuilt():
    """Without SQLAlchemy's warning that reflection skipped an expression index (lower(path)): on
    SQLite a batch migration rebuilds a table from reflection, and the migrations create those
    indexes again themselves (tests/db checks every index of the models is there). Printed at every
    first start, the warning only alarmed."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index", SAWarning)
        yield


def head_revision() -> str:
    return ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()


def current_revision(engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
