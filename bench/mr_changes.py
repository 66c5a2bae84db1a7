"""Merge requests on a running codeyard: `changes` of a 1,000-file request against `git diff --patch`
of the same range, and the time of an accept on a 20,000-commit repository.

Builds two repositories with `git fast-import` and pushes them to a codeyard it starts:
- `big`: master with 1,000 files, a branch changing every one of them (a few lines each);
- `long`: master with 20,000 commits, two branches with one more commit each.
Then it opens a request for each branch, times `GET .../changes` on codeyard as shipped (`codeyard
serve`, one process per core) and with one process against `git diff --patch master...branch` in
the hosted repository (alternating, median of 15 rounds each), and times `PUT .../merge` on `long`
on each server (one branch each).

    .venv/bin/python bench/mr_changes.py [--files 1000] [--commits 20000] [--db postgres] [--servers both|shipped|one]

`--db postgres` runs codeyard on a fresh schema of CODEYARD_BENCH_POSTGRES_URL (default
postgresql://postgres@127.0.0.1:5432/test), dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from common import (
    PYTHON,
    add_shape_option,
    chosen_shapes,
    clean_git_env,
    codeyard_env,
    codeyard_servers,
    git,
    imported_repository,
    seed_one_project,
    timed,
)
from projects_list import database

SECOND_PROJECT = """
from codeyard import config
from codeyard.runtime import Runtime
from codeyard.db.models import User
from codeyard.services import projects, users
rt = Runtime(config.load())
with rt.db.transaction() as session:
    user = session.query(User).filter_by(username="bench").one()
    projects.create(session, rt, user, users.personal_namespace(session, user), {"name": "long"})
