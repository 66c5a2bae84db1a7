"""Query helpers every list uses: case-insensitive text search and one counted page."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Select, bindparam, func, or_, select
from sqlalchemy.orm import Session


def matches_text(text: str, *columns) -> ColumnElement[bool]:
    """Case-insensitive substring match of TEXT in any of COLUMNS (LIKE wildcards in TEXT are literal)."""
    needle = text.lower()
    return or_(*(func.lower(column).contains(needle, autoescape=True) for column in columns))


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in TEXT made literal (escape character `/`), lower case: the
    value of a `matches_pattern` parameter."""
    escaped = text.lower().replace("/", "//").replace("%", "/%").replace("_", "/_")
    return f"%{escaped}%"


def matches_pattern(param: str, *columns) -> ColumnElement[bool]:
    """`matches_text` for a statement built once: the `like_pattern` is the bound parameter PARAM."""
    return or_(*(func.lower(column).like(bindparam(param), escape="/") for column in columns))


def counted_page(session: Session, query: Select, offset: int, limit: int, *order_by) -> tuple[int, list]:
    """(total rows of QUERY, the rows of one page in ORDER_BY): two queries whatever the page size."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    rows = session.scalars(query.order_by(*order_by).offset(offset).limit(limit)).all()
    return total, list(rows)

