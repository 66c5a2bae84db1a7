"""Migration 0020: v3's developers_can_push becomes push and merge levels (30, else 40), and back."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from sqlalchemy import inspect, text

from codeyard.db import migrate
from codeyard.db.engine import Database

from .test_storage import fresh_url  # noqa: F401  (the fixture: an empty database of each backend)

pytestmark = [
    pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based index"),
    pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index"),
]

ROWS = "SELECT name, push_access_level, merge_access_level, unprotect_access_level, allow_force_push FROM protected_branches ORDER BY name"


def run(url: str, *statements: str) -> list[tuple]:
    db = Database(url)
    try:
        with db.engine.begin() as connection:
            result = None
            for statement in statements:
                result = connection.execute(text(statement))
            return [tuple(row) for row in result] if result is not None and result.returns_rows else []
    finally:
        db.dispose()


def insert(url: str, table: str, **given) -> None:
    """A row of TABLE as the schema stands: GIVEN, and a plain value for every other required column."""
    db = Database(url)
    try:
        with db.engine.begin() as connection:
            columns = inspect(connection).get_columns(table)
            row = dict(given)
            for column in columns:
                if column["name"] in row or column["nullable"] or column.get("default") is not None or column.get("autoincrement") is True:
                    continue
                kind = column["type"]
                if isinstance(kind, sa.Boolean):
                    row[column["name"]] = False
                elif isinstance(kind, sa.Integer):
                    row[column["name"]] = 0
                elif isinstance(kind, (sa.DateTime, sa.Date)):
                    row[column["name"]] = dt.datetime(2026, 1, 1)
                else:
                    row[column["name"]] = "[]" if column["name"] == "tag_list" else f"x{len(row)}"
            connection.execute(sa.table(table, *(sa.column(name) for name in row)).insert().values(**row))
    finally:
        db.dispose()


def test_existing_protections_keep_their_meaning(fresh_url):  # noqa: F811
    migrate.upgrade(fresh_url, "0016")
    insert(fresh_url, "namespaces", id=1, path="g", name="g", kind="group")
    insert(fresh_url, "projects", id=1, namespace_id=1, name="p", path="p")
    insert(fresh_url, "protected_branches", id=1, project_id=1, name="devs", developers_can_push=True)
    insert(fresh_url, "protected_branches", id=2, project_id=1, name="masters", developers_can_push=False)
    migrate.upgrade(fresh_url, "0020")
    assert run(fresh_url, ROWS) == [("devs", 30, 30, 40, False), ("masters", 40, 40, 40, False)]
    migrate.downgrade(fresh_url, "0016")
    assert run(fresh_url, "SELECT name, developers_can_push FROM protected_branches ORDER BY name") == [
        ("devs", True), ("masters", False)]  # fmt: skip
