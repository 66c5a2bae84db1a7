"""Merge requests on a running codeyard: `changes` of a 1,000-file request against `git diff --patch`
of the same range, and the time of an accept on a 20,000-commit repository.

Builds two repositories with `git fast-import` and pushes them to a codeyard it starts:
- `big`: master with 1,000 files, a branch changing every one of them (a few lines each);
- `long`: master with 20,000 commits, a branch with one more commit.
Then it opens a request for each branch, times `GET .../changes` against `git diff --patch
master...branch` in the hosted repository (the two alternating, median of 15 rounds each), and
times `PUT .../merge` on `long`.

    .venv/bin/python bench/mr_changes.py [--files 1000] [--commits 20000]
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
    ROOT,
    clean_git_env,
    codeyard_env,
    git,
    imported_repository,
    seed_one_project,
    stop,
    timed,
    uvicorn_command,
    wait_until_up,
)

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
    text = b"feature\n"
    parts += [b"commit refs/heads/feature\n", committer(commits + 1), b"data 8\nfeature\nfrom :%d\n" % commits,
              b"M 100644 inline feature.txt\ndata %d\n%s\n" % (len(text), text)]  # fmt: skip
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, port = codeyard_env(tmp)
        git_env = clean_git_env(tmp)
        print(f"building a {args.files}-file request and a {args.commits}-commit history ...", flush=True)
        wide, long = build(tmp, "wide", wide_stream(args.files), git_env), build(tmp, "long", long_stream(args.commits), git_env)
        token = seed_one_project(env)
        subprocess.run([PYTHON, "-c", SECOND_PROJECT], env=env, check=True, capture_output=True)
        server = subprocess.Popen(uvicorn_command("codeyard.app:create_app", port, True), env=env, cwd=ROOT)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base + "/-/health")
            for source, path in ((wide, "big"), (long, "long")):
                git("push", "-q", f"http://bench:{token}@127.0.0.1:{port}/bench/{path}.git", "master", "feature",
                    cwd=source, env=git_env)  # fmt: skip
            results = measure(base + "/api/v3/projects", tmp / "data" / "repositories", token)
        finally:
            stop([server])
    report(results, args)


def open_request(api: str, project: int, token: str) -> int:
    body = {"source_branch": "feature", "target_branch": "master", "title": "Bench"}
    return json.loads(call("POST", f"{api}/{project}/merge_requests", token, body)[1])["id"]


ROUNDS = 15


def measure(api: str, repositories: Path, token: str) -> dict:
    """Both sides alternate, round after round (a change in the machine's speed falls on both), after
    two warm-up requests; the medians of ROUNDS rounds."""
    results = {}
    wide = open_request(api, 1, token)
    url = f"{api}/1/merge_requests/{wide}/changes"
    hosted = repositories / "1.git"
    diff = ["git", "diff", "--patch", "master...feature"]
    answers, git_runs = [call("GET", url, token) for _ in range(2)], []
    for _ in range(ROUNDS):
        answers.append(call("GET", url, token))
        git_runs.append(timed(lambda: subprocess.run(diff, cwd=hosted, check=True, stdout=subprocess.DEVNULL)))
    results["changes_s"] = statistics.median(seconds for seconds, _ in answers[2:])
    results["git_diff_s"] = statistics.median(git_runs)
    changes = json.loads(answers[-1][1])["changes"]
    results["changed_files"] = len(changes)
    results["cut"] = sum(1 for change in changes if change["too_large"] or change["collapsed"])
    long = open_request(api, 2, token)
    results["accept_s"], answer = call("PUT", f"{api}/2/merge_requests/{long}/merge", token, {})
    results["accept_state"] = json.loads(answer)["state"]
    return results


def report(r: dict, args) -> None:
    print(f"\nGET changes of a request touching {args.files} files ({r['changed_files']} changes, {r['cut']} cut)")
    print(f"  API (median of {ROUNDS})             {r['changes_s']:7.4f} s")
    print(f"  git diff --patch (median of {ROUNDS}) {r['git_diff_s']:7.4f} s")
    print(f"  ratio API/git                  {r['changes_s'] / r['git_diff_s']:7.2f}   (goal <= 1.5)")
    print(f"\naccept on a {args.commits}-commit repository: {r['accept_s']:.3f} s (state {r['accept_state']})")


if __name__ == "__main__":
    main()
