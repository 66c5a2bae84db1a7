"""API floor benchmark: `GET /api/v3/user` against a bare ASGI callable returning the same body.

Starts codeyard (SQLite, 10,000 users, each with a token) as shipped (`codeyard serve`, one process
per core) and with one process, and a bare ASGI app that returns the same JSON body under uvicorn
(one process, the same HTTP settings), and drives each with wrk in alternating rounds, at each
connection count given (32: throughput; 1: what one keep-alive client waits). Prints requests/s,
p50 and p99 latency of each and codeyard's ratio to the floor (goal: >= 0.25 at -c32; p50 <= 2 ms
at -c1).

    .venv/bin/python bench/api_floor.py [--seconds 5] [--rounds 3] [--connections 32,1] [--users 10000]
        [--servers both|shipped|one]

wrk is installed with apt-get when missing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from common import (
    PYTHON,
    add_shape_option,
    chosen_shapes,
    codeyard_env,
    codeyard_servers,
    ensure_wrk,
    print_side_by_side,
    run_wrk,
    start_floor,
    stop,
    wait_until_up,
)

SEED = """
import sys
from codeyard import config
from codeyard.db import migrate
from codeyard.runtime import Runtime
from codeyard.services import credentials, users
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
with rt.db.transaction() as session:
    for i in range(int(sys.argv[1])):
        user = users.create(session, {"username": f"user{i}", "email": f"user{i}@example.com", "name": f"User {i}"}, None)
        _, secret = credentials.issue_token(session, user.id, name="bench")
print(secret)
"""

FLOOR = "floor (bare ASGI, one uvicorn process)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=lambda v: [int(c) for c in v.split(",")], default=[32, 1],
                        help="wrk connection counts, comma separated (default 32,1)")  # fmt: skip
    parser.add_argument("--users", type=int, default=10_000)
    add_shape_option(parser)
    args = parser.parse_args()
    wrk = ensure_wrk()
    shapes = chosen_shapes(args)

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        env, _port = codeyard_env(Path(tmp))
        print(f"seeding {args.users} users ...", flush=True)
        seeded = subprocess.run([PYTHON, "-c", SEED, str(args.users)], env=env, check=True, capture_output=True, text=True)
        token = seeded.stdout.split()[-1]
        with codeyard_servers(env, shapes) as servers:
            urls = {shape: f"{server.base}/api/v3/user" for shape, server in servers.items()}
            body = wait_until_up(urls[shapes[0]], {"PRIVATE-TOKEN": token})
            assert json.loads(body)["username"] == f"user{args.users - 1}"
            floor, floor_base = start_floor(Path(tmp), body, env)
            try:
                targets = {FLOOR: floor_base + "/api/v3/user", **urls}
                results = {c: {name: [] for name in targets} for c in args.connections}
                for _ in range(args.rounds):
                    for connections in args.connections:
                        for name, url in targets.items():
                            results[connections][name].append(run_wrk(wrk, url, token, args.seconds, connections))
            finally:
                stop([floor])

    for connections, runs in results.items():
        best = {name: max(rounds, key=lambda r: r["rps"]) for name, rounds in runs.items()}
        for figure, unit, spec in (("rps", "req/s", ".0f"), ("p50_ms", "p50 ms", ".2f"), ("p99_ms", "p99 ms", ".2f")):
            print_side_by_side(f"GET /api/v3/user, {args.users} users, wrk -c{connections}, best of {args.rounds} x {args.seconds}s"
                               f" ({unit}; ratio: codeyard / floor)",
                               [FLOOR, "codeyard"], shapes, lambda name, shape, f=figure, b=best: b[FLOOR if name == FLOOR else shape][f],
                               baseline=FLOOR, unit=unit, spec=spec)  # fmt: skip
        print("all rounds (req/s):", {name: [round(r["rps"]) for r in rounds] for name, rounds in runs.items()})
    print("(goal: codeyard / floor >= 0.25 in req/s at -c32; p50 <= 2 ms at -c1)")


if __name__ == "__main__":
    main()
