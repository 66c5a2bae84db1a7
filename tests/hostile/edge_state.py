"""What an edge attack must leave alone: every table's rows and every file under the data dir."""

from __future__ import annotations

from sqlalchemy import text

from codeyard.db.models import Base


def snapshot(rt) -> tuple[dict[str, int], list[tuple[str, int]]]:
    with rt.db.engine.connect() as connection:
        rows = {table.name: connection.execute(text(f'SELECT count(*) FROM "{table.name}"')).scalar_one()
                for table in Base.metadata.sorted_tables}
    files = sorted((str(path.relative_to(rt.config.data_dir)), path.stat().st_size)
                   for path in rt.config.data_dir.rglob("*") if path.is_file())
    return rows, files
