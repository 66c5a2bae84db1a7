"""Project reads benchmark: `GET /user`, `GET /projects/:id`, `GET /projects?per_page=100` and
`/projects/all?per_page=100` as admin, with 10,000 projects and 1,000 users, beside the bare ASGI
floor of api_floor.py, all measured in the same run: codeyard as shipped (`codeyard serve`, one
process per core) and with one process, the floors with one uvicorn process each.

Seeding: 1,000 users (services), 10,000 projects inserted in bulk (the lists read no repository,
so none is created on disk; created a second apart, as projects are), the admin a developer of 1,000 of them and a member of a group of
500 more, 3,000 stars and 300 fork links. Then wrk drives each endpoint (and the floor, once with a
small body and once with the list's body) in alternating rounds. Every round prints each
endpoint's ratio to `GET /user` on the same server and to the small-body floor; the summary gives
their ranges, the server as shipped and with one process one after the other.

    .venv/bin/python bench/projects_list.py [--seconds 5] [--rounds 3] [--connections 16] [--db postgres]
        [--servers both|shipped|one]

`--db postgres` runs codeyard on a fresh schema of CODEYARD_BENCH_POSTGRES_URL (default
postgresql://postgres@127.0.0.1:5432/test), dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

from common import (
    PYTHON,
    add_shape_option,
    alternating_rounds,
    chosen_shapes,
    codeyard_env,
    codeyard_servers,
    cpu_seconds,
    ensure_wrk,
    print_side_by_side,
    print_table,
    print_tree_comparison,
    shaped,
    start_floor,
    stop,
    wait_until_up,
)

SEED = """
import random, secrets
from datetime import timedelta
from sqlalchemy import insert
from codeyard import config
from codeyard.db import migrate
from codeyard.db.models import ForkLink, GroupMember, Namespace, Project, ProjectMember, Star, User, utcnow
from codeyard.runtime import Runtime
from codeyard.services import credentials, groups, users
random.seed(7)
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
with rt.db.transaction() as session:
    admin = users.create(session, {"username": "boss", "email": "boss@example.com", "name": "Boss", "is_admin": True}, None)
    _, token = credentials.issue_token(session, admin.id, name="bench")
    people = [users.create(session, {"username": f"user{i}", "email": f"user{i}@example.com", "name": f"User {i}"}, None)
              for i in range(999)]
    group = groups.create(session, admin, {"name": "Big", "path": "big", "visibility_level": 0})
    namespaces = {u.id: users.personal_namespace(session, u).id for u in people}
    now = utcnow()
    rows = []
    for n in range(10_000):
        owner = people[n % len(people)]
        in_group = n < 500
        rows.append({
            "namespace_id": group.id if in_group else namespaces[owner.id], "name": f"Project {n}", "path": f"project-{n}",
            "description": f"benchmark project {n}", "visibility_level": random.choice((0, 10, 20)),
            "creator_id": owner.id, "runners_token_nonce": secrets.token_hex(16),
            "runners_token_digest": secrets.token_hex(32), "tag_list": [], "created_at": now - timedelta(seconds=n),
            "updated_at": now, "last_activity_at": now, "issues_enabled": True, "merge_requests_enabled": True, "builds_enabled": True,
            "wiki_enabled": True, "snippets_enabled": False, "shared_runners_enabled": True, "public_builds": True,
            "archived": False,
        })
    session.execute(insert(Project), rows)
    ids = [p for (p,) in session.query(Project.id).order_by(Project.id)]
    session.execute(insert(ProjectMember), [
        {"project_id": p, "user_id": people[i % len(people)].id, "access_level": 40, "notification_level": 3,
         "created_at": now, "updated_at": now} for i, p in enumerate(ids[500:])])
    session.execute(insert(ProjectMember), [
        {"project_id": p, "user_id": admin.id, "access_level": 30, "notification_level": 3, "created_at": now,
         "updated_at": now} for p in ids[500:1500]])
    session.execute(insert(Star), [{"user_id": people[i % 999].id, "project_id": p, "created_at": now}
                                   for i, p in enumerate(random.sample(ids, 3000))])
    session.execute(insert(ForkLink), [{"forked_to_project_id": ids[-1 - i], "forked_from_project_id": ids[500 + i],
                                        "created_at": now, "updated_at": now} for i in range(300)])
