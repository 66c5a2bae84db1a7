"""Polled reads benchmark: what CI dashboards, review bots and python-gitlab scripts poll, each
beside `GET /user` and the bare ASGI floor of api_floor.py, measured in the same run: codeyard as
shipped (`codeyard serve`, one process per core) and with one process, the floor with one uvicorn
process.

Seeding: a user with one project, a repository of 60 commits pushed over HTTP (its last commit
adds a `.gitlab-ci.yml` of 3 jobs, so the push makes a pipeline of 3 builds), a branch `old` five
commits back and a merge request from master into it with 3 comments, 5 comments on the head
commit and a 20 KB trace on the first build. Then wrk drives every endpoint in alternating rounds;
each round prints its req/s, p99, ratio to `GET /user` on the same server and server CPU per
request, and the summary gives their ranges and the two servers side by side.

    .venv/bin/python bench/polled_reads.py [--seconds 4] [--rounds 2] [--connections 16] [--db postgres]
        [--servers both|shipped|one]

`--db postgres` runs codeyard on a fresh schema of CODEYARD_BENCH_POSTGRES_URL (default
postgresql://postgres@127.0.0.1:5432/test), dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

from common import (
    PYTHON,
    add_shape_option,
    alternating_rounds,
    chosen_shapes,
    clean_git_env,
    codeyard_env,
    codeyard_servers,
    cpu_seconds,
    ensure_wrk,
    git,
    print_side_by_side,
    print_tree_comparison,
    seed_one_project,
    shaped,
    start_floor,
    stop,
    wait_until_up,
)
from projects_list import database, span

CI_CONFIG = """
test:
  script: make test
lint:
  script: make lint
docs:
  script: make docs
"""

# A trace on the first build of project 1 (builds are made by the push, traces by runners).
SEED_TRACE = """
from codeyard import config
from codeyard.db.models import Build
from codeyard.runtime import Runtime
from codeyard.services.ci import traces
rt = Runtime(config.load())
with rt.db.transaction() as session:
    build = session.query(Build).order_by(Build.id).first()
    traces.replace(rt, build, b"".join(b"$ step %d: something happened here ok\\n" % i for i in range(500)))
    print(build.id)
