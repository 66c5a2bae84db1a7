"""Plans and timings of the project list statements (services/project_reads.py) on a seeded database.

The database is the one codeyard's environment names (CODEYARD_DATA_DIR, CODEYARD_DATABASE_URL);
`--seed` fills it first with projects_list.py's 10,000 projects (then ANALYZE on PostgreSQL). For
each scope it prints the count and page statements' time on the fast path (median and minimum of
`--runs`), and with `--explain` their plans (EXPLAIN ANALYZE on PostgreSQL, EXPLAIN QUERY PLAN on
SQLite). `--plans generic` or `custom` sets PostgreSQL's plan_cache_mode on the connection: the
fast path prepares a statement after psycopg's fifth execution and PostgreSQL then settles on a
generic plan, so the generic plan is what a running server uses.

    CODEYARD_DATA_DIR=... .venv/bin/python bench/projects_list_plans.py [--seed] [--explain] [member all ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from sqlalchemy import select

from codeyard import config
from codeyard.db.engine import Prepared
from codeyard.db.models import User
from codeyard.runtime import Runtime
from codeyard.services import project_reads, projects
from common import PYTHON
from projects_list import SEED

SCOPES = ("member", "all", "owned", "starred")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scopes", nargs="*", default=SCOPES)
    parser.add_argument("--seed", action="store_true")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--user", default="boss")
    parser.add_argument("--plans", choices=("auto", "generic", "custom"), default="auto")
    args = parser.parse_args()
    if args.seed:
        subprocess.run([PYTHON, "-c", SEED], check=True, capture_output=True)
    db = Runtime(config.load()).db
    connection = db._fast_connection()
    if not db.is_sqlite:
        cursor = connection.cursor()
        if args.seed:
            cursor.execute("ANALYZE")
        cursor.execute(f"SET plan_cache_mode = {'auto' if args.plans == 'auto' else f'force_{args.plans}_plan'}")
    with db.transaction(write=False) as session:
        user = session.execute(select(User).where(User.username == args.user)).scalar_one()
        session.expunge(user)
    for scope in args.scopes:
        query = project_reads.Query(scope, user, projects.Filters())
        count, rows, params, _every = project_reads.page_plan(db, query, 0, 100)  # the first page, as a server runs it
        for label, statement in ((("count", count), ("rows", rows))):
            if args.explain:
                explain(db, connection, statement, params, f"{scope} {label}")
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                rows = db.fast_all(statement, params)
                times.append((time.perf_counter() - started) * 1000)
            size = rows[0][0] if label == "count" else len(rows)
            print(f"{scope:8s} {label:5s} {size:6d} rows  median {statistics.median(times):7.2f} ms  min {min(times):7.2f} ms")


def explain(db, connection, statement, params: dict, title: str) -> None:
    prepared = Prepared(statement, db.engine.dialect)
    cursor = connection.cursor()
    cursor.execute(("EXPLAIN QUERY PLAN " if db.is_sqlite else "EXPLAIN (ANALYZE) ") + prepared.sql, prepared.parameters(params))
    print(f"== {title}")
    for row in cursor.fetchall():
        print("  ", row[-1] if db.is_sqlite else row[0])


if __name__ == "__main__":
    main()
