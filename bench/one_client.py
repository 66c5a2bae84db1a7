"""One client at a time against `codeyard serve` as shipped (2 processes here) and with one process.

What a single client pays per request: `wrk -c1` on `GET /api/v3/user` (one kept connection),
a push of one new commit (`git push` over HTTP) and a fetch of it into another clone, each the
median of PUSHES. The local baseline of the same run is `git fetch` of one new commit from the
repository on disk (`--no-local` is not a fetch option: a file:// URL takes the same pack path).
The servers run in alternating rounds; TREE=SRC pairs (`--tree before=/path/to/old/src`) run other
source trees with this interpreter beside the current one, to compare code before and after.

    .venv/bin/python bench/one_client.py [--commits 20000] [--rounds 3] [--pushes 10] [--seconds 4]
        [--workers 2 1] [--tree before=../base/src]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from clone import fast_import_stream
from common import (
    PYTHON,
    ROOT,
    clean_git_env,
    codeyard_env,
    ensure_wrk,
    git,
    imported_repository,
    run_wrk,
    seed_one_project,
    stop,
    timed,
    wait_until_up,
)


def disk_fetch(copies: dict) -> tuple[str, str]:
    """The baseline fetch's arguments: into a ref, so that each fetch brings one commit."""
    return copies["hosted_url"], "+refs/heads/master:refs/remotes/disk/master"


def start_server(env: dict, port: int, workers: int, src: Path) -> subprocess.Popen:
    # Each tree writes its own git hooks (an older tree keeps hook files it finds).
    shutil.rmtree(Path(env["CODEYARD_DATA_DIR"]) / "githooks", ignore_errors=True)
    command = [PYTHON, "-m", "codeyard", "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    server = subprocess.Popen(command, env={**env, "PYTHONPATH": str(src)}, cwd=ROOT, stdout=subprocess.DEVNULL)
    wait_until_up(f"http://127.0.0.1:{port}/-/health")
    return server


def measure(args, wrk: str, env: dict, port: int, token: str, copies: dict, git_env: dict) -> dict:
    """One server's round: wrk -c1, then PUSHES pushes of one commit, each fetched into the other clone."""
    run = run_wrk(wrk, f"http://127.0.0.1:{port}/api/v3/user", token, args.seconds, 1)
    pushes, fetches, local = [], [], []
    for _ in range(args.pushes):
        copies["count"] += 1
        (copies["pusher"] / "file.txt").write_text(f"change {copies['count']}\n")
        git("add", "file.txt", cwd=copies["pusher"], env=git_env)
        git("commit", "-q", "-m", f"change {copies['count']}", cwd=copies["pusher"], env=git_env)
        pushes.append(timed(lambda: git("push", "-q", "origin", "master", cwd=copies["pusher"], env=git_env)))
        fetches.append(timed(lambda: git("fetch", "-q", "origin", cwd=copies["fetcher"], env=git_env)))
        local.append(timed(lambda: git("fetch", "-q", *disk_fetch(copies), cwd=copies["local"], env=git_env)))
    return {"rps": run["rps"], "p50_ms": run["p50_ms"], "p99_ms": run["p99_ms"],
            "push_ms": statistics.median(pushes) * 1000, "fetch_ms": statistics.median(fetches) * 1000,
            "local_fetch_ms": statistics.median(local) * 1000}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 1])
    parser.add_argument("--tree", action="append", default=[], help="NAME=SRC: another source tree to run")
    args = parser.parse_args()
    trees = {"this": ROOT / "src", **{name: Path(src).resolve() for name, src in (t.split("=", 1) for t in args.tree)}}
    wrk = ensure_wrk()
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, port = codeyard_env(tmp)
        git_env = clean_git_env(tmp)
        print(f"building a repository of {args.commits} commits ...", flush=True)
        source = imported_repository(tmp / "source.git", fast_import_stream(args.commits), git_env)
        git("gc", "-q", cwd=source, env=git_env)
        token = seed_one_project(env)
        url = f"http://bench:{token}@127.0.0.1:{port}/bench/big.git"
        server = start_server(env, port, 1, trees["this"])
        try:
            git("push", "-q", url, "master", cwd=source, env=git_env)
            copies = {"count": 0, "hosted_url": f"file://{tmp / 'data' / 'repositories' / '1.git'}"}
            for name in ("pusher", "fetcher", "local"):
                git("clone", "-q", url, str(tmp / name), env=git_env)
                copies[name] = tmp / name
            git("config", "user.email", "bench@example.com", cwd=copies["pusher"], env=git_env)
            git("config", "user.name", "Bench", cwd=copies["pusher"], env=git_env)
        finally:
            stop([server])
        variants = [(tree, workers) for tree in trees for workers in args.workers]
        results: dict[tuple, list[dict]] = {variant: [] for variant in variants}
        for number in range(args.rounds):
            for tree, workers in variants:
                server = start_server(env, port, workers, trees[tree])
                try:
                    result = measure(args, wrk, env, port, token, copies, git_env)
                finally:
                    stop([server])
                results[(tree, workers)].append(result)
                print(f"round {number + 1} {tree:>8s} x{workers}: " + "  ".join(f"{k} {v:.2f}" for k, v in result.items()), flush=True)
    print(f"\none client, ranges over {args.rounds} rounds (pushes and fetches: medians of {args.pushes} per round)")
    print(f"{'':16s} {'req/s':>15s} {'p50 ms':>13s} {'p99 ms':>13s} {'push ms':>13s} {'fetch ms':>13s} {'fetch/local':>11s}")
    for (tree, workers), runs in results.items():
        cells = [_range([r[key] for r in runs]) for key in ("rps", "p50_ms", "p99_ms", "push_ms", "fetch_ms")]
        ratio = _range([r["fetch_ms"] / r["local_fetch_ms"] for r in runs])
        print(f"{tree + ' x' + str(workers):16s} {cells[0]:>15s} {cells[1]:>13s} {cells[2]:>13s} {cells[3]:>13s} {cells[4]:>13s} {ratio:>11s}")


def _range(values: list[float]) -> str:
    low, high = min(values), max(values)
    digits = 0 if low >= 100 else 2
    return f"{low:.{digits}f}-{high:.{digits}f}"


if __name__ == "__main__":
    main()
