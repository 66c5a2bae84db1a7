"""Query helpers every list uses: case-insensitive text search and one counted page."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.orm import Session


def matches_text(text: str, *columns) -> ColumnElement[bool]:
    """Case-insensitive substring match of TEXT in any of COLUMNS (LIKE wildcards in TEXT are literal)."""
    needle = text.lower()
    return or_(*(func.lower(column).contains(needle, autoescape=True) for column in columns))


def counted_page(session: Session, query: Select, offset: int, limit: int, *order_by) -> tuple[int, list]:
    """(total rows of QUERY, the rows of one page in ORDER_BY): two queries whatever the page size."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    rows = session.scalars(query.order_by(*order_by).offset(offset).limit(limit)).all()
    return total, list(rows)

