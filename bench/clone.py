"""Clone benchmark: `git clone` over codeyard's smart HTTP against `git clone --no-local` from disk.

Builds a repository of 20,000 commits (git fast-import), pushes it to codeyard as shipped
(`codeyard serve`, one process per core; and with one process beside it), then times, in
alternating rounds, a clone over HTTP from each and a clone from the repository on disk (the
baseline: the same git doing the same pack work without HTTP and codeyard in between). Prints the
best time of each and their ratio (goal <= 1.3), then times a push of 1,000 new commits to each.
(bench/git_fetch.py measures a one-commit fetch and the clone again, as medians.)

    .venv/bin/python bench/clone.py [--commits 20000] [--rounds 3] [--servers both|shipped|one]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from common import (
    add_shape_option,
    chosen_shapes,
    clean_git_env,
    codeyard_env,
    codeyard_servers,
    git,
    imported_repository,
    print_side_by_side,
    seed_one_project,
    timed,
)

DISK = "git clone --no-local from disk"


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
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, _port = codeyard_env(tmp)
        data_dir = tmp / "data"
        git_env = clean_git_env(tmp)
        print(f"building a repository of {args.commits} commits ...", flush=True)
        source = tmp / "source.git"
        imported_repository(source, fast_import_stream(args.commits), git_env)
        git("gc", "-q", cwd=source, env=git_env)
        token = seed_one_project(env)
        with codeyard_servers(env, shapes) as servers:
            urls = {shape: server.base.replace("http://", f"http://bench:{token}@") + "/bench/big.git"
                    for shape, server in servers.items()}  # fmt: skip
            initial = timed(lambda: git("push", "-q", urls[shapes[0]], "master", cwd=source, env=git_env))
            hosted = data_dir / "repositories" / "1.git"
            times: dict[str, list[float]] = {name: [] for name in (*shapes, DISK)}
            for round_number in range(args.rounds):
                for name in times:
                    target = tmp / f"clone{round_number}"
                    options = ["--no-local", str(hosted)] if name == DISK else [urls[name]]
                    times[name].append(timed(lambda t=target, o=options: git("clone", "-q", "--bare", *o, str(t), env=git_env)))
                    shutil.rmtree(target)
            assert git("rev-list", "--count", "master", cwd=hosted, env=git_env).strip() == str(args.commits)
            pushes, count = {}, args.commits
            for shape in shapes:
                tip = git("rev-parse", "master", cwd=source, env=git_env).strip()
                git("fast-import", "--quiet", "--force", cwd=source, env=git_env,
                    input=fast_import_stream(1000, start=count, parent=tip))  # fmt: skip
                pushes[shape] = timed(lambda s=shape: git("push", "-q", urls[s], "master", cwd=source, env=git_env))
                count += 1000
                assert git("rev-list", "--count", "master", cwd=hosted, env=git_env).strip() == str(count)
    best = lambda name, shape: min(times[shape if name == "codeyard" else DISK])  # noqa: E731
    print_side_by_side(f"git clone of {args.commits} commits, best of {args.rounds} (ratio: to --no-local from disk; goal <= 1.3)",
                       ["codeyard", DISK], shapes, best, baseline=DISK, unit="s", spec=".2f")  # fmt: skip
    print("all rounds (s):", {name: [round(t, 2) for t in runs] for name, runs in times.items()})
    print(f"initial push of {args.commits} commits ({shapes[0]}): {initial:.2f} s")
    print("push of 1,000 new commits:", ", ".join(f"{shape} {seconds:.2f} s" for shape, seconds in pushes.items()))


if __name__ == "__main__":
    main()
