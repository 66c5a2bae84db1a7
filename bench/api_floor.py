"""API floor benchmark: `GET /api/v3/user` against a bare ASGI callable on the same server.

Starts codeyard (SQLite, 10,000 users, each with a token) and a bare ASGI app that returns the same
JSON body, both under uvicorn with the same settings, and drives each with wrk in alternating
rounds. Prints requests/s, p50 and p99 latency of both and their ratio (goal: >= 0.25).

    .venv/bin/python bench/api_floor.py [--seconds 5] [--rounds 3] [--connections 32]

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
    ROOT,
    codeyard_env,
    ensure_wrk,
    print_table,
    run_wrk,
    start_floor,
    stop,
    uvicorn_command,
    wait_until_up,
)

USERS = 10_000

SEED = f"""
from codeyard import config
from codeyard.db import migrate
from codeyard.runtime import Runtime
from codeyard.services import credentials, users
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
with rt.db.transaction() as session:
    for i in range({USERS}):
        user = users.create(session, {{"username": f"user{{i}}", "email": f"user{{i}}@example.com", "name": f"User {{i}}"}}, None)
        _, secret = credentials.issue_token(session, user.id, name="bench")
print(secret)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    wrk = ensure_wrk()

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        env, port = codeyard_env(Path(tmp))
        print(f"seeding {USERS} users ...", flush=True)
        token = subprocess.run([PYTHON, "-c", SEED], env=env, check=True, capture_output=True, text=True).stdout.split()[-1]
        servers = [subprocess.Popen(uvicorn_command("codeyard.app:create_app", port, True), env=env, cwd=ROOT)]
        try:
            url = f"http://127.0.0.1:{port}/api/v3/user"
            body = wait_until_up(url, {"PRIVATE-TOKEN": token})
            assert json.loads(body)["username"] == f"user{USERS - 1}"
            floor, floor_base = start_floor(Path(tmp), body, env)
            servers.append(floor)
            results: dict[str, list] = {"floor": [], "codeyard": []}
            for _ in range(args.rounds):
                results["floor"].append(run_wrk(wrk, floor_base + "/api/v3/user", token, args.seconds, args.connections))
                results["codeyard"].append(run_wrk(wrk, url, token, args.seconds, args.connections))
        finally:
            stop(servers)

    best = {name: max(runs, key=lambda r: r["rps"]) for name, runs in results.items()}
    print_table(f"GET /api/v3/user, {USERS} users, wrk -c{args.connections}, best of {args.rounds} x {args.seconds}s", best)
    print(f"ratio codeyard/floor: {best['codeyard']['rps'] / best['floor']['rps']:.2f} (goal >= 0.25)")
    print("all rounds (req/s):", {name: [round(r["rps"]) for r in runs] for name, runs in results.items()})


if __name__ == "__main__":
    main()
