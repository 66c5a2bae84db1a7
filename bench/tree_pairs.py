"""Paired reads: the CPU per request of polled_reads.py's GETs in codeyard's own process, this
checkout's code against another's, over the same data, for a machine too busy for wrk's rounds.

Seeds polled_reads.py's project (a repository, a pipeline, a merge request, comments), then starts
the app of each checkout in a process of its own (its `.venv`, no HTTP server: requests are handed
to the ASGI app one after another) and, for every path, asks each in turn for N requests, K times,
the order swapped each time, reading the process's CPU time around them. Each pair of turns ran
under the same load from the rest of the machine: the table gives the median of the K after/before
ratios and their quartiles.

    .venv/bin/python bench/tree_pairs.py --compare-tree DIR [--pairs 20] [--requests 40] [--db postgres]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from common import ROOT, codeyard_env, codeyard_server, seed_one_project, wait_until_up
from polled_reads import push_repository, seed_through_api
from projects_list import database

# One checkout's app; reads `[path, n]` lines, answers the process's CPU microseconds per request.
WORKER = """
import asyncio, json, sys, time
from codeyard.app import create_app
app, token = create_app(), sys.argv[1].encode()

async def get(path):
    sent = []
    path, _, query = path.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": [(b"host", b"127.0.0.1"), (b"private-token", token)], "client": ("127.0.0.1", 1)}
    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}
    async def send(message):
        sent.append(message)
    await app(scope, receive, send)
    assert sent[0]["status"] == 200, (path, sent[0]["status"])

async def main():
    started, messages = asyncio.Event(), asyncio.Queue()
    await messages.put({"type": "lifespan.startup"})
    async def send(message):
        started.set()
    asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"}}, messages.get, send))
    await started.wait()
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        path, n = json.loads(line)
        before = time.process_time()
        for _ in range(n):
            await get(path)
        print((time.process_time() - before) / n * 1e6, flush=True)

asyncio.run(main())
"""


class App:
    """The app of the checkout TREE over ENV's data, in a process of its own."""

    def __init__(self, tree: Path, env: dict, token: str):
        python = tree / ".venv" / "bin" / "python"
        self.process = subprocess.Popen([str(python), "-c", WORKER, token], cwd=tree, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip

    def cpu_us(self, path: str, n: int) -> float:
        self.process.stdin.write(json.dumps([path, n]) + "\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def stop(self) -> None:
        self.process.stdin.close()
        self.process.kill()
        self.process.wait()


def paths(head: str, mr: int) -> list[str]:
    repository, request = "/api/v3/projects/1/repository", f"/api/v3/projects/1/merge_requests/{mr}"
    return [
        "/api/v3/user", "/api/v3/projects/1", "/api/v3/projects?per_page=100", f"{repository}/tree",
        f"{repository}/files?file_path=README.md&ref=master", f"{repository}/branches", f"{repository}/branches/master",
        f"{repository}/commits", f"{repository}/commits/{head}", f"{repository}/commits/{head}/comments",
        f"{repository}/commits/{head}/statuses", "/api/v3/projects/1/merge_requests", request, f"{request}/notes",
        f"{request}/commits", "/api/v3/projects/1/builds", "/api/v3/projects/1/builds/1",
        "/api/v3/projects/1/builds/1/trace", "/api/v3/projects/1/events",
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-tree", type=Path, required=True, metavar="DIR", help="the checkout measured as `before`")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp, database(args.db) as db_env:
        env, _port = codeyard_env(Path(tmp))
        env.update(db_env)
        token = seed_one_project(env)
        print(f"seeding polled_reads.py's project ({args.db}) ...", flush=True)
        with codeyard_server(env) as server:
            wait_until_up(f"{server.base}/api/v3/user", {"PRIVATE-TOKEN": token})
            head, old = push_repository(Path(tmp), server.base.replace("http://", f"http://bench:{token}@") + "/bench/big.git")
            mr = seed_through_api(f"{server.base}/api/v3/projects/1", token, head, old)["mr"]
        apps = {"before": App(args.compare_tree.resolve(), env, token), "after": App(ROOT, env, token)}
        try:
            compare(apps, paths(head, mr), args)
        finally:
            for app in apps.values():
                app.stop()


def compare(apps: dict[str, App], targets: list[str], args) -> None:
    print(f"\n{args.db}: CPU us per request, medians of {args.pairs} turns of {args.requests} requests on each side")
    print(f"{'':60s} {'before':>8s} {'after':>8s} {'after/before':>12s} {'quartiles':>12s}")
    for path in targets:
        for app in apps.values():
            app.cpu_us(path, 20)  # warm: caches, prepared statements
        turns = {"before": [], "after": []}
        for number in range(args.pairs):
            for side in ("before", "after") if number % 2 == 0 else ("after", "before"):
                turns[side].append(apps[side].cpu_us(path, args.requests))
        ratios = [after / before for before, after in zip(turns["before"], turns["after"], strict=True)]
        low, _, high = statistics.quantiles(ratios, n=4)
        print(f"{path[-60:]:60s} {statistics.median(turns['before']):8.0f} {statistics.median(turns['after']):8.0f} "
              f"{statistics.median(ratios):12.3f} {low:6.3f}-{high:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
