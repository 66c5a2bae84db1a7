"""What each operation of the mixed load costs in CPU, on the server and on its client, and whether
the mixed-load goals fit in this machine's cores at those costs.

CPU time does not depend on what else the machine runs (wall-clock figures do), so this reads
the same on a busy machine as on an idle one. For the server as shipped and with one process:
- an API read (`GET /api/v3/projects/1`, wrk over 16 keep-alive connections for SECONDS): the
  server's CPU per request, and wrk's;
- a fetch of one new commit (a fresh client borrowing the objects, as in git_fetch.py): the
  server's CPU (its processes and the git processes they ran) and the client's (`git fetch` and
  what it ran), against a local `git fetch` of the same commit (the baseline);
- a fetch with nothing new (a kept clone fetching every branch, as the mixed load's fetchers
  mostly do): the same sides;
- a push of one new commit: the server's CPU (git, hooks, recording, the job worker) and the
  client's `git push`, against a push to a bare repository on disk.
Then the CPU the goals ask for (2,000 API req/s, 40 fetches/s, 8 pushes/s) in CPU-seconds per
second, against the cores there are.

    .venv/bin/python bench/cpu_budget.py [--commits 1000] [--fetches 20] [--pushes 20] [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from common import (
    add_shape_option,
    chosen_shapes,
    clean_git_env,
    codeyard_env,
    codeyard_server,
    ensure_wrk,
    git,
    run_wrk,
    seed_one_project,
)
from git_fetch import fresh_client
from mixed_load import one_commit_ahead, push_commit

GOALS = {"api": 2000, "fetch": 40, "push": 8}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(action, server_cpu) -> tuple[float, float]:
    """(server CPU-seconds, client CPU-seconds) of ACTION; the server's job worker and git
    children finish their share within the pause after it."""
    server_before, client_before = server_cpu(), children_cpu()
    action()
    time.sleep(0.3)
    return server_cpu() - server_before, children_cpu() - client_before


def per_operation(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """Mean (server, client) milliseconds of CPU per run, the pause's idle CPU included (tiny)."""
    return tuple(sum(run[side] for run in runs) / len(runs) * 1000 for side in (0, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--fetches", type=int, default=20)
    parser.add_argument("--pushes", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=5, help="of wrk")
    add_shape_option(parser)
    args = parser.parse_args()
    wrk = ensure_wrk()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, _port = codeyard_env(tmp)
        git_env = clean_git_env(tmp)
        source, base, parent = one_commit_ahead(tmp, args.commits, git_env)
        token = seed_one_project(env)
        pusher = fresh_client(tmp / "pusher", base, parent, git_env)
        git("update-ref", "refs/heads/pusher", parent, cwd=pusher, env=git_env)
        floor = tmp / "floor.git"
        git("clone", "-q", "--bare", "--no-local", str(base), str(floor), env=git_env)
        figures = {}
        pushed = 0
        for shape in chosen_shapes(args):
            with codeyard_server(env, shape) as server:
                remote = server.base.replace("http://", f"http://bench:{token}@") + "/bench/big.git"
                if not figures:
                    git("push", "-q", remote, "master", cwd=source, env=git_env)
                hosted = tmp / "data" / "repositories" / "1.git"
                before = server.cpu_seconds()
                api = run_wrk(wrk, f"{server.base}/api/v3/projects/1", token, args.seconds, 16)
                api_ms = (server.cpu_seconds() - before) / (api["rps"] * args.seconds) * 1000

                def fetch(remote_url: str) -> tuple[float, float]:
                    client = fresh_client(tmp / "fetcher", base, parent, git_env)
                    try:
                        return measured(lambda: git("fetch", "-q", remote_url, "+refs/heads/master:refs/heads/master",
                                                    cwd=client, env=git_env), server.cpu_seconds)  # fmt: skip
                    finally:
                        shutil.rmtree(client)

                def push(remote_url: str) -> tuple[float, float]:
                    nonlocal pushed
                    pushed += 1
                    push_commit(pusher, "pusher", pushed, git_env)
                    return measured(lambda: git("push", "-q", "--force", remote_url, "refs/heads/pusher", cwd=pusher, env=git_env),
                                    server.cpu_seconds)  # fmt: skip

                kept = tmp / f"kept-{shape}"
                git("clone", "-q", "--bare", remote, str(kept), env=git_env)

                def poll(remote_url: str, clone: Path = kept) -> tuple[float, float]:
                    return measured(lambda: git("fetch", "-q", remote_url, "+refs/heads/*:refs/heads/*", cwd=clone, env=git_env),
                                    server.cpu_seconds)  # fmt: skip

                figures[shape] = {
                    "api": (api_ms, None),
                    "fetch": per_operation([fetch(remote) for _ in range(args.fetches)]),
                    "poll": per_operation([poll(remote) for _ in range(args.fetches)]),
                    "push": per_operation([push(remote) for _ in range(args.pushes)]),
                }
                figures.setdefault("git on disk", {
                    "fetch": per_operation([fetch(str(hosted)) for _ in range(args.fetches)]),
                    "poll": per_operation([poll(str(hosted)) for _ in range(args.fetches)]),
                    "push": per_operation([push(str(floor)) for _ in range(args.pushes)]),
                })  # fmt: skip
    report(figures, cores)


def report(figures: dict, cores: int) -> None:
    print(f"\nCPU per operation in ms (server | client); {cores} cores")
    for name, row in figures.items():
        cells = "".join(f"   {op}: {server:6.2f} | " + ("-" if client is None else f"{client:6.2f}")
                        for op, (server, client) in row.items())  # fmt: skip
        print(f"  {name:14s}{cells}")
    local = figures["git on disk"]
    for name, row in figures.items():
        if name == "git on disk":
            continue
        print(f"\n{name}: server CPU over a local git's whole CPU (ratio), and the goals' CPU-seconds per second")
        for op in ("fetch", "poll", "push"):
            print(f"  {op}: server {row[op][0]:.2f} ms / local git {sum(local[op]):.2f} ms = {row[op][0] / sum(local[op]):.2f}")
        for fetch in ("fetch", "poll"):
            goals = {"api": GOALS["api"], fetch: GOALS["fetch"], "push": GOALS["push"]}
            needed = {op: count * (row[op][0] + (row[op][1] or 0)) / 1000 for op, count in goals.items()}
            print(f"  at the goals, fetches as {fetch}: " + ", ".join(f"{op} {value:.2f}" for op, value in needed.items())
                  + f"; total {sum(needed.values()):.2f} of {cores} (wrk's own CPU not counted)")


if __name__ == "__main__":
    main()
