"""What the benchmarks share: the server as shipped, wrk, free ports, uvicorn commands, the bare ASGI floor.

Every bench measures codeyard as `make serve` starts it: `codeyard serve`, one server process per
usable core with its job worker (SHIPPED), and where that helps to read a figure the same command
with `--workers 1` beside it (ONE). Both are started by `codeyard_server`; the baselines they are
compared with (the bare ASGI floor under uvicorn, git on disk) run in the same run.

`--compare-tree DIR` (every bench with `--servers`) measures another checkout's codeyard, run from
DIR's `.venv`, as `before` beside this one's as `after`, over the same seeded data, rounds
alternating: a change's cost against its base in one run (`print_tree_comparison`; projects_list,
polled_reads and runner_queue print it). tree_pairs.py does the same in-process, for a busy machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
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


# The server's shapes: name -> its --workers (None: the default, one process per usable core).
SHIPPED, ONE = "as shipped", "one process"
SHAPES = {SHIPPED: None, ONE: 1}
# --compare-tree adds two shapes: codeyard of another checkout (BEFORE) and of this one (AFTER), each
# with --servers' workers; TREES names the checkout a shape's server runs from (this one if absent).
BEFORE, AFTER = "before", "after"
TREES: dict[str, Path] = {}


@dataclass
class Server:
    """A running `codeyard serve`: its shape, its top process and where it answers."""

    shape: str
    process: subprocess.Popen
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu_seconds(self) -> float:
        """CPU time used so far by the server's processes: the supervisor, its server processes,
        the job worker and the children they have waited for (git, hooks)."""
        return sum(cpu_seconds(pid, children=True) for pid in process_tree(self.pid))

    def memory_mb(self, field: str = "VmRSS:") -> float:
        """FIELD of the server's processes in MB: VmRSS (resident now) summed over them, VmHWM
        (peak) of the largest."""
        values = [memory_kib(pid, field) for pid in process_tree(self.pid)]
        return (max(values) if field == "VmHWM:" else sum(values)) / 1024


@contextmanager
def codeyard_server(env: dict[str, str], shape: str = SHIPPED, **popen):
    """`codeyard serve` in SHAPE (SHAPES) on a port of its own over ENV's data, as `make serve`
    starts it (migrations, the admin, the job worker); stopped on leaving."""
    port = free_port()
    server_env = {**env, "CODEYARD_PORT": str(port), "CODEYARD_BASE_URL": f"http://127.0.0.1:{port}"}
    server_env.pop("CODEYARD_WORKERS", None)
    workers, tree = SHAPES[shape], TREES.get(shape, ROOT)
    python = str(tree / ".venv" / "bin" / "python") if shape in TREES else PYTHON
    command = [python, "-m", "codeyard", "serve", "--port", str(port), *(["--workers", str(workers)] if workers else [])]
    process = subprocess.Popen(command, env=server_env, cwd=tree, stdout=subprocess.DEVNULL, **popen)
    try:
        server = Server(shape, process, port)
        wait_until_up(server.base + "/-/health")
        yield server
    finally:
        stop([process])


@contextmanager
def codeyard_servers(env: dict[str, str], shapes=tuple(SHAPES), **popen):
    """shape -> Server for each of SHAPES, all running at once over the same data (so that rounds
    can alternate between them)."""
    with ExitStack() as stack:
        yield {shape: stack.enter_context(codeyard_server(env, shape, **popen)) for shape in shapes}


def add_shape_option(parser: argparse.ArgumentParser) -> None:
    """--servers: which shapes a bench measures (default both, side by side); --compare-tree: this
    checkout's codeyard against another's instead, in alternating rounds over the same data."""
    parser.add_argument("--servers", choices=("both", "shipped", "one"), default="both",
                        help="the server as shipped, with one process (--workers 1), or both side by side")  # fmt: skip
    parser.add_argument("--compare-tree", type=Path, metavar="DIR",
                        help="measure DIR's codeyard (its .venv, `before`) against this checkout's (`after`), "
                             "each with --servers' processes (one unless `shipped`)")  # fmt: skip


def chosen_shapes(args) -> tuple[str, ...]:
    if getattr(args, "compare_tree", None):
        SHAPES[BEFORE] = SHAPES[AFTER] = SHAPES[SHIPPED] if args.servers == "shipped" else 1
        TREES[BEFORE], TREES[AFTER] = args.compare_tree.resolve(), ROOT
        return BEFORE, AFTER
    return {"both": (SHIPPED, ONE), "shipped": (SHIPPED,), "one": (ONE,)}[args.servers]


def shaped(name: str, shape: str) -> str:
    """The row name of NAME measured on the server in SHAPE."""
    return f"{name} [{shape}]"


def print_side_by_side(title: str, names, shapes, value, baseline: str | None = None, unit: str = "req/s",
                       spec: str = ".0f") -> None:  # fmt: skip
    """A table of VALUE(name, shape) for NAMES, one column per shape, each beside its ratio to
    VALUE(BASELINE, shape) when a BASELINE is named."""
    print(f"\n{title}")
    print(f"{'':44s}" + "".join(f" {f'{shape}, {unit}':>24s}{'ratio' if baseline else '':>7s}" for shape in shapes))
    for name in names:
        cells = []
        for shape in shapes:
            figure = value(name, shape)
            ratio = f"{figure / value(baseline, shape):7.2f}" if baseline else ""
            cells.append(f" {figure:24{spec}}{ratio}")
        print(f"{name:44s}{''.join(cells)}")


def process_tree(pid: int) -> list[int]:
    """PID and its live descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    tree, pending = [], [pid]
    while pending:
        tree.append(pending.pop())
        pending.extend(children.get(tree[-1], []))
    return tree


