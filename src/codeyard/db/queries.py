"""Query helpers every list uses: case-insensitive text search and one counted page (through a
session, or on the read path: `page_statements` built once, `read_page` run by any reader)."""

from __future__ import annotations

import functools

from sqlalchemy import BigInteger, ColumnElement, Integer, Select, bindparam, func, or_, select, type_coerce
from sqlalchemy.orm import Session

from .models.base import UtcIsoText, is_id


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in TEXT made literal (escape character `/`), lower case: the
    value of a `matches_pattern` parameter."""
    escaped = text.lower().replace("/", "//").replace("%", "/%").replace("_", "/_")
    return f"%{escaped}%"


def matches_pattern(param: str, *columns) -> ColumnElement[bool]:
    """Case-insensitive substring match in any of COLUMNS, for a statement built once: the
    `like_pattern` of the text is the bound parameter PARAM."""
    return or_(*(func.lower(column).like(bindparam(param), escape="/") for column in columns))


def api_text(column, name: str):
    """A timestamp column read as the API's text, labelled NAME: no datetime is built (on
    PostgreSQL the server writes it, `UtcIsoText`)."""
    return type_coerce(column, UtcIsoText()).label(name)


def joined_columns(table, names: tuple[str, ...], prefix: str) -> tuple:
    """The columns NAMES of TABLE (an alias joined into a read path's statement), each labelled
    PREFIX + name and in that order, its timestamps (`*_at`) as the API's text: `joined_part`
    takes them back."""
    return tuple(
        api_text(getattr(table, name), prefix + name) if name.endswith("_at") else getattr(table, name).label(prefix + name)
        for name in names
    )


def joined_part(kind, row, prefix: str):
    """KIND (a named tuple of `joined_columns`' names) made of ROW's columns labelled PREFIX + name,
    or None when the outer join found no row (its first column, the id, is NULL)."""
    at = _position(type(row), prefix, kind._fields)
    values = row[at]
    return None if values[0] is None else kind._make(values)


@functools.cache
def _position(row_type, prefix: str, names: tuple[str, ...]) -> slice:
    """Where the columns PREFIX + NAMES are, in that order, in rows of ROW_TYPE (a statement's
    named tuple, whose repeated names are renamed: a label taken twice is an error here)."""
    labels = tuple(prefix + name for name in names)
    start = row_type._fields.index(labels[0])
    at = slice(start, start + len(labels))
    if row_type._fields[at] != labels:
        raise ValueError(f"the row's columns {row_type._fields[at]} are not {labels}")
    return at


def counted_page(session: Session, query: Select, offset: int, limit: int, *order_by) -> tuple[int, list]:
    """(total rows of QUERY, the rows of one page in ORDER_BY): two queries whatever the page size."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    rows = session.scalars(query.order_by(*order_by).offset(offset).limit(limit)).all()
    return total, list(rows)


# The offset is a bigint: a page number up to 2**31 - 1 times 100 overflows PostgreSQL's integer.
LIMIT, OFFSET = bindparam("limit", type_=Integer), bindparam("offset", type_=BigInteger)


def page_statements(columns, source, conditions, order_by) -> tuple[Select, Select]:
    """(count, page) of the rows of SOURCE meeting CONDITIONS, for statements built once: the page
    (`:limit` rows from `:offset` in ORDER_BY) carries the total in every row (`total`, a count run
    once per statement), so the count is needed only past the last page (`read_page`)."""
    count = select(func.count()).select_from(source).where(*conditions)
    total = count.correlate(None).scalar_subquery().label("total")
    page = select(*columns, total).select_from(source).where(*conditions).order_by(*order_by).limit(LIMIT).offset(OFFSET)
    return count, page


async def read_row(reader, statement: Select, params: dict, ident: int, missing: type[Exception]):
    """The first row of STATEMENT with PARAMS through READER (`db/readers.py`); MISSING raised when
    there is none, or at once (no query can overflow) when IDENT, the id PARAMS look up, can name no row."""
    row = await reader.first(statement, params) if is_id(ident) else None
    if row is None:
        raise missing()
    return row


async def read_page(reader, statements: tuple[Select, Select], params: dict) -> tuple[int, list]:
    """(total, rows of one page) of `page_statements` with PARAMS (`limit` and `offset` among them),
    through READER (`db/readers.py`)."""
    count, page = statements
    rows = await reader.all(page, params)
    if rows:
        return rows[0].total, rows
    return ((await reader.first(count, params))[0] if params["offset"] else 0), rows
