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
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
USERS = 10_000

FLOOR_APP = '''
import os
BODY = open(os.environ["FLOOR_BODY"], "rb").read()
HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})
'''


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)
    return shutil.which("wrk")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, headers: dict | None = None, timeout: float = 30) -> bytes:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=2) as response:
                return response.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def seed(data_dir: Path, env: dict) -> str:
    """Migrate, create 10,000 users with a token each; return the token of the last one."""
    script = f'''
import sys
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
'''
    result = subprocess.run([PYTHON, "-c", script], env=env, check=True, capture_output=True, text=True)
    return result.stdout.strip().splitlines()[-1]


def uvicorn_command(target: str, port: int, factory: bool) -> list[str]:
    command = [PYTHON, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(port), "--http", "httptools",
               "--loop", "uvloop", "--no-access-log", "--log-level", "warning", "--no-proxy-headers",
               "--no-server-header"]
    return [*command, "--factory"] if factory else command


def run_wrk(wrk: str, url: str, token: str, seconds: int, connections: int) -> dict:
    output = subprocess.run(
        [wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-H", f"PRIVATE-TOKEN: {token}", url],
        check=True, capture_output=True, text=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", output)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", output)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise SystemExit(f"wrk saw {errors.group(1)} error responses from {url}")
    return {"rps": rps, "p50_ms": to_ms(p50), "p99_ms": to_ms(p99)}


def to_ms(match) -> float:
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    wrk = ensure_wrk()

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        env = {**os.environ, "CODEYARD_DATA_DIR": str(data_dir), "CODEYARD_LOG_LEVEL": "warning",
               "CODEYARD_ARGON2_MEMORY_KIB": "1024", "CODEYARD_ARGON2_TIME_COST": "1"}
        print(f"seeding {USERS} users ...", flush=True)
        token = seed(data_dir, env)

        app_port, floor_port = free_port(), free_port()
        env["CODEYARD_PORT"] = str(app_port)
        env["CODEYARD_BASE_URL"] = f"http://127.0.0.1:{app_port}"
        servers = [subprocess.Popen(uvicorn_command("codeyard.app:create_app", app_port, True), env=env, cwd=ROOT)]
        try:
            app_url = f"http://127.0.0.1:{app_port}/api/v3/user"
            body = wait_until_up(app_url, {"PRIVATE-TOKEN": token})
            (Path(tmp) / "body.json").write_bytes(body)
            (Path(tmp) / "floor_app.py").write_text(FLOOR_APP)
            floor_env = {**env, "FLOOR_BODY": str(Path(tmp) / "body.json"), "PYTHONPATH": tmp}
            servers.append(subprocess.Popen(uvicorn_command("floor_app:app", floor_port, False), env=floor_env, cwd=tmp))
            floor_url = f"http://127.0.0.1:{floor_port}/api/v3/user"
            wait_until_up(floor_url)
            assert json.loads(body)["username"] == f"user{USERS - 1}"

            results = {"floor": [], "codeyard": []}
            for _ in range(args.rounds):
                results["floor"].append(run_wrk(wrk, floor_url, token, args.seconds, args.connections))
                results["codeyard"].append(run_wrk(wrk, app_url, token, args.seconds, args.connections))
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=15)

    best = {name: max(runs, key=lambda r: r["rps"]) for name, runs in results.items()}
    print(f"\nGET /api/v3/user, {USERS} users, wrk -c{args.connections}, best of {args.rounds} x {args.seconds}s")
    print(f"{'':10s} {'req/s':>10s} {'p50 ms':>8s} {'p99 ms':>8s}")
    for name in ("floor", "codeyard"):
        r = best[name]
        print(f"{name:10s} {r['rps']:10.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f}")
    print(f"ratio codeyard/floor: {best['codeyard']['rps'] / best['floor']['rps']:.2f} (goal >= 0.25)")
    print("all rounds (req/s):", {name: [round(r["rps"]) for r in runs] for name, runs in results.items()})


if __name__ == "__main__":
    main()