def memory_kib(pid: int, field: str) -> int:
    """FIELD (e.g. VmRSS:, VmHWM:) of /proc/PID/status in KiB; 0 for a process that is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


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


def alternating_rounds(wrk: str, targets: dict[str, str], cpu: dict[str, Callable[[], float]], token: str, args,
                       report) -> dict[str, list]:  # fmt: skip
    """name -> wrk's runs of each of TARGETS (name -> URL), in ARGS.rounds rounds of ARGS.seconds at
    ARGS.connections, the endpoints alternating within each round (in reverse order every other
    round, so that none always runs right after another); each run also carries `cpu_ms`,
    the CPU its server used per request (CPU[name]() is that server's CPU seconds so far: a
    Server's cpu_seconds, or cpu_seconds of a pid). REPORT(number, {name: that round's run}) after
    each round."""
    results: dict[str, list] = {name: [] for name in targets}
    for number in range(args.rounds):
        for name, url in list(targets.items())[::-1 if number % 2 else 1]:
            before = cpu[name]()
            run = run_wrk(wrk, url, token, args.seconds, args.connections)
            if not run["requests"]:
                raise SystemExit(f"no answer from {name} within {args.seconds}s: try a longer --seconds")
            run["cpu_ms"] = (cpu[name]() - before) * 1000 / run["requests"]
            results[name].append(run)
        report(number, {name: runs[-1] for name, runs in results.items()})
    return results


def cpu_seconds(pid: int, children: bool = False) -> float:
    """User plus system CPU time PID has used so far (Linux /proc), with that of the children it
    has waited for if CHILDREN: requests per CPU-second of the server compare endpoints on a
    machine whose other load changes from one run to the next. 0 for a process that is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(value) for value in fields[11 : 15 if children else 13]) / os.sysconf("SC_CLK_TCK")


def _ms(match) -> float:
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def print_table(title: str, rows: dict[str, dict]) -> None:
    print(f"\n{title}")
    print(f"{'':48s} {'req/s':>10s} {'p50 ms':>8s} {'p99 ms':>8s}")
    for name, r in rows.items():
        print(f"{name:48s} {r['rps']:10.0f} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f}")


def stop(processes) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(timeout=20)


def print_tree_comparison(results: dict[str, list]) -> None:
    """For each row measured on both trees (--compare-tree): the medians of req/s and of CPU ms per
    request before and after, after/before, and the noise (each side's spread over its rounds,
    (max - min) / median, the larger of the two); then after/before of each side's least CPU ms per
    request (on a shared machine the other load only ever adds to it)."""
    pairs = [name[: -len(f" [{BEFORE}]")] for name in results if name.endswith(f"[{BEFORE}]")]
    if not pairs:
        return
    print("\nafter / before (medians over the rounds; noise: the larger spread of the two sides)")
    print(f"{'':40s} {'req/s before':>12s} {'after':>8s} {'ratio':>6s} {'noise':>6s} "
          f"{'cpu ms before':>13s} {'after':>8s} {'ratio':>6s} {'noise':>6s} {'least cpu ratio':>16s}")  # fmt: skip
    for name in pairs:
        before, after = results[shaped(name, BEFORE)], results[shaped(name, AFTER)]
        cells = []
        for key, old_spec, new_spec in (("rps", "12.0f", "8.0f"), ("cpu_ms", "13.3f", "8.3f")):
            old, new = (statistics.median(run[key] for run in runs) for runs in (before, after))
            noise = max((max(r[key] for r in runs) - min(r[key] for r in runs)) / statistics.median(r[key] for r in runs)
                        for runs in (before, after))  # fmt: skip
            cells.append(f" {old:{old_spec}} {new:{new_spec}} {new / old:6.3f} {noise:6.1%}")
        least = min(r["cpu_ms"] for r in after) / min(r["cpu_ms"] for r in before)
        print(f"{name:40s}{''.join(cells)} {least:16.3f}")