"""

FLOOR, USER = "floor (small body, api_floor.py)", "GET /user"


def push_repository(tmp: Path, remote: str) -> tuple[str, str]:
    """60 commits in six directories, the last adding the CI config, pushed to REMOTE; returns (head, head~5)."""
    work, env = tmp / "work", clean_git_env(tmp)
    git("init", "-q", "-b", "master", str(work), env=env)
    for number in range(60):
        folder = work / f"dir{number % 6}"
        folder.mkdir(exist_ok=True)
        (folder / f"file{number}.txt").write_text(f"line {number}\n" * (number + 1))
        (work / "README.md").write_text(f"# big\nrevision {number}\n")
        if number == 59:
            (work / ".gitlab-ci.yml").write_text(CI_CONFIG)
        git("add", "-A", cwd=work, env=env)
        git("-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", f"commit {number}",
            cwd=work, env=env)  # fmt: skip
    git("push", "-q", remote, "master", cwd=work, env=env)
    return git("rev-parse", "HEAD", cwd=work, env=env).strip(), git("rev-parse", "HEAD~5", cwd=work, env=env).strip()


def call(method: str, url: str, token: str, fields: dict | None = None) -> dict | list:
    data = urllib.parse.urlencode(fields).encode() if fields else None
    request = urllib.request.Request(url, data=data, method=method, headers={"PRIVATE-TOKEN": token})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def seed_through_api(api: str, token: str, head: str, old: str) -> dict[str, int]:
    """The branch, the merge request and its comments, the commit's comments; returns the ids."""
    call("POST", f"{api}/repository/branches", token, {"branch_name": "old", "ref": old})
    mr = call("POST", f"{api}/merge_requests", token, {"source_branch": "master", "target_branch": "old", "title": "Five"})
    for number in range(3):
        call("POST", f"{api}/merge_requests/{mr['id']}/notes", token, {"body": f"note {number}"})
    for number in range(5):
        call("POST", f"{api}/repository/commits/{head}/comments", token, {"note": f"comment {number}"})
    return {"mr": mr["id"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    add_shape_option(parser)
    args = parser.parse_args()
    wrk = ensure_wrk()
    shapes = chosen_shapes(args)

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp, database(args.db) as db_env:
        env, _port = codeyard_env(Path(tmp))
        env.update(db_env)
        token = seed_one_project(env)
        with codeyard_servers(env, shapes) as servers:
            first = servers[shapes[0]].base
            api = f"{first}/api/v3/projects/1"
            user_body = wait_until_up(f"{first}/api/v3/user", {"PRIVATE-TOKEN": token})
            print(f"seeding a repository, a pipeline, a merge request and comments ({args.db}) ...", flush=True)
            head, old = push_repository(Path(tmp), first.replace("http://", f"http://bench:{token}@") + "/bench/big.git")
            ids = seed_through_api(api, token, head, old)
            build = int(subprocess.run([PYTHON, "-c", SEED_TRACE], env=env, check=True, capture_output=True,
                                       text=True).stdout.split()[-1])  # fmt: skip
            floor, floor_base = start_floor(Path(tmp), user_body, env)
            try:
                repository, mr = "/projects/1/repository", f"/projects/1/merge_requests/{ids['mr']}"
                paths = {
                    USER: "/user",
                    "tree": f"{repository}/tree",
                    "file (README.md)": f"{repository}/files?file_path=README.md&ref=master",
                    "branches": f"{repository}/branches",
                    "branch": f"{repository}/branches/master",
                    "commits (20 of 60)": f"{repository}/commits",
                    "commit": f"{repository}/commits/{head}",
                    "commit comments (5)": f"{repository}/commits/{head}/comments",
                    "commit statuses (3)": f"{repository}/commits/{head}/statuses",
                    "merge requests": "/projects/1/merge_requests",
                    "merge request": mr,
                    "merge request notes (3)": f"{mr}/notes",
                    "merge request commits (5)": f"{mr}/commits",
                    "builds (3)": "/projects/1/builds",
                    "build": f"/projects/1/builds/{build}",
                    "build trace (20 KB)": f"/projects/1/builds/{build}/trace",
                    "events": "/projects/1/events",
                }
                urls = {shaped(name, shape): f"{server.base}/api/v3{path}" for shape, server in servers.items()
                        for name, path in paths.items()}  # fmt: skip
                for url in urls.values():
                    wait_until_up(url, {"PRIVATE-TOKEN": token})  # each answers 200 before it is measured
                targets = {FLOOR: floor_base + "/", **urls}
                cpu = {FLOOR: lambda: cpu_seconds(floor.pid),
                       **{shaped(name, shape): server.cpu_seconds for shape, server in servers.items() for name in paths}}  # fmt: skip
                results = alternating_rounds(wrk, targets, cpu, token, args,
                                             lambda number, rows: print_round(f"round {number + 1} ({args.db})", rows))  # fmt: skip
            finally:
                stop([floor])

    print(f"\nPolled reads, {args.db}; wrk -c{args.connections}, {args.rounds} rounds x {args.seconds}s; ratios within each round,"
          " to GET /user on the same server")  # fmt: skip
    print(f"{'':44s} {'req/s':>13s} {'p99 ms':>11s} {'of /user':>12s} {'cpu ms/req':>12s}")
    for name, runs in results.items():
        user = results[user_of(name)]
        ratios = [run["rps"] / user[i]["rps"] for i, run in enumerate(runs)]
        print(f"{name:44s} {span([r['rps'] for r in runs], '.0f'):>13s} {span([r['p99_ms'] for r in runs], '.1f'):>11s} "
              f"{span(ratios, '.3f'):>12s} {span([r['cpu_ms'] for r in runs], '.3f'):>12s}")  # fmt: skip
    best = lambda name, shape: max(run["rps"] for run in results[shaped(name, shape)])  # noqa: E731
    print_side_by_side(f"best round's req/s side by side (ratio: to GET /user on the same server; the floor: "
                       f"{max(run['rps'] for run in results[FLOOR]):.0f} req/s)", paths, shapes, best, baseline=USER)  # fmt: skip
    print_tree_comparison(results)


def user_of(name: str) -> str:
    """The row of GET /user on the server row NAME was measured on (the floor's own row for the floor)."""
    return shaped(USER, name.rsplit("[", 1)[1][:-1]) if name.endswith("]") else name


def print_round(title: str, rows: dict[str, dict]) -> None:
    print(f"\n{title}")
    print(f"{'':44s} {'req/s':>9s} {'p99 ms':>8s} {'of /user':>9s} {'cpu ms/req':>11s}")
    for name, row in rows.items():
        print(f"{name:44s} {row['rps']:9.0f} {row['p99_ms']:8.1f} {row['rps'] / rows[user_of(name)]['rps']:9.3f} {row['cpu_ms']:11.3f}")


if __name__ == "__main__":
    main()
