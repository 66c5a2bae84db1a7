"""Clone benchmark: `git clone` over codeyard's smart HTTP against `git clone --no-local` from disk.

Builds a repository of 20,000 commits (git fast-import), pushes it to a running codeyard, then
times, in alternating rounds, a clone over HTTP and a clone from the repository on disk (the
baseline: the same git doing the same pack work without HTTP and codeyard in between). Prints the
best time of each and their ratio (goal <= 1.3), then times a push of 1,000 new commits.

    .venv/bin/python bench/clone.py [--commits 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import (
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


def fast_import_stream(commits: int, start: int = 0, parent: str | None = None) -> bytes:
    """A fast-import stream of COMMITS commits on master touching 200 files in turn."""
    lines = []
    for i in range(start, start + commits):
        content = f"file {i % 200} revision {i}\n" * 20
        lines.append("commit refs/heads/master")
        lines.append(f"mark :{i + 1}")
        lines.append(f"committer Bench <bench@example.com> {1_450_000_000 + i} +0000")
        message = f"commit number {i}\n"
        lines.append(f"data {len(message)}")
        lines.append(message)
        if i > start:
            lines.append(f"from :{i}")
        elif parent:
            lines.append(f"from {parent}")
        lines.append(f"M 100644 inline dir{i % 20}/file{i % 200}.txt")
        lines.append(f"data {len(content)}")
        lines.append(content)
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, port = codeyard_env(tmp)
        data_dir = tmp / "data"
        git_env = clean_git_env(tmp)
        print(f"building a repository of {args.commits} commits ...", flush=True)
        source = tmp / "source.git"
        imported_repository(source, fast_import_stream(args.commits), git_env)
        git("gc", "-q", cwd=source, env=git_env)
        token = seed_one_project(env)
        server = subprocess.Popen(uvicorn_command("codeyard.app:create_app", port, True), env=env, cwd=ROOT)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/-/health")
            url = f"http://bench:{token}@127.0.0.1:{port}/bench/big.git"
            initial = timed(lambda: git("push", "-q", url, "master", cwd=source, env=git_env))
            hosted = data_dir / "repositories" / "1.git"
            http_times, disk_times = [], []
            for round_number in range(args.rounds):
                target = tmp / f"http{round_number}"
                http_times.append(timed(lambda t=target: git("clone", "-q", "--bare", url, str(t), env=git_env)))
                target = tmp / f"disk{round_number}"
                disk_times.append(timed(lambda t=target: git("clone", "-q", "--bare", "--no-local", str(hosted), str(t), env=git_env)))
                for leftover in (tmp / f"http{round_number}", tmp / f"disk{round_number}"):
                    shutil.rmtree(leftover)
            assert git("rev-list", "--count", "master", cwd=hosted, env=git_env).strip() == str(args.commits)
            tip = git("rev-parse", "master", cwd=source, env=git_env).strip()
            git("fast-import", "--quiet", "--force", cwd=source, env=git_env,
                input=fast_import_stream(1000, start=args.commits, parent=tip))  # fmt: skip
            push = timed(lambda: git("push", "-q", url, "master", cwd=source, env=git_env))
            assert git("rev-list", "--count", "master", cwd=hosted, env=git_env).strip() == str(args.commits + 1000)
        finally:
            stop([server])
    http, disk = min(http_times), min(disk_times)
    print(f"\ngit clone of {args.commits} commits, best of {args.rounds}")
    print(f"  over codeyard HTTP      {http:7.2f} s   (all: {', '.join(f'{t:.2f}' for t in http_times)})")
    print(f"  --no-local from disk    {disk:7.2f} s   (all: {', '.join(f'{t:.2f}' for t in disk_times)})")
    print(f"  ratio http/disk         {http / disk:7.2f}   (goal <= 1.3)")
    print(f"initial push of {args.commits} commits: {initial:.2f} s")
    print(f"push of 1,000 new commits: {push:.2f} s")


if __name__ == "__main__":
    main()
