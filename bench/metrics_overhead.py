"""What counting every request for /-/metrics costs: `GET /api/v3/user` on `codeyard serve` with its
figures kept (as shipped: prometheus_client's multiprocess files) against the same server with the
request counting taken out (`CodeyardApp._http` replaced by the pipeline it wraps), in alternating
rounds of the same run.

    .venv/bin/python bench/metrics_overhead.py [--seconds 5] [--rounds 4] [--connections 16]

One server process each (`--workers 1`): the method is replaced in the process that serves.

Prints each round's req/s, p50 and server CPU per request of both, and the ratio (counted / not).
On a shared machine wrk's figures move more from round to round than the difference, so the same
comparison is made in process first: the app called directly for `GET /api/v3/user` (no HTTP server,
no network), the CPU time of the calling thread per request, counted and not, alternating.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from common import (
    PYTHON,
    codeyard_env,
    cpu_seconds,
    ensure_wrk,
    run_wrk,
    seed_one_project,
    stop,
    wait_until_up,
)

UNCOUNTED = """
import sys
from codeyard import cli

serve = cli._serve


def uncounted(config, workers):
    from codeyard.app import CodeyardApp  # imported after serve named the metrics directory

    CodeyardApp._http = CodeyardApp._answer  # the pipeline without the counting around it
    serve(config, workers)


cli._serve = uncounted
sys.argv[0] = "codeyard"
cli.main()
"""
COUNTED = "from codeyard.cli import main; import sys; sys.argv[0] = 'codeyard'; main()"


IN_PROCESS = """
import asyncio, os, sys, time
from codeyard import config, metrics
from codeyard.app import create_app

app = create_app(config.load())
TOKEN, REQUESTS, ROUNDS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
SCOPE = {"type": "http", "method": "GET", "path": "/api/v3/user", "raw_path": b"/api/v3/user", "query_string": b"",
         "headers": [(b"private-token", TOKEN.encode()), (b"host", b"bench")], "client": ("127.0.0.1", 1),
         "scheme": "http", "http_version": "1.1", "server": ("127.0.0.1", 80), "root_path": ""}


async def receive():
    return {"type": "http.request", "body": b"", "more_body": False}


async def send(message):
    pass


async def cost(handler, flush) -> float:
    started = time.thread_time()
    for _ in range(REQUESTS):
        await handler(dict(SCOPE), receive, send)
    flush()
    return (time.thread_time() - started) * 1e6 / REQUESTS


async def main():
    await cost(app._http, metrics.requests.flush)  # warm up
    for number in range(ROUNDS):
        plain = await cost(app._answer, lambda: None)
        counted = await cost(app._http, metrics.requests.flush)
        print(f"in process, round {number + 1}: counted {counted:.1f} us/req, not counted {plain:.1f} us/req, "
              f"difference {counted - plain:+.2f} us ({counted / plain:.3f})", flush=True)


asyncio.run(main())
"""


def in_process(tmp: Path, requests: int, rounds: int) -> None:
    """The in-process comparison, as `serve` runs: prometheus_client in multiprocess mode."""
    tmp.mkdir()
    env, _ = codeyard_env(tmp)
    token = seed_one_project(env)
    (tmp / "metrics").mkdir()
    env["PROMETHEUS_MULTIPROC_DIR"] = str(tmp / "metrics")
    subprocess.run([PYTHON, "-c", IN_PROCESS, token, str(requests), str(rounds)], env=env, check=True)


def start(tmp: Path, code: str) -> tuple[subprocess.Popen, str, str]:
    tmp.mkdir()
    env, port = codeyard_env(tmp)
    env["CODEYARD_WORKER"] = "0"  # no job worker: the server's CPU only
    token = seed_one_project(env)
    process = subprocess.Popen([PYTHON, "-c", code, "serve", "--port", str(port), "--workers", "1"], env=env,
                               stdout=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_until_up(f"http://127.0.0.1:{port}/api/v3/user", {"PRIVATE-TOKEN": token})
    except OSError:
        stop([process])
        raise
    return process, f"http://127.0.0.1:{port}", token


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--requests", type=int, default=20000, help="requests per in-process round")
    args = parser.parse_args()
    wrk = ensure_wrk()
    with tempfile.TemporaryDirectory() as tmp:
        in_process(Path(tmp) / "in-process", args.requests, args.rounds)
        servers = {}
        try:
            servers["counted"] = start(Path(tmp) / "counted", COUNTED)
            servers["not counted"] = start(Path(tmp) / "plain", UNCOUNTED)
            for _, base, token in servers.values():  # warm up
                run_wrk(wrk, base + "/api/v3/user", token, 1, args.connections)
            ratios, cpu_ratios = [], []
            for number in range(args.rounds):
                runs = {}
                for name in list(servers) if number % 2 == 0 else list(reversed(servers)):
                    process, base, token = servers[name]
                    before = cpu_seconds(process.pid)
                    run = run_wrk(wrk, base + "/api/v3/user", token, args.seconds, args.connections)
                    run["cpu_us"] = (cpu_seconds(process.pid) - before) * 1e6 / run["requests"]
                    runs[name] = run
                ratios.append(runs["counted"]["rps"] / runs["not counted"]["rps"])
                cpu_ratios.append(runs["counted"]["cpu_us"] / runs["not counted"]["cpu_us"])
                print(f"round {number + 1}: " + "; ".join(
                    f"{name} {r['rps']:,.0f} req/s p50 {r['p50_ms']:.2f} ms cpu {r['cpu_us']:.0f} us/req" for name, r in runs.items()
                ) + f"; ratio req/s {ratios[-1]:.3f}, cpu {cpu_ratios[-1]:.3f}", flush=True)  # fmt: skip
            print(f"counted / not counted: req/s {min(ratios):.3f}-{max(ratios):.3f}, "
                  f"server CPU per request {min(cpu_ratios):.3f}-{max(cpu_ratios):.3f}")  # fmt: skip
        finally:
            stop([s[0] for s in servers.values()])


if __name__ == "__main__":
    main()
