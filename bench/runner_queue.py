"""Runner queue benchmark: `POST /ci/api/v1/builds/register` with 100,000 finished and 10,000
pending builds, beside the bare ASGI floor; and the time from `git push` to a polling runner
being handed the push's build.

Seeds the builds directly (rows, not pushes), starts codeyard as shipped (`codeyard serve`, one
process per core) and with one process beside it, and drives each with wrk: every request claims a build (201), so the rounds are sized to stay
within the 10,000 pending builds, and the claimed builds are put back in the queue (pending, their
pipelines as seeded) before every round, so each round starts from the same queue. Each connection
count given (default 4, then 1: one connection's p99 is the pure latency; with 4 on one worker
requests queue behind each other) gets its own table, with ratios against the floor and the
server's CPU per request (all its processes). Then pushes a commit with a `.gitlab-ci.yml` over
HTTP to each server while a runner polls it in a tight loop, PUSHES times, and prints how long the
build took to reach it.
Goals: p99 <= 10 ms for register; push to pickup <= 1 s.

    .venv/bin/python bench/runner_queue.py [--seconds 3] [--rounds 3] [--connections 4,1] [--pushes 10]
        [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/test] [--servers both|shipped|one]

wrk is installed with apt-get when missing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from common import (
    PYTHON,
    add_shape_option,
    chosen_shapes,
    clean_git_env,
    codeyard_env,
    codeyard_servers,
    ensure_wrk,
    print_tree_comparison,
    run_wrk_with,
    shaped,
    start_floor,
    stop,
    wait_until_up,
)

FINISHED = 100_000
PENDING = 10_000
PROJECTS = 100

SEED = f"""
import datetime as dt
from sqlalchemy import insert, text
from codeyard import config
from codeyard.db import migrate
from codeyard.db.models import Build, Pipeline
from codeyard.runtime import Runtime
from codeyard.services import credentials, projects, users
from codeyard.services.ci import runners
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
now = dt.datetime.now(dt.timezone.utc)
with rt.db.transaction() as session:
    user = users.create(session, {{"username": "bench", "email": "bench@example.com", "name": "Bench", "projects_limit": 1000}}, None)
    _, token = credentials.issue_token(session, user.id, name="bench")
    namespace = users.personal_namespace(session, user)
    ids = [projects.create(session, rt, user, namespace, {{"name": f"p{{i}}"}}).id for i in range({PROJECTS})]
    registration = runners.registration_token(session, rt)
    pushed = projects.create(session, rt, user, namespace, {{"name": "pushed"}})
    pushed_token = projects.runners_token(rt.secret_key, pushed)