"""


def committer(n: int) -> bytes:
    return b"committer Bench <bench@example.com> %d +0000\n" % (1450000000 + n)


def wide_stream(files: int) -> bytes:
    """master: FILES files of 40 lines; feature: lines 10 and 30 of every file changed."""
    lines = [b"line %d of a file in the bench repository\n" % i for i in range(40)]
    parts = [b"commit refs/heads/master\nmark :1\n", committer(0), b"data 5\nbase\n"]
    for i in range(files):
        body = b"".join(lines)
        parts.append(b"M 100644 inline dir%d/file%d.txt\ndata %d\n%s\n" % (i % 20, i, len(body), body))
    parts += [b"commit refs/heads/feature\nmark :2\n", committer(1), b"data 8\nfeature\nfrom :1\n"]
    for i in range(files):
        changed = list(lines)
        changed[10], changed[30] = b"changed ten in file %d\n" % i, b"changed thirty in file %d\n" % i
        body = b"".join(changed)
        parts.append(b"M 100644 inline dir%d/file%d.txt\ndata %d\n%s\n" % (i % 20, i, len(body), body))
    return b"".join(parts)


def long_stream(commits: int) -> bytes:
    """master: COMMITS commits, each rewriting one of 100 files; feature: one commit on top."""
    parts = []
    for n in range(1, commits + 1):
        message = b"commit %d\n" % n
        parts += [b"commit refs/heads/master\nmark :%d\n" % n, committer(n), b"data %d\n%s" % (len(message), message)]
        if n > 1:
            parts.append(b"from :%d\n" % (n - 1))
        text = b"version %d\n" % n
        parts.append(b"M 100644 inline f%d.txt\ndata %d\n%s\n" % (n % 100, len(text), text))
    for branch in (b"feature", b"feature-b"):
        text = branch + b"\n"
        parts += [b"commit refs/heads/%s\n" % branch, committer(commits + 1), b"data 8\nfeature\nfrom :%d\n" % commits,
                  b"M 100644 inline %s.txt\ndata %d\n%s\n" % (branch, len(text), text)]  # fmt: skip
    return b"".join(parts)


def call(method: str, url: str, token: str, body: dict | None = None) -> tuple[float, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"PRIVATE-TOKEN": token, "Content-Type": "application/json"}
    started = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, data, headers, method=method), timeout=600) as answer:
        payload = answer.read()
    return time.perf_counter() - started, payload


def build(tmp: Path, name: str, stream: bytes, env: dict) -> Path:
    return imported_repository(tmp / f"{name}.git", stream, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=20000)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp, database(args.db) as db_env:
        tmp = Path(tmp)
        env, _port = codeyard_env(tmp)
        env.update(db_env)
        git_env = clean_git_env(tmp)
        print(f"building a {args.files}-file request and a {args.commits}-commit history ...", flush=True)
        wide, long = build(tmp, "wide", wide_stream(args.files), git_env), build(tmp, "long", long_stream(args.commits), git_env)
        token = seed_one_project(env)
        subprocess.run([PYTHON, "-c", SECOND_PROJECT], env=env, check=True, capture_output=True)
        with codeyard_servers(env, shapes) as servers:
            remote = servers[shapes[0]].base.replace("http://", f"http://bench:{token}@")
            for source, path, branches in ((wide, "big", ["feature"]), (long, "long", ["feature", "feature-b"])):
                git("push", "-q", f"{remote}/bench/{path}.git", "master", *branches, cwd=source, env=git_env)
            results = measure(servers, tmp / "data" / "repositories", token)
    report(results, args, shapes)


def open_request(api: str, project: int, token: str, branch: str = "feature") -> int:
    body = {"source_branch": branch, "target_branch": "master", "title": f"Bench {branch}"}
    return json.loads(call("POST", f"{api}/{project}/merge_requests", token, body)[1])["id"]


ROUNDS = 15


def measure(servers: dict, repositories: Path, token: str) -> dict:
    """All sides alternate, round after round (a change in the machine's speed falls on each), after
    two warm-up requests to each server (SERVERS: shape -> Server); the medians of ROUNDS rounds, of
    the answer's time and of the server's CPU for it. Then an accept on each server."""
    results = {}
    apis = {shape: server.base + "/api/v3/projects" for shape, server in servers.items()}
    wide = open_request(next(iter(apis.values())), 1, token)
    hosted = repositories / "1.git"
    diff = ["git", "diff", "--patch", "master...feature"]
    answers: dict[str, list] = {shape: [] for shape in apis}
    cpu_ms: dict[str, list] = {shape: [] for shape in apis}
    for api in apis.values():
        for _ in range(2):
            call("GET", f"{api}/1/merge_requests/{wide}/changes", token)
    git_runs = []
    for _ in range(ROUNDS):
        for shape, api in apis.items():
            before = servers[shape].cpu_seconds()
            answers[shape].append(call("GET", f"{api}/1/merge_requests/{wide}/changes", token))
            cpu_ms[shape].append((servers[shape].cpu_seconds() - before) * 1000)
        git_runs.append(timed(lambda: subprocess.run(diff, cwd=hosted, check=True, stdout=subprocess.DEVNULL)))
    results["changes_s"] = {shape: statistics.median(seconds for seconds, _ in runs) for shape, runs in answers.items()}
    results["changes_cpu_ms"] = {shape: statistics.median(runs) for shape, runs in cpu_ms.items()}
    results["git_diff_s"] = statistics.median(git_runs)
    changes = json.loads(answers[next(iter(apis))][-1][1])["changes"]
    results["changed_files"] = len(changes)
    results["cut"] = sum(1 for change in changes if change["too_large"] or change["collapsed"])
    results["accept_s"], results["accept_state"] = {}, {}
    for (shape, api), branch in zip(apis.items(), ("feature", "feature-b"), strict=False):
        request = open_request(api, 2, token, branch)
        results["accept_s"][shape], answer = call("PUT", f"{api}/2/merge_requests/{request}/merge", token, {})
        results["accept_state"][shape] = json.loads(answer)["state"]
    return results


def report(r: dict, args, shapes) -> None:
    print(f"\nGET changes of a request touching {args.files} files ({r['changed_files']} changes, {r['cut']} cut)")
    for shape in shapes:
        print(f"  API {shape + ',':13s} median of {ROUNDS}   {r['changes_s'][shape]:7.4f} s   ratio API/git "
              f"{r['changes_s'][shape] / r['git_diff_s']:5.2f}   (goal <= 1.5)   server CPU {r['changes_cpu_ms'][shape]:.0f} ms")  # fmt: skip
    print(f"  git diff --patch (median of {ROUNDS})  {r['git_diff_s']:7.4f} s")
    print(f"\naccept on a {args.commits}-commit repository: "
          + ", ".join(f"{shape} {r['accept_s'][shape]:.3f} s (state {r['accept_state'][shape]})" for shape in shapes))


if __name__ == "__main__":
    main()
