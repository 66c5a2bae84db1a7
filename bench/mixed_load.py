"""Mixed load on one machine: API reads, fetches and pushes at the same time, on codeyard as shipped
and with one process.

Builds a repository of COMMITS commits (git fast-import), pushes it and then one more commit to
codeyard's project `bench/big`. Then, for SECONDS, all at once on the same cores:
- wrk reads `GET /api/v3/projects/1` over 16 keep-alive connections;
- 4 clients fetch in a loop, each from a clone of its own that it keeps, every branch: what the
  pushers pushed since its last fetch, or nothing new (`--fresh-clients`: instead each fetch is of
  exactly one new commit, by a fresh client borrowing the repository's objects by alternates with
  master at the commit before the tip, as in git_fetch.py; its set-up is the client's work too);
- 2 clients push in a loop, each push one new commit on a branch of its own.
Prints API req/s, fetches/s, pushes/s and errors (wrk's non-2xx answers and socket errors, failed
git commands) for the server as shipped (`codeyard serve`, one process per core) and with one
process (`--workers 1`), side by side; the shapes alternate, one server running at a time, ROUNDS
rounds each. The baseline from the same run is each figure on the one-process server (ratio).
Goals (issue 31, as shipped): >= 2,000 API req/s, >= 40 fetches/s, >= 8 pushes/s, no error.

    .venv/bin/python bench/mixed_load.py [--seconds 20] [--rounds 2] [--commits 1000] [--fresh-clients]
                                         [--servers both|shipped|one]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from clone import fast_import_stream
from common import (
    add_shape_option,
    chosen_shapes,
    clean_git_env,
    codeyard_env,
    codeyard_server,
    ensure_wrk,
    git,
    imported_repository,
    seed_one_project,
)
from git_fetch import fresh_client

FETCHERS, PUSHERS, CONNECTIONS = 4, 2, 16


def push_commit(repository: Path, branch: str, number: int, env: dict) -> None:
    """One new commit on BRANCH of REPOSITORY (changing a file of its own), by fast-import."""
    text = f"{branch} change {number}\n"
    message = f"{branch} {number}\n"
    stream = (f"commit refs/heads/{branch}\ncommitter Bench <bench@example.com> {1_600_000_000 + number} +0000\n"
              f"data {len(message)}\n{message}from refs/heads/{branch}^0\n"
              f"M 100644 inline {branch}.txt\ndata {len(text)}\n{text}\n")  # fmt: skip
    git("fast-import", "--quiet", "--force", cwd=repository, env=env, input=stream.encode())


def one_commit_ahead(tmp: Path, commits: int, env: dict) -> tuple[Path, Path, str]:
    """(source, base, parent): a repository of COMMITS commits and then one more (source), a bare
    copy of it before that last commit (base, for clients to borrow objects from), and that
    commit's parent."""
    source = imported_repository(tmp / "source.git", fast_import_stream(commits), env)
    base = tmp / "base.git"
    git("clone", "-q", "--bare", "--no-local", str(source), str(base), env=env)
    parent = git("rev-parse", "master", cwd=source, env=env).strip()
    git("fast-import", "--quiet", cwd=source, env=env, input=fast_import_stream(1, start=commits, parent=parent))
    return source, base, parent


class Loop(threading.Thread):
    """Runs ACTION(number) again and again until DEADLINE; counts those that ended by then, and
    the failures."""

    def __init__(self, action, deadline: float):
        super().__init__(daemon=True)
        self.action, self.deadline = action, deadline
        self.done = self.errors = 0
        self.first_error = ""

    def run(self) -> None:
        number = 0
        while time.monotonic() < self.deadline:
            number += 1
            try:
                self.action(number)
            except subprocess.CalledProcessError as error:
                self.errors += 1
                self.first_error = self.first_error or (error.stderr or b"").decode(errors="replace")[-300:]
                continue
            if time.monotonic() <= self.deadline:
                self.done += 1


def wrk_run(wrk: str, url: str, token: str, seconds: int) -> dict:
    output = subprocess.run([wrk, "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s", "-H", f"PRIVATE-TOKEN: {token}", url],
                            check=True, capture_output=True, text=True).stdout  # fmt: skip
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
            "errors": (int(non_2xx.group(1)) if non_2xx else 0) + (sum(map(int, sockets.groups())) if sockets else 0)}  # fmt: skip


