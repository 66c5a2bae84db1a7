"""Where a push's time goes: one-commit pushes over HTTP, broken down by process and step.

Runs `codeyard serve --workers 1` in a wrapper that times the server's steps of a push (the
credentials, the access decision, the journal, the git service, the recording and each
`post_push` step), and git's trace2 (written by the server's git only: its HOME names an event
directory) for git's processes: receive-pack, unpack-objects, and each hook (pre-receive,
reference-transaction). Then PUSHES pushes of one new commit each, and as git's own floor the
same pushes into a bare repository on disk (`git push` to a file:// URL: receive-pack without
HTTP, hooks or codeyard). Prints the median of each part; SRC runs another source tree.

    .venv/bin/python bench/push_cost.py [--pushes 20] [--src ../base/src]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from common import PYTHON, ROOT, clean_git_env, codeyard_env, git, seed_one_project, stop, wait_until_up

# The server, with its push steps timed (wall clock, so that they line up with git's trace2).
SERVER = '''
import asyncio, functools, json, os, sys, time
from codeyard import cli

OUT = open(os.environ["PUSH_COST_TIMINGS"], "a", buffering=1)


def timed(function, label):
    if asyncio.iscoroutinefunction(function):
        async def wrapper(*args, **kwargs):
            started = time.time()
            try:
                return await function(*args, **kwargs)
            finally:
                OUT.write(json.dumps([label(args), started, time.time()]) + "\\n")
    else:
        def wrapper(*args, **kwargs):
            started = time.time()
            try:
                return function(*args, **kwargs)
            finally:
                OUT.write(json.dumps([label(args), started, time.time()]) + "\\n")
    return functools.wraps(function)(wrapper)


def time_the_steps():
    # After `serve` has chosen the metrics directory: prometheus_client must not be imported before.
    from codeyard.githttp import transport
    from codeyard.services import push_journal, pushes

    transport.serve = timed(transport.serve, lambda args: "server: " + ("POST" if args[0].method == "POST" else "GET info/refs"))
    transport.user_for = timed(transport.user_for, lambda args: "server: credentials")
    transport.authorize = timed(transport.authorize, lambda args: "server: access decision")
    transport.run_service = timed(transport.run_service, lambda args: "server: git " + args[3].removeprefix("git-"))
    transport.after_push = timed(transport.after_push, lambda args: "server: recording awaited")
    push_journal.Journal.create = staticmethod(timed(push_journal.Journal.create, lambda args: "server: journal created"))
    push_journal.record_journal = timed(push_journal.record_journal, lambda args: "server: record_journal")
    pushes.post_push = timed(pushes.post_push, lambda args: "server: post_push")
    pushes.STEPS = tuple(timed(step, lambda args, name=step.__name__: "post_push: " + name) for step in pushes.STEPS)


count_across_processes = cli._count_across_processes
cli._count_across_processes = lambda config: (count_across_processes(config), time_the_steps())
sys.argv = ["codeyard", "serve", "--workers", "1"]
cli.main()
'''

TRACE_CONFIG = "[trace2]\n\teventTarget = {target}\n\teventNesting = 1\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pushes", type=int, default=20)
    parser.add_argument("--src", default=str(ROOT / "src"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, port = codeyard_env(tmp)
        git_env = clean_git_env(tmp)
        token = seed_one_project(env)
        traces, timings = tmp / "trace2", tmp / "timings.jsonl"
        traces.mkdir()
        server_home = tmp / "server-home"
        server_home.mkdir()
        (server_home / ".gitconfig").write_text(TRACE_CONFIG.format(target=traces))
        server_env = {**env, "HOME": str(server_home), "PYTHONPATH": args.src, "PUSH_COST_TIMINGS": str(timings)}
        server = subprocess.Popen([PYTHON, "-c", SERVER], env=server_env, cwd=ROOT, stdout=subprocess.DEVNULL)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/-/health")
            url = f"http://bench:{token}@127.0.0.1:{port}/bench/big.git"
            local = tmp / "local.git"
            git("init", "-q", "--bare", str(local), env=git_env)
            work = tmp / "work"
            git("init", "-q", str(work), env=git_env)
            for key, value in (("user.email", "bench@example.com"), ("user.name", "Bench")):
                git("config", key, value, cwd=work, env=git_env)
            commit(work, 0, git_env)
            git("push", "-q", url, "master", cwd=work, env=git_env)  # the first push creates the branch
            git("push", "-q", f"file://{local}", "master", cwd=work, env=git_env)
            for path in traces.iterdir():
                path.unlink()
            timings.write_text("")  # the server appends to it
            client, floor = [], []
            for number in range(1, args.pushes + 1):
                commit(work, number, git_env)
                client.append(timed_span(lambda: git("push", "-q", url, "master", cwd=work, env=git_env)))
                floor.append(timed_span(lambda: git("push", "-q", f"file://{local}", "master", cwd=work, env=git_env))[1])
        finally:
            stop([server])
        report(args, client, floor, timings, traces)


def commit(work: Path, number: int, env: dict) -> None:
    (work / "file.txt").write_text(f"change {number}\n")
    git("add", "file.txt", cwd=work, env=env)
    git("commit", "-q", "-m", f"change {number}", cwd=work, env=env)


def timed_span(action) -> tuple[float, float]:
    """(wall-clock start, seconds) of ACTION."""
    started, counter = time.time(), time.perf_counter()
    action()
    return started, time.perf_counter() - counter


def report(args, client: list[tuple[float, float]], floor: list[float], timings: Path, traces: Path) -> None:
    parts: dict[str, list[float]] = defaultdict(list)
    windows = [(start, start + seconds) for start, seconds in client]

    def add(label: str, started: float, seconds: float) -> None:
        if any(low <= started <= high for low, high in windows):
            parts[label].append(seconds * 1000)

    for line in timings.read_text().splitlines():
        label, started, ended = json.loads(line)
        add(label, started, ended - started)
    for path in traces.iterdir():
        for label, started, seconds in trace_spans(path):
            add(label, started, seconds)
    pushes = len(client)
    print(f"\none-commit pushes over HTTP, {pushes} pushes, medians in ms (per push: the sum of a part's runs)")
    print(f"  {'client: git push over HTTP':44s} {statistics.median(s * 1000 for _, s in client):8.1f}")
    print(f"  {'client: git push to file:// (git floor)':44s} {statistics.median(s * 1000 for s in floor):8.1f}")
    for label in sorted(parts):
        runs = parts[label]
        per_push = sum(runs) / pushes
        print(f"  {label:44s} {statistics.median(runs):8.1f}   x{len(runs) / pushes:.1f} per push, {per_push:.1f} per push")


def trace_spans(path: Path):
    """(label, wall-clock start, seconds) of one git process's trace2 file: the process itself (by
    git's command name) and its hooks."""
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    started = name = None
    children = {}
    for event in events:
        kind = event.get("event")
        if kind == "start":
            started = _time(event["time"])
        elif kind == "cmd_name":
            name = event["name"]
        elif kind == "child_start" and event.get("child_class") == "hook":
            children[event["child_id"]] = (event.get("hook_name"), _time(event["time"]))
        elif kind == "child_exit" and event["child_id"] in children:
            hook, at = children.pop(event["child_id"])
            yield f"git hook: {hook}", at, event["t_rel"]
        elif kind == "exit" and started is not None:
            yield f"git: {name}", started, event["t_abs"]


def _time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


if __name__ == "__main__":
    sys.exit(main())
