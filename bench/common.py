"""What the benchmarks share: wrk, free ports, uvicorn commands, the bare ASGI floor."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

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


def codeyard_env(tmp: Path) -> tuple[dict[str, str], int]:
    """(environment, port) for a codeyard whose data lives under TMP/data (created here)."""
    data_dir = Path(tmp) / "data"
    data_dir.mkdir(exist_ok=True)
    port = free_port()
    env = {**os.environ, "CODEYARD_DATA_DIR": str(data_dir), "CODEYARD_LOG_LEVEL": "warning",
           "CODEYARD_PORT": str(port), "CODEYARD_BASE_URL": f"http://127.0.0.1:{port}"}  # fmt: skip
    return env, port


# A user `bench` with one project `big`; prints the user's private token.
SEED_ONE_PROJECT = """
from codeyard import config
from codeyard.db import migrate
from codeyard.runtime import Runtime
from codeyard.services import credentials, projects, users
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
with rt.db.transaction() as session:
    user = users.create(session, {"username": "bench", "email": "bench@example.com", "name": "Bench"}, None)
    _, token = credentials.issue_token(session, user.id, name="bench")
    project = projects.create(session, rt, user, users.personal_namespace(session, user), {"name": "big"})
print(token)
"""


def seed_one_project(env: dict[str, str]) -> str:
    """Migrates the database of ENV, creates user `bench` with project `big`; returns the token."""
    seeded = subprocess.run([PYTHON, "-c", SEED_ONE_PROJECT], env=env, check=True, capture_output=True, text=True)
    return seeded.stdout.split()[-1]


def clean_git_env(home: Path) -> dict[str, str]:
    """This environment without GIT_* variables, HOME at HOME, never prompting."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "HOME": str(home),
            "GIT_TERMINAL_PROMPT": "0"}  # fmt: skip


def timed(action) -> float:
    """Seconds ACTION takes."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


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


def wait_until_up(url: str, headers: dict | None = None, timeout: float = 60) -> bytes:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as response:
                return response.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def uvicorn_command(target: str, port: int, factory: bool) -> list[str]:
    """The same server settings for codeyard and for the floor."""
    command = [PYTHON, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(port), "--http", "httptools",
               "--loop", "asyncio", "--no-access-log", "--log-level", "warning", "--no-proxy-headers",
               "--no-server-header"]  # fmt: skip
    return [*command, "--factory"] if factory else command


def start_floor(tmp: Path, body: bytes, env: dict) -> tuple[subprocess.Popen, str]:
    """A bare ASGI app answering BODY to every request; returns (process, base URL)."""
    port = free_port()
    (tmp / "floor_body.json").write_bytes(body)
    (tmp / "floor_app.py").write_text(FLOOR_APP)
    floor_env = {**env, "FLOOR_BODY": str(tmp / "floor_body.json"), "PYTHONPATH": str(tmp)}
    process = subprocess.Popen(uvicorn_command("floor_app:app", port, False), env=floor_env, cwd=tmp)
    base = f"http://127.0.0.1:{port}"
    wait_until_up(base + "/")
    return process, base


def git(*args, cwd=None, env=None, input=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, input=input, check=True, capture_output=True).stdout.decode()


def imported_repository(path: Path, stream: bytes, env: dict) -> Path:
    """A bare repository at PATH made of a `git fast-import` STREAM."""
    git("init", "-q", "--bare", str(path), env=env)
    git("fast-import", "--quiet", cwd=path, env=env, input=stream)
    return path


def run_wrk(wrk: str, url: str, token: str, seconds: int, connections: int) -> dict:
    return run_wrk_with(wrk, url, ["-H", f"PRIVATE-TOKEN: {token}"], seconds, connections)


def run_wrk_with(wrk: str, url: str, options: list[str], seconds: int, connections: int, hint: str = "") -> dict:
    """wrk's requests, req/s, p50 and p99 for URL with OPTIONS (a header, a Lua script); error
    responses end the bench, with HINT."""
    output = subprocess.run(
        [wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", *options, url],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        detail = f"{hint}\n{output}" if hint else ""
        raise SystemExit(f"wrk saw {errors.group(1)} error responses from {url}{detail}")
    return {
        "requests": int(re.search(r"(\d+) requests in", output).group(1)),
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50_ms": _ms(re.search(r"50%\s+([\d.]+)(us|ms|s)", output)),
        "p99_ms": _ms(re.search(r"99%\s+([\d.]+)(us|ms|s)", output)),
    }


def alternating_rounds(wrk: str, targets: dict[str, str], pids: dict[str, int], token: str, args, report) -> dict[str, list]:
    """name -> wrk's runs of each of TARGETS (name -> URL), in ARGS.rounds rounds of ARGS.seconds at
    ARGS.connections, the endpoints alternating within each round; each run also carries `cpu_ms`,
    the CPU its server (PIDS[name]) used per request. REPORT(number, {name: that round's run}) after
    each round."""
    results: dict[str, list] = {name: [] for name in targets}
    for number in range(args.rounds):
        for name, url in targets.items():
            before = cpu_seconds(pids[name])
            run = run_wrk(wrk, url, token, args.seconds, args.connections)
            if not run["requests"]:
                raise SystemExit(f"no answer from {name} within {args.seconds}s: try a longer --seconds")
            run["cpu_ms"] = (cpu_seconds(pids[name]) - before) * 1000 / run["requests"]
            results[name].append(run)
        report(number, {name: runs[-1] for name, runs in results.items()})
    return results


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time PID has used so far (Linux /proc): requests per CPU-second of the
    server compare endpoints on a machine whose other load changes from one run to the next."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ms(match) -> float:
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def print_table(title: str, rows: dict[str, dict]) -> None:
    print(f"\n{title}")
    print(f"{'':34s} {'req/s':>10s} {'p50 ms':>8s} {'p99 ms':>8s}")
    for name, r in rows.items():
        print(f"{name:34s} {r['rps']:10.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f}")


def stop(processes) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(timeout=20)
