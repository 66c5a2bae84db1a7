"""Git over HTTP on a big repository: a fetch of one new commit and a clone, each against git doing
the same work from the repository on disk, on codeyard as shipped and with one process.

Builds a repository of 20,000 commits (git fast-import), pushes it to codeyard, keeps a copy of it
(`base`), then pushes one more commit. A fetch starts from a fresh client that borrows base's
objects (objects/info/alternates) with master at the commit before, so every fetch transfers
exactly that one new commit, however many rounds run: over HTTP from the server as shipped and
with one process, and (the baseline) a local `git fetch` from the hosted bare repository; the three
alternate within each round. Then clones alternate the same way: `git clone` over HTTP against
`git clone --no-local` from disk. Prints medians, side by side, with the ratio to the baseline
(goals: fetch <= 2x, clone <= 1.1x).

    .venv/bin/python bench/git_fetch.py [--commits 20000] [--fetches 15] [--clones 3] [--servers both|shipped|one]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from clone import fast_import_stream
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

LOCAL = "git on disk"


def fresh_client(path: Path, base: Path, parent: str, env: dict) -> Path:
    """An empty bare repository at PATH that has BASE's objects (by alternates) and master at PARENT."""
    git("init", "-q", "--bare", str(path), env=env)
    (path / "objects" / "info" / "alternates").write_text(str((base / "objects").resolve()) + "\n")
    git("update-ref", "refs/heads/master", parent, cwd=path, env=env)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--fetches", type=int, default=15, help="rounds of fetches")
    parser.add_argument("--clones", type=int, default=3, help="rounds of clones")
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, _port = codeyard_env(tmp)
        git_env = clean_git_env(tmp)
        print(f"building a repository of {args.commits} commits ...", flush=True)
        source = imported_repository(tmp / "source.git", fast_import_stream(args.commits), git_env)
        git("gc", "-q", cwd=source, env=git_env)
        base = tmp / "base.git"
        git("clone", "-q", "--bare", "--no-local", str(source), str(base), env=git_env)
        parent = git("rev-parse", "master", cwd=source, env=git_env).strip()
        token = seed_one_project(env)
        with codeyard_servers(env, shapes) as servers:
            urls = {shape: server.base.replace("http://", f"http://bench:{token}@") + "/bench/big.git"
                    for shape, server in servers.items()}  # fmt: skip
            git("push", "-q", urls[shapes[0]], "master", cwd=source, env=git_env)
            git("fast-import", "--quiet", cwd=source, env=git_env, input=fast_import_stream(1, start=args.commits, parent=parent))
            git("push", "-q", urls[shapes[0]], "master", cwd=source, env=git_env)
            hosted = tmp / "data" / "repositories" / "1.git"
            tip = git("rev-parse", "master", cwd=source, env=git_env).strip()
            assert git("rev-parse", "master", cwd=hosted, env=git_env).strip() == tip
            sources = {**urls, LOCAL: str(hosted)}
            fetches: dict[str, list[float]] = {name: [] for name in sources}
            print(f"{args.fetches} rounds of one-commit fetches ...", flush=True)
            for number in range(args.fetches):
                for name, remote in sources.items():
                    client = fresh_client(tmp / f"client-{number}-{len(fetches[name])}-{name.replace(' ', '-')}", base, parent, git_env)
                    fetches[name].append(timed(lambda c=client, r=remote: git("fetch", "-q", r, "+refs/heads/master:refs/heads/master",
                                                                             cwd=c, env=git_env)))  # fmt: skip
                    assert git("rev-parse", "master", cwd=client, env=git_env).strip() == tip
                    shutil.rmtree(client)
            clones: dict[str, list[float]] = {name: [] for name in sources}
            print(f"{args.clones} rounds of clones ...", flush=True)
            for number in range(args.clones):
                for name, remote in sources.items():
                    target = tmp / f"clone-{number}"
                    options = ["--no-local"] if name == LOCAL else []
                    clones[name].append(timed(lambda t=target, r=remote, o=options: git("clone", "-q", "--bare", *o, r, str(t), env=git_env)))
                    shutil.rmtree(target)

    print(f"\nmachine: shared; {args.commits + 1} commits; medians (all rounds below)")
    fetch_ms = lambda name, shape: statistics.median(fetches[shape if name == "codeyard" else LOCAL]) * 1000  # noqa: E731
    print_side_by_side(f"fetch of one new commit, median of {args.fetches} (ratio: to a local git fetch; goal <= 2)",
                       ["codeyard", LOCAL], shapes, fetch_ms, baseline=LOCAL, unit="ms", spec=".1f")  # fmt: skip
    clone_s = lambda name, shape: statistics.median(clones[shape if name == "codeyard" else LOCAL])  # noqa: E731
    print_side_by_side(f"git clone, median of {args.clones} (ratio: to git clone --no-local; goal <= 1.1)",
                       ["codeyard", LOCAL], shapes, clone_s, baseline=LOCAL, unit="s", spec=".2f")  # fmt: skip
    for title, runs, scale in (("fetch ms", fetches, 1000), ("clone s", clones, 1)):
        print(f"all rounds, {title}:", {name: [round(t * scale, 2) for t in times] for name, times in runs.items()})


if __name__ == "__main__":
    main()
