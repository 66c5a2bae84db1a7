"""Declarative base, shared column types and the clock every table uses."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, DateTime, MetaData, TypeDecorator
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.sql.elements import ColumnElement

# Stable constraint names, so Alembic migrations read the same on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


# Integer columns hold at most this on PostgreSQL (SQLite's are wider); larger numbers from users
# name nothing and must not reach a query, where they would overflow.
MAX_INTEGER = 2**31 - 1
MIN_INTEGER = -(2**31)


def is_id(number: int) -> bool:
    """Whether NUMBER can name a row at all; ask before a lookup, so that no query overflows."""
    return 0 < number <= MAX_INTEGER


def parse_id(text: str) -> int | None:
    """The id TEXT spells (ASCII digits naming a possible row), or None."""
    if text.isascii() and text.isdigit() and len(text) <= 10:
        number = int(text)
        return number if is_id(number) else None
    return None


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class UtcDateTime(TypeDecorator):
    """A timestamp stored as naive UTC and read back as an aware UTC datetime, on every backend."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(dt.UTC).replace(tzinfo=None)

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC)

    def result_processor(self, dialect, coltype):
        if dialect.name == "sqlite":
            # SQLite hands back text; the C parser of the standard library is much faster than the
            # regular expression SQLAlchemy's generic SQLite DATETIME uses.
            def parse(value, _from=dt.datetime.fromisoformat, _utc=dt.UTC):
                return None if value is None else _from(value).replace(tzinfo=_utc)

            return parse
        return super().result_processor(dialect, coltype)


class UtcIsoText(TypeDecorator):
    """A UtcDateTime column read as the API's text, `2016-01-04T15:31:46.176Z` (entities.common.iso),
    without building a datetime: the read path selects timestamps through it
    (`type_coerce(column, UtcIsoText())`). Only for reading.

    PostgreSQL writes the text itself (`to_char`, whatever the session's DateStyle): a page of 100
    projects has 500 timestamps, and a datetime parsed by psycopg then formatted again cost more in
    Python than `to_char` in PostgreSQL (docs/MEASUREMENTS.md, project reads)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value, dialect):
        raise TypeError("UtcIsoText only reads")

    def column_expression(self, column):
        return _ApiTimestamp(column)

    def result_processor(self, dialect, coltype):
        if dialect.name == "postgresql":
            return None  # `_ApiTimestamp` made it the API's text
        if dialect.name == "sqlite":
            # SQLAlchemy stores `YYYY-MM-DD HH:MM:SS.ffffff`; the API shows milliseconds, cut (not rounded).
            def from_text(value, _from=dt.datetime.fromisoformat):
                if value is None:
                    return None
                if len(value) == 26 and value[10] == " " and value[19] == ".":
                    return f"{value[:10]}T{value[11:23]}Z"
                return _from(value).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"

            from_text.inline = _iso_text_form
            return from_text

        def from_datetime(value):
            if value is None:
                return None
            if value.tzinfo is not None:
                value = value.astimezone(dt.UTC).replace(tzinfo=None)
            return value.isoformat(timespec="milliseconds") + "Z"

        return from_datetime


class _ApiTimestamp(ColumnElement):
    """A naive UTC timestamp column as the API's text on PostgreSQL (milliseconds cut, as Python's
    `isoformat(timespec="milliseconds")` does); the column itself elsewhere."""

    inherit_cache = True

    def __init__(self, column):
        self.column = column
        self.type = column.type


@compiles(_ApiTimestamp)
def _compile_timestamp(element, compiler, **kw):
    return compiler.process(element.column, **kw)


@compiles(_ApiTimestamp, "postgresql")
def _compile_timestamp_postgresql(element, compiler, **kw):
    return f"""to_char({compiler.process(element.column, **kw)}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""


def _iso_text_form(value: str, processor: str) -> str:
    """UtcIsoText's SQLite processor as an expression (`db.engine.inline_form`): its common case
    written out, the processor called for the others."""
    common = f'f"{{{value}[:10]}}T{{{value}[11:23]}}Z"'
    return f'({common} if len({value}) == 26 and {value}[10] == " " and {value}[19] == "." else {processor}({value}))'


class JsonList(TypeDecorator):
    """A JSON array column (SQLite stores it as text, PostgreSQL as json)."""

    impl = JSON
    cache_ok = True

    def result_processor(self, dialect, coltype):
        processor = super().result_processor(dialect, coltype)
        if processor is not None and dialect.name == "sqlite":
            processor.inline = _empty_list_form
        return processor

    def process_bind_param(self, value, dialect):
        return list(value) if value is not None else None

    def process_result_value(self, value, dialect):
        return list(value) if value is not None else []


def _empty_list_form(value: str, processor: str) -> str:
    """JsonList's SQLite processor as an expression (`db.engine.inline_form`): most lists are
    empty."""
    return f'([] if {value} == "[]" else {processor}({value}))'