def mixed_round(wrk: str, base: str, token: str, tmp: Path, repositories: dict, seconds: int, env: dict,
                fresh_clients: bool) -> dict:
    """One round of SECONDS of the mixed load on the server at BASE."""
    remote = base.replace("http://", f"http://bench:{token}@") + "/bench/big.git"
    serial = iter(range(10**9))
    lock = threading.Lock()

    def fetch_fresh(_number: int) -> None:
        with lock:
            client = tmp / f"fetch-{next(serial)}"
        fresh_client(client, repositories["base"], repositories["parent"], env)
        try:
            git("fetch", "-q", remote, "+refs/heads/master:refs/heads/master", cwd=client, env=env)
        finally:
            shutil.rmtree(client)

    def fetcher(number: int):
        clone = repositories["fetchers"][number]

        def fetch(_number: int) -> None:
            git("fetch", "-q", remote, "+refs/heads/*:refs/heads/*", cwd=clone, env=env)

        return fetch

    def pusher(branch: str):
        def push(number: int) -> None:
            push_commit(repositories[branch], branch, number + repositories["pushed"][branch], env)
            git("push", "-q", remote, f"refs/heads/{branch}", cwd=repositories[branch], env=env)
            repositories["pushed"][branch] += 1

        return push

    deadline = time.monotonic() + seconds
    loops = {"fetch": [Loop(fetch_fresh if fresh_clients else fetcher(n), deadline) for n in range(FETCHERS)],
             "push": [Loop(pusher(f"pusher-{n}"), deadline) for n in range(PUSHERS)]}  # fmt: skip
    for loop in (*loops["fetch"], *loops["push"]):
        loop.start()
    api = wrk_run(wrk, f"{base}/api/v3/projects/1", token, seconds)
    for loop in (*loops["fetch"], *loops["push"]):
        loop.join()
    failures = [loop.first_error for group in loops.values() for loop in group if loop.first_error]
    if failures:
        print(f"  first git failure: {failures[0]!r}", flush=True)
    return {"api_rps": api["rps"], "fetch_ps": sum(loop.done for loop in loops["fetch"]) / seconds,
            "push_ps": sum(loop.done for loop in loops["push"]) / seconds,
            "errors": api["errors"] + sum(loop.errors for group in loops.values() for loop in group)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--fresh-clients", action="store_true", help="each fetch by a fresh client, of one new commit")
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)
    wrk = ensure_wrk()
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, _port = codeyard_env(tmp)
        git_env = clean_git_env(tmp)
        print(f"building a repository of {args.commits} commits ...", flush=True)
        source, base, parent = one_commit_ahead(tmp, args.commits, git_env)
        token = seed_one_project(env)
        repositories = {"base": base, "parent": parent, "pushed": {}, "fetchers": {}}
        for n in range(FETCHERS):
            repositories["fetchers"][n] = fresh_client(tmp / f"fetcher-{n}", base, parent, git_env)
        for n in range(PUSHERS):
            branch = f"pusher-{n}"
            client = fresh_client(tmp / branch, base, parent, git_env)
            git("update-ref", f"refs/heads/{branch}", parent, cwd=client, env=git_env)
            repositories[branch], repositories["pushed"][branch] = client, 0
        results: dict[str, list[dict]] = {shape: [] for shape in shapes}
        for number in range(args.rounds):
            for shape in shapes:
                with codeyard_server(env, shape) as server:
                    if not number and shape == shapes[0]:
                        git("push", "-q", server.base.replace("http://", f"http://bench:{token}@") + "/bench/big.git",
                            "master", cwd=source, env=git_env)  # fmt: skip
                    print(f"round {number + 1}, {shape}: {args.seconds} s of mixed load ...", flush=True)
                    run = mixed_round(wrk, server.base, token, tmp, repositories, args.seconds, git_env, args.fresh_clients)
                    print(f"  API {run['api_rps']:.0f} req/s, {run['fetch_ps']:.1f} fetches/s, {run['push_ps']:.1f} pushes/s, "
                          f"{run['errors']} errors", flush=True)  # fmt: skip
                    results[shape].append(run)

    fetches = "fresh clients, one new commit each" if args.fresh_clients else "kept clones, every branch"
    figures = {"api_rps": "API req/s (wrk -c16, GET /projects/:id)", "fetch_ps": f"fetches/s ({FETCHERS} {fetches})",
               "push_ps": f"pushes/s ({PUSHERS} clients)"}  # fmt: skip
    print(f"\nmixed load, {args.seconds} s a round, best of {args.rounds} rounds; machine shared with other work")
    print(f"{'':44s}" + "".join(f" {shape:>14s}" for shape in shapes) + (f" {'ratio':>7s}" if len(shapes) > 1 else ""))
    for figure, title in figures.items():
        best = [max(run[figure] for run in results[shape]) for shape in shapes]
        ratio = f" {best[0] / best[-1]:7.2f}" if len(shapes) > 1 and best[-1] else ""
        print(f"{title:44s}" + "".join(f" {value:14.1f}" for value in best) + ratio)
    if len(shapes) > 1:
        print(f"(ratio: {shapes[0]} / {shapes[-1]}, the baseline measured in the same run)")
    print("errors per round:", {shape: [run["errors"] for run in runs] for shape, runs in results.items()})
    print("all rounds:", {shape: [(round(r["api_rps"]), round(r["fetch_ps"], 1), round(r["push_ps"], 1)) for r in runs]
                          for shape, runs in results.items()})  # fmt: skip
    print("goals as shipped: >= 2,000 API req/s, >= 40 fetches/s, >= 8 pushes/s, no error")


if __name__ == "__main__":
    main()
