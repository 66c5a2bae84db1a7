"""API v4 beside v3: the same reads through both edges of one server, in the same run.

v4 is a second edge of the same services, so each of its reads should cost what v3's does, plus
whatever its larger shapes cost to build. Seeding as polled_reads.py (a repository of 60 commits,
a pipeline, a merge request with notes); then wrk drives each read through /api/v3 and /api/v4
in alternating rounds, on codeyard as shipped (`codeyard serve`, one process per core) and with
one process. Each row prints req/s, p99, server CPU per request and the ratio of v4's req/s to
v3's for the same read in the same round (1.0: as fast).

    .venv/bin/python bench/v4_edge.py [--seconds 3] [--rounds 2] [--connections 16] [--db postgres]
        [--servers both|shipped|one]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from common import (
    add_shape_option,
    alternating_rounds,
    chosen_shapes,
    codeyard_env,
    codeyard_servers,
    ensure_wrk,
    seed_one_project,
    shaped,
    wait_until_up,
)
from polled_reads import push_repository, seed_through_api
from projects_list import database, span

# name -> (v3 path, v4 path); {mr} is the request's id in v3, {iid} its number in v4.
READS = {
    "the caller": ("/user", "/user"),
    "a project": ("/projects/1", "/projects/1"),
    "projects list": ("/projects", "/projects"),
    "branches": ("/projects/1/repository/branches", "/projects/1/repository/branches"),
    "commits (20 of 60)": ("/projects/1/repository/commits", "/projects/1/repository/commits"),
    "a file": ("/projects/1/repository/files?file_path=README.md&ref=master",
               "/projects/1/repository/files/README.md?ref=master"),
    "merge requests": ("/projects/1/merge_requests", "/projects/1/merge_requests"),
    "a merge request": ("/projects/1/merge_requests/{mr}", "/projects/1/merge_requests/{iid}"),
    "its notes (3)": ("/projects/1/merge_requests/{mr}/notes", "/projects/1/merge_requests/{iid}/notes"),
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    add_shape_option(parser)
    args = parser.parse_args()
    wrk, shapes = ensure_wrk(), chosen_shapes(args)

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp, database(args.db) as db_env:
        env, _port = codeyard_env(Path(tmp))
        env.update(db_env)
        token = seed_one_project(env)
        with codeyard_servers(env, shapes) as servers:
            first = servers[shapes[0]].base
            wait_until_up(f"{first}/api/v3/user", {"PRIVATE-TOKEN": token})
            print(f"seeding a repository, a pipeline, a merge request and notes ({args.db}) ...", flush=True)
            head, old = push_repository(Path(tmp), first.replace("http://", f"http://bench:{token}@") + "/bench/big.git")
            ids = seed_through_api(f"{first}/api/v3/projects/1", token, head, old)
            names = {"mr": ids["mr"], "iid": 1}
            urls = {}
            for shape, server in servers.items():
                for read, (v3, v4) in READS.items():
                    urls[shaped(f"{read} v3", shape)] = f"{server.base}/api/v3{v3.format(**names)}"
                    urls[shaped(f"{read} v4", shape)] = f"{server.base}/api/v4{v4.format(**names)}"
            for url in urls.values():
                wait_until_up(url, {"PRIVATE-TOKEN": token})  # each answers 200 before it is measured
            cpu = {name: servers[shape].cpu_seconds for shape in shapes for name in urls if name.endswith(f"[{shape}]")}
            results = alternating_rounds(wrk, urls, cpu, token, args, lambda number, rows: print(f"round {number + 1} done"))

    print(f"\nv4 beside v3, {args.db}; wrk -c{args.connections}, {args.rounds} rounds x {args.seconds}s")
    print(f"{'':40s} {'v3 req/s':>13s} {'v4 req/s':>13s} {'v4/v3':>11s} {'v3 cpu ms':>11s} {'v4 cpu ms':>11s}")
    for shape in shapes:
        for read in READS:
            v3, v4 = results[shaped(f"{read} v3", shape)], results[shaped(f"{read} v4", shape)]
            ratios = [new["rps"] / old["rps"] for old, new in zip(v3, v4, strict=True)]
            print(f"{shaped(read, shape):40s} {span([r['rps'] for r in v3], '.0f'):>13s} {span([r['rps'] for r in v4], '.0f'):>13s} "
                  f"{span(ratios, '.2f'):>11s} {span([r['cpu_ms'] for r in v3], '.2f'):>11s} "
                  f"{span([r['cpu_ms'] for r in v4], '.2f'):>11s}")  # fmt: skip


if __name__ == "__main__":
    main()