print(token, ids[700])
"""


POSTGRES_URL = os.environ.get("CODEYARD_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
FLOOR, USER = "floor (small body, api_floor.py)", "GET /user"


@contextmanager
def database(kind: str):
    """Environment additions for codeyard's database: none for SQLite (the data directory's file),
    else a PostgreSQL schema made for this run and dropped after it."""
    if kind == "sqlite":
        yield {}
        return
    import psycopg

    schema = f"cy_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield {"CODEYARD_DATABASE_URL": f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}options=-csearch_path%3D{schema}"}
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    add_shape_option(parser)
    args = parser.parse_args()
    wrk = ensure_wrk()
    shapes = chosen_shapes(args)

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp, database(args.db) as db_env:
        env, _port = codeyard_env(Path(tmp))
        env.update(db_env)
        print(f"seeding 1,000 users and 10,000 projects ({args.db}) ...", flush=True)
        seeded = subprocess.run([PYTHON, "-c", SEED], env=env, check=True, capture_output=True, text=True).stdout.split()
        token, project_id = seeded[-2], seeded[-1]
        if db_env:
            import psycopg

            with psycopg.connect(db_env["CODEYARD_DATABASE_URL"], autocommit=True) as connection:
                connection.execute("ANALYZE")  # the statistics autovacuum would soon gather
        with codeyard_servers(env, shapes) as servers:
            auth = {"PRIVATE-TOKEN": token}
            paths = {
                USER: "/user",
                "GET /projects/:id": f"/projects/{project_id}",
                "GET /projects?per_page=100": "/projects?per_page=100",
                "GET /projects/all?per_page=100": "/projects/all?per_page=100",
            }
            urls = {shaped(name, shape): f"{server.base}/api/v3{path}" for shape, server in servers.items()
                    for name, path in paths.items()}  # fmt: skip
            list_body = wait_until_up(urls[shaped("GET /projects?per_page=100", shapes[0])], auth)
            assert len(json.loads(list_body)) == 100
            user_body = wait_until_up(urls[shaped(USER, shapes[0])], auth)
            small_floor, small_base = start_floor(Path(tmp) / ".", user_body, env)
            (Path(tmp) / "big").mkdir()
            big_floor, big_base = start_floor(Path(tmp) / "big", list_body, env)
            try:
                big = f"floor ({len(list_body) // 1024} KiB list body)"
                targets = {FLOOR: small_base + "/", big: big_base + "/", **urls}
                cpu = {FLOOR: lambda: cpu_seconds(small_floor.pid), big: lambda: cpu_seconds(big_floor.pid),
                       **{shaped(name, shape): server.cpu_seconds for shape, server in servers.items() for name in paths}}  # fmt: skip
                results = alternating_rounds(wrk, targets, cpu, token, args,
                                             lambda number, rows: print_round(f"round {number + 1} ({args.db})", rows, shapes))  # fmt: skip
            finally:
                stop([small_floor, big_floor])

    print(f"\n10,000 projects, 1,000 users, {args.db}; wrk -c{args.connections}, {args.rounds} rounds x {args.seconds}s")
    print("req/s and its ratios depend on what else the machine runs meanwhile; server CPU ms per request")
    print("(and its ratios, 'cpu of /user' = CPU ms of GET /user / CPU ms of the endpoint) much less so.")
    print("'of /user' compares with GET /user on the same server; [as shipped] is `codeyard serve` (one process")
    print("per core: its CPU is every process's, the job worker's too), [one process] is `--workers 1`.")
    print(f"{'':48s} {'req/s':>11s} {'p50 ms':>13s} {'p99 ms':>13s} {'of /user':>12s} {'of floor':>12s} "
          f"{'cpu ms/req':>12s} {'cpu of /user':>12s} {'cpu of floor':>12s}")  # fmt: skip
    for name, runs in results.items():
        user = results[shaped(USER, name.rsplit("[", 1)[1][:-1])] if "[" in name else results[FLOOR]
        ratios_user = [run["rps"] / user[i]["rps"] for i, run in enumerate(runs)]
        ratios_floor = [run["rps"] / results[FLOOR][i]["rps"] for i, run in enumerate(runs)]
        cpu_user = [user[i]["cpu_ms"] / run["cpu_ms"] for i, run in enumerate(runs)]
        cpu_floor = [results[FLOOR][i]["cpu_ms"] / run["cpu_ms"] for i, run in enumerate(runs)]
        print(f"{name:48s} {span([r['rps'] for r in runs], '.0f'):>11s} {span([r['p50_ms'] for r in runs], '.2f'):>13s} "
              f"{span([r['p99_ms'] for r in runs], '.1f'):>13s} {span(ratios_user, '.3f'):>12s} {span(ratios_floor, '.3f'):>12s} "
              f"{span([r['cpu_ms'] for r in runs], '.3f'):>12s} {span(cpu_user, '.3f'):>12s} {span(cpu_floor, '.3f'):>12s}")  # fmt: skip
    best = lambda name, shape: max(run["rps"] for run in results[shaped(name, shape)])  # noqa: E731
    print_side_by_side(f"best round's req/s side by side (ratio: to GET /user on the same server; the small floor: "
                       f"{max(run['rps'] for run in results[FLOOR]):.0f} req/s)", paths, shapes, best, baseline=USER)  # fmt: skip
    print_tree_comparison(results)


def print_round(title: str, rows: dict[str, dict], shapes) -> None:
    print_table(title, rows)
    for shape in shapes:
        user = rows[shaped(USER, shape)]
        for name, row in rows.items():
            if name.startswith("GET") and name.endswith(f"[{shape}]"):
                print(f"  {name}: {row['rps'] / user['rps']:.3f} of GET /user, {row['rps'] / rows[FLOOR]['rps']:.3f} of the floor; "
                      f"{row['cpu_ms']:.3f} CPU ms per request ({user['cpu_ms'] / row['cpu_ms']:.3f} of GET /user's rate)")  # fmt: skip


def span(values: list[float], spec: str) -> str:
    low, high = min(values), max(values)
    return f"{low:{spec}}" if f"{low:{spec}}" == f"{high:{spec}}" else f"{low:{spec}}-{high:{spec}}"


if __name__ == "__main__":
    main()
