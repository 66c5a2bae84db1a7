"""Costly repository reads: what a huge diff, a big blob and archives cost a running codeyard.

Builds a repository with a huge text file changed in one commit and a big binary blob, pushes it to
codeyard as shipped (`codeyard serve`, one process per core) and, on data of its own, to codeyard
with one process, then measures on each, each against a baseline timed in the same run (the
server's memory is its processes' resident memory, summed; its peak that of the largest):
- the commit's diff over the API against rendering every patch of that diff with pygit2 (what the
  API did before the diff limits), with the memory each takes;
- the big blob over the API (streamed) against `git cat-file blob` on disk, with the server's
  memory growth;
- 20 concurrent requests for one archive (cold cache) against one `git archive` on disk, then the
  same archive again from the cache.

    .venv/bin/python bench/repository_costs.py [--huge-mb 30] [--blob-mb 56] [--servers both|shipped|one]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import (
    PYTHON,
    Server,
    add_shape_option,
    chosen_shapes,
    clean_git_env,
    codeyard_env,
    codeyard_server,
    git,
    imported_repository,
    seed_one_project,
    timed,
)

# The old way: every patch of the diff rendered, then measured. Prints seconds and MB of peak growth.
FULL_RENDER = """
import sys, time, pygit2
def rss(field):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(field)) / 1024
repository = pygit2.Repository(sys.argv[1])
commit = repository.revparse_single(sys.argv[2])
before = rss("VmRSS:")
started = time.perf_counter()
diff = repository.diff(commit.parents[0], commit)
diff.find_similar()
texts = [patch.text for patch in diff]
print(time.perf_counter() - started, rss("VmHWM:") - before)
"""


def fast_import_stream(huge_mb: int, blob_mb: int) -> bytes:
    """Two commits on master: a small start, then a huge text file, a big binary and a small change."""
    huge = b"".join(b"line %d of a huge generated file\n" % i for i in range(huge_mb * 1024 * 1024 // 32))
    blob = bytes(range(256)) * (blob_mb * 1024 * 1024 // 256)
    parts = [b"commit refs/heads/master\nmark :1\ncommitter Bench <bench@example.com> 1450000000 +0000\n",
             b"data 6\nstart\n", b"M 100644 inline small.txt\ndata 4\none\n",
             b"commit refs/heads/master\nmark :2\ncommitter Bench <bench@example.com> 1450000100 +0000\n",
             b"data 5\nhuge\nfrom :1\n", b"M 100644 inline small.txt\ndata 4\ntwo\n",
             b"M 100644 inline huge.txt\ndata %d\n" % len(huge), huge, b"\n",
             b"M 100644 inline big.bin\ndata %d\n" % len(blob), blob, b"\n"]  # fmt: skip
    return b"".join(parts)


def to_null(*args, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def rss_growth(server: Server, action) -> tuple[object, float]:
    """(what ACTION returns, the most the server's resident memory (all its processes) grew while it
    ran, sampled every 2 ms)."""
    before, highest, done = server.memory_mb(), [0.0], threading.Event()

    def sample():
        while not done.is_set():
            highest[0] = max(highest[0], server.memory_mb())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = action()
    finally:
        done.set()
        sampler.join()
    return result, max(highest[0], server.memory_mb()) - before


def fetch(url: str, token: str) -> tuple[float, int]:
    """(seconds, bytes) of GET URL, read in chunks and thrown away."""
    started, size = time.perf_counter(), 0
    with urllib.request.urlopen(urllib.request.Request(url, headers={"PRIVATE-TOKEN": token}), timeout=600) as answer:
        while chunk := answer.read(1024 * 1024):
            size += len(chunk)
    return time.perf_counter() - started, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--huge-mb", type=int, default=30)
    parser.add_argument("--blob-mb", type=int, default=56)
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)
    results = {}
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        git_env = clean_git_env(tmp)
        print(f"building a repository with a {args.huge_mb} MB text file and a {args.blob_mb} MB blob ...", flush=True)
        source = tmp / "source.git"
        imported_repository(source, fast_import_stream(args.huge_mb, args.blob_mb), git_env)
        for shape in shapes:  # each on data of its own: the archive cache starts cold on each
            (tmp / shape).mkdir()
            env, _port = codeyard_env(tmp / shape)
            token = seed_one_project(env)
            with codeyard_server(env, shape) as server:
                git("push", "-q", server.base.replace("http://", f"http://bench:{token}@") + "/bench/big.git", "master",
                    cwd=source, env=git_env)  # fmt: skip
                hosted = tmp / shape / "data" / "repositories" / "1.git"
                sha = git("rev-parse", "master", cwd=hosted).strip()
                blob = git("rev-parse", "master:big.bin", cwd=hosted).strip()
                print(f"measuring {shape} ...", flush=True)
                results[shape] = measure(server, hosted, sha, blob, f"{server.base}/api/v3/projects/1/repository", token)
    report(results, args, shapes)


def measure(server: Server, hosted: Path, sha: str, blob: str, api: str, token: str) -> dict:
    results = {"rss_mb": server.memory_mb(), "hwm_mb": server.memory_mb("VmHWM:")}
    full = subprocess.run([PYTHON, "-c", FULL_RENDER, str(hosted), sha], check=True, capture_output=True, text=True)
    results["render_s"], results["render_mb"] = (float(value) for value in full.stdout.split())
    (results["diff_s"], _), results["diff_mb"] = rss_growth(server, lambda: fetch(f"{api}/commits/{sha}/diff", token))
    results["cat_file_s"] = timed(lambda: to_null("cat-file", "blob", blob, cwd=hosted))
    (results["blob_s"], results["blob_bytes"]), results["blob_mb"] = rss_growth(
        server, lambda: fetch(f"{api}/raw_blobs/{blob}", token))
    results["git_archive_s"] = timed(lambda: to_null("archive", "--format=tar.gz", sha, cwd=hosted))
    started = time.perf_counter()
    with ThreadPoolExecutor(20) as pool:
        sizes = {size for _, size in pool.map(lambda _: fetch(f"{api}/archive", token), range(20))}
    results["archives_s"] = time.perf_counter() - started
    assert len(sizes) == 1, "the 20 archives differ"
    results["cached_s"], _ = fetch(f"{api}/archive", token)
    results["end_hwm_mb"] = server.memory_mb("VmHWM:")
    return results


ROWS = [
    ("server memory before: resident MB (all)", lambda r: f"{r['rss_mb']:.0f}"),
    ("  peak MB (largest process), after", lambda r: f"{r['hwm_mb']:.0f}, {r['end_hwm_mb']:.0f}"),
    ("commit diff: API (limits, too_large) s", lambda r: f"{r['diff_s']:.3f}"),
    ("  server RSS growth MB", lambda r: f"{r['diff_mb']:.0f}"),
    ("  every patch rendered (before) s", lambda r: f"{r['render_s']:.3f}"),
    ("  peak growth of that render MB", lambda r: f"{r['render_mb']:.0f}"),
    ("  ratio API/render", lambda r: f"{r['diff_s'] / r['render_s']:.3f}"),
    ("raw blob: API (streamed) s", lambda r: f"{r['blob_s']:.3f}"),
    ("  server RSS growth MB", lambda r: f"{r['blob_mb']:.0f}"),
    ("  git cat-file on disk s", lambda r: f"{r['cat_file_s']:.3f}"),
    ("  ratio API/cat-file", lambda r: f"{r['blob_s'] / r['cat_file_s']:.2f}"),
    ("archive (tar.gz): 20 concurrent, cold s", lambda r: f"{r['archives_s']:.3f}"),
    ("  one git archive on disk s", lambda r: f"{r['git_archive_s']:.3f}"),
    ("  ratio 20 concurrent/one", lambda r: f"{r['archives_s'] / r['git_archive_s']:.2f}"),
    ("  from the cache s", lambda r: f"{r['cached_s']:.3f}"),
]


def report(results: dict, args, shapes) -> None:
    """The figures of each server side by side; each baseline (render, cat-file, git archive) was
    timed beside that server's own requests."""
    blob_mb = results[shapes[0]]["blob_bytes"] / 1024 / 1024
    print(f"\na diff with a {args.huge_mb} MB file changed, a raw blob of {blob_mb:.0f} MB, archives; machine shared")
    print(f"{'':44s}" + "".join(f" {shape:>14s}" for shape in shapes))
    for title, cell in ROWS:
        print(f"{title:44s}" + "".join(f" {cell(results[shape]):>14s}" for shape in shapes))


if __name__ == "__main__":
    main()