total = {FINISHED} + {PENDING}
per_pipeline = 10  # builds per pipeline: a pipeline of ten jobs
with rt.db.transaction() as session:
    pipelines = [dict(id=n + 1, project_id=ids[n % len(ids)], sha=f"{{n:040x}}", ref="master", tag=False, status="success",
                      created_at=now, updated_at=now) for n in range(total // per_pipeline)]
    session.execute(insert(Pipeline), pipelines)
    rows = []
    for n in range(total):
        pipeline = pipelines[n // per_pipeline]
        finished = n < {FINISHED}
        rows.append(dict(project_id=pipeline["project_id"], pipeline_id=pipeline["id"], name=f"job{{n % per_pipeline}}",
                         stage="test", stage_idx=0, ref="master", tag=False, sha=pipeline["sha"],
                         status=("success" if n % 10 else "canceled") if finished else "pending", when="on_success",
                         allow_failure=False, retried=False, commands="make test", options={{}}, yaml_variables=[],
                         tag_list=[], trace_size=0, created_at=now, updated_at=now,
                         finished_at=now if finished else None))
        if len(rows) == 5000:
            session.execute(insert(Build), rows)
            rows = []
    if rows:
        session.execute(insert(Build), rows)
if not rt.db.is_sqlite:  # the pipelines were given their ids: the pushes' pipelines come after them
    with rt.db.transaction() as session:
        session.execute(text("SELECT setval(pg_get_serial_sequence('ci_pipelines', 'id'), (SELECT max(id) FROM ci_pipelines))"))
print(token, registration, pushed_token)
"""

# The builds the rounds claimed go back to the queue, their pipelines back to the seeded status.
REQUEUE = """
from sqlalchemy import update
from codeyard import config
from codeyard.db.engine import Database
from codeyard.db.models import Build, Pipeline
db = Database(config.load().database_url)
with db.transaction() as session:
    session.execute(update(Build).where(Build.status == "running").values(
        status="pending", runner_id=None, token_digest=None, started_at=None))
    session.execute(update(Pipeline).where(Pipeline.status == "running").values(status="success", finished_at=None))
db.dispose()
"""

POST_SCRIPT = """
wrk.method = "POST"
wrk.body = '{{"token": "{token}"}}'
wrk.headers["Content-Type"] = "application/json"
"""

CI_YML = "test:\n  script:\n    - echo hello\n"


def run_wrk_post(wrk: str, url: str, script: Path, seconds: int, connections: int) -> dict:
    return run_wrk_with(wrk, url, ["-s", str(script)], seconds, connections, hint=" (queue exhausted?)")


def measure(args, wrk: str, env: dict, script: Path, floor_base: str, servers: dict, connections: int) -> dict:
    """ROUNDS rounds of the floor and of codeyard on each of SERVERS (shape -> Server) at
    CONNECTIONS, each codeyard round from the seeded queue; codeyard's rounds carry the server's
    CPU milliseconds per request."""
    runs: dict[str, list] = {"floor": [], **{shape: [] for shape in servers}}
    for number in range(args.rounds):
        runs["floor"].append(run_wrk_post(wrk, floor_base + "/ci/api/v1/builds/register", script, args.seconds, connections))
        for shape, server in list(servers.items())[::-1 if number % 2 else 1]:  # neither always first
            subprocess.run([PYTHON, "-c", REQUEUE], env=env, check=True)
            before = server.cpu_seconds()
            run = run_wrk_post(wrk, f"{server.base}/ci/api/v1/builds/register", script, args.seconds, connections)
            run["cpu_ms"] = (server.cpu_seconds() - before) * 1000 / run["requests"]
            runs[shape].append(run)
    return runs


def print_ratios(title: str, rows: dict[str, dict]) -> None:
    floor = rows["floor"]
    print(f"\n{title}")
    print(f"{'':12s} {'req/s':>8s} {'p50 ms':>8s} {'p99 ms':>8s} {'floor/req/s':>12s} {'p99/floor':>10s} {'CPU ms/req':>11s}")
    for name, r in rows.items():
        cpu = f"{r['cpu_ms']:11.2f}" if "cpu_ms" in r else f"{'':11s}"
        print(f"{name:12s} {r['rps']:8.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {floor['rps'] / r['rps']:12.1f} "
              f"{r['p99_ms'] / floor['p99_ms']:10.1f} {cpu}")  # fmt: skip


def register_runner(base: str, token: str) -> str:
    response = httpx.post(f"{base}/ci/api/v1/runners/register", json={"token": token}, timeout=30)
    response.raise_for_status()
    return response.json()["token"]


def push_to_pickup(base: str, user_token: str, runner: str, tmp: Path, pushes: int) -> list[tuple[float, float, float]]:
    """Per push: seconds `git push` took, seconds from its start and from its end to the runner's
    next poll being handed the build (the runner polls right after the push returns). The work tree
    under TMP carries on from the previous call's, if any (the servers share the repository)."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = clean_git_env(home)
    work = tmp / "work"
    git = lambda *args: subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)  # noqa: E731
    if not work.exists():
        subprocess.run(["git", "init", "-q", "-b", "master", str(work)], env=env, check=True)
        git("config", "user.email", "bench@example.com")
        git("config", "user.name", "Bench")
        (work / ".gitlab-ci.yml").write_text(CI_YML)
    remote = base.replace("http://", f"http://bench:{user_token}@") + "/bench/pushed.git"
    results = []
    with httpx.Client(timeout=30) as client:
        for n in range(pushes):
            (work / "n.txt").write_text(f"{n} {time.time()}\n")
            git("add", "-A")
            git("commit", "-q", "-m", f"change {n}")
            started = time.perf_counter()
            git("push", "-q", remote, "master")
            pushed = time.perf_counter()
            while True:
                answer = client.post(f"{base}/ci/api/v1/builds/register", json={"token": runner})
                if answer.status_code == 201:
                    picked = time.perf_counter()
                    client.put(f"{base}/ci/api/v1/builds/{answer.json()['id']}", json={"token": runner, "state": "success"})
                    break
                if time.perf_counter() - started > 30:
                    raise SystemExit("the pushed build never reached the runner")
            results.append((pushed - started, picked - started, picked - pushed))
    return results


def postgres_schema(url: str) -> tuple[str, str]:
    """A fresh schema on the server at URL: (database URL using it, schema name)."""
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}", schema


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=lambda v: [int(c) for c in v.split(",")], default=[4, 1],
                        help="wrk connection counts, comma separated (default 4,1)")  # fmt: skip
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--postgres", default=None, help="run on a new schema of this PostgreSQL server instead of SQLite")
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)
    wrk = ensure_wrk()
    schema = None

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        env, _port = codeyard_env(Path(tmp))
        if args.postgres:
            env["CODEYARD_DATABASE_URL"], schema = postgres_schema(args.postgres)
        backend = "PostgreSQL" if args.postgres else "SQLite"
        try:
            print(f"seeding {FINISHED} finished and {PENDING} pending builds ({backend}) ...", flush=True)
            seeding = subprocess.run([PYTHON, "-c", SEED], env=env, capture_output=True, text=True)
            if seeding.returncode != 0:
                raise SystemExit(f"seeding failed:\n{seeding.stderr}")
            seeded = seeding.stdout.split()
            user_token, registration, pushed_token = seeded[-3:]
            with codeyard_servers(env, shapes) as servers:
                base = servers[shapes[0]].base
                wait_until_up(base + "/api/v3/user", {"PRIVATE-TOKEN": user_token})
                runner = register_runner(base, registration)
                script = Path(tmp) / "post.lua"
                script.write_text(POST_SCRIPT.format(token=runner))
                sample = httpx.post(f"{base}/ci/api/v1/builds/register", json={"token": runner}, timeout=30)
                assert sample.status_code == 201, sample.text
                floor, floor_base = start_floor(Path(tmp), sample.content, env)
                try:
                    results = {connections: measure(args, wrk, env, script, floor_base, servers, connections)
                               for connections in args.connections}  # fmt: skip
                finally:
                    stop([floor])
                specific = register_runner(base, pushed_token)
                pickups = {shape: push_to_pickup(server.base, user_token, specific, Path(tmp), args.pushes)
                           for shape, server in servers.items()}  # fmt: skip
        finally:
            if schema:
                drop_schema(args.postgres, schema)

    for connections, runs in results.items():
        best = {name: min(rounds, key=lambda r: r["p99_ms"]) for name, rounds in runs.items()}
        print_ratios(f"POST /ci/api/v1/builds/register ({backend}; {FINISHED} finished, {PENDING} pending; "
                     f"wrk -c{connections}, best p99 of {args.rounds} x {args.seconds}s)", best)  # fmt: skip
        print("all rounds (p50/p99 ms):", {name: [(r["p50_ms"], r["p99_ms"]) for r in rounds] for name, rounds in runs.items()})
    print_tree_comparison({shaped(f"register -c{connections}", shape): rounds for connections, runs in results.items()
                           for shape, rounds in runs.items() if shape != "floor"})  # fmt: skip
    claimed = sum(r["requests"] for runs in results.values() for shape in shapes for r in runs[shape])
    print(f"builds handed out: {claimed} (every codeyard request claimed one)")
    for shape, rows in pickups.items():
        push_times, from_start, from_end = ([row[i] for row in rows] for i in range(3))
        print(f"{shape}: over {len(rows)} pushes (goal <= 1 s): git push took median {statistics.median(push_times):.3f} s; "
              f"push start -> build handed out median {statistics.median(from_start):.3f} s (max {max(from_start):.3f}); "
              f"push end -> handed out median {statistics.median(from_end) * 1000:.1f} ms (max {max(from_end) * 1000:.1f})")
    print(json.dumps({"register": {c: {n: min(r, key=lambda x: x["p99_ms"]) for n, r in runs.items()} for c, runs in results.items()},
                      "push_s": {shape: [round(row[0], 3) for row in rows] for shape, rows in pickups.items()},
                      "pickup_s": {shape: [round(row[1], 3) for row in rows] for shape, rows in pickups.items()}}))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
