"""libpq's connection string for a SQLAlchemy PostgreSQL URL, for the connections codeyard opens
with psycopg itself (db/changes.py, db/loop_reads.py)."""

from __future__ import annotations

from sqlalchemy.engine import make_url


def conninfo(url: str) -> str:
    """KEY=VALUE pairs, not the URL rendered again: that would write the spaces of a value
    (`options=-c a=1 -c b=2`, a password) as '+', which libpq does not read as spaces."""
    from psycopg.conninfo import make_conninfo

    parsed = make_url(url)
    return make_conninfo(host=parsed.host, port=parsed.port, dbname=parsed.database, user=parsed.username,
                         password=parsed.password, **parsed.query)  # fmt: skip
