"""Webhook benchmark: push to delivery latency and deliveries per second.

Seeds N projects per server shape with one hook each pointing at a local receiver (a bare ASGI app
that records when each delivery arrives), starts `codeyard serve` as shipped (one process per core,
with its job worker process), then with one process (`--workers 1`), one at a time, and makes one
real `git push` over HTTP to each of its N projects (CONCURRENCY at a time). Reports the latency from the end of
each push (the client's `git push` returning) and from its start to the delivery's arrival, p50
and p99, and deliveries per second; then measures the receiver's own request rate with wrk
(POSTs of a push-sized body) as the ceiling a delivery rate is compared with. Pushes arrive slower
than deliveries go out, so a last phase commits a backlog of DRAIN deliveries at once (from another
process: the server's worker finds them at its next poll) and times how fast the worker drains it.
The two servers' figures are printed side by side.

    .venv/bin/python bench/hooks.py [--pushes 1000] [--concurrency 4] [--drain 2000] [--servers both|shipped|one]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import (
    PYTHON,
    add_shape_option,
    chosen_shapes,
    codeyard_env,
    codeyard_server,
    ensure_wrk,
    free_port,
    stop,
    uvicorn_command,
    wait_until_up,
)

RECEIVER_APP = '''
import time, orjson
SEEN = []

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["method"] == "GET":
        answer = orjson.dumps(SEEN)
    else:
        arrived = time.time()
        headers = dict(scope["headers"])
        delivery = headers.get(b"x-codeyard-delivery")
        if delivery is not None:
            SEEN.append({"at": arrived, "delivery": delivery.decode(), "project_id": orjson.loads(body)["project_id"]})
        answer = b"{}"
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]})
    await send({"type": "http.response.body", "body": answer})
'''

SEED = """
import sys
from codeyard import config
from codeyard.db import migrate
from codeyard.db.models import ProjectHook
from codeyard.runtime import Runtime
from codeyard.services import credentials, projects, settings, users
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
count, url = int(sys.argv[1]), sys.argv[2]
with rt.db.transaction() as session:
    settings.update(session, {"allow_local_requests_from_hooks": True})
    user = users.create(session, {"username": "bench", "email": "bench@example.com", "name": "Bench", "is_admin": True,
                                  "projects_limit": count}, None)
    _, token = credentials.issue_token(session, user.id, name="bench")
    namespace = users.personal_namespace(session, user)
    for n in range(count):
        project = projects.create(session, rt, user, namespace, {"name": f"p{n}"})
        session.add(ProjectHook(project_id=project.id, url=url, failure_count=0))
print(token)
"""

BACKLOG = """
import sys
from codeyard import config
from codeyard.runtime import Runtime
from codeyard.services import webhooks
rt = Runtime(config.load())
count, hooks, first = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
with rt.db.transaction() as session:
    for n in range(count):
        webhooks.enqueue(session, 1 + n % hooks, "Push Hook", '{"project_id": %d}' % (-1 - first - n))
"""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def git(*args, cwd=None, env=None) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def receiver_rate(tmp: Path, url: str, seconds: int, connections: int) -> float:
    """Requests per second the receiver answers on its own: wrk POSTing a push-sized body."""
    wrk = ensure_wrk()
    body = json.dumps({"project_id": 0, "commits": [{"id": "0" * 40, "message": "x" * 200}] * 3})
    script = tmp / "post.lua"
    script.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(body)}\n'
                      'wrk.headers["Content-Type"] = "application/json"\n')  # fmt: skip
    output = subprocess.run([wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url],
                            check=True, capture_output=True, text=True).stdout  # fmt: skip
    return float(next(line.split()[1] for line in output.splitlines() if line.startswith("Requests/sec")))


def wait_for(port: int, count: int, timeout: float = 300) -> list[dict]:
    """What the receiver recorded once it holds COUNT deliveries (or the time is up)."""
    deadline = time.monotonic() + timeout
    while True:
        seen = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/dump").read())
        if len(seen) >= count or time.monotonic() > deadline:
            return seen
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pushes", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=4, help="pushes at once")
    parser.add_argument("--drain", type=int, default=2000, help="deliveries in the backlog phase")
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)
    results = {}
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, _port = codeyard_env(tmp)
        receiver_port = free_port()
        (tmp / "receiver_app.py").write_text(RECEIVER_APP)
        receiver = subprocess.Popen(uvicorn_command("receiver_app:app", receiver_port, False),
                                    env={**env, "PYTHONPATH": str(tmp)}, cwd=tmp)  # fmt: skip
        receiver_url = f"http://127.0.0.1:{receiver_port}/hook"
        try:
            wait_until_up(f"http://127.0.0.1:{receiver_port}/")
            print(f"seeding {args.pushes * len(shapes)} projects with one hook each ...", flush=True)
            seeded = subprocess.run([PYTHON, "-c", SEED, str(args.pushes * len(shapes)), receiver_url], env=env,
                                    capture_output=True, text=True)  # fmt: skip
            if seeded.returncode != 0:
                raise SystemExit(f"seeding failed:\n{seeded.stderr}")
            token = seeded.stdout.split()[-1]
            git_env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "HOME": str(tmp),
                       "GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "b@example.com",
                       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "b@example.com"}  # fmt: skip
            work = tmp / "work"
            git("init", "-q", "-b", "master", str(work), env=git_env)
            (work / "README.md").write_text("hello\n")
            git("add", "README.md", cwd=work, env=git_env)
            git("commit", "-q", "-m", "first", cwd=work, env=git_env)
            for index, shape in enumerate(shapes):
                with codeyard_server(env, shape) as server:
                    results[shape] = measure(args, index, server.port, receiver_port, token, work, env, git_env)
            print("measuring the receiver's own request rate ...", flush=True)
            ceiling = receiver_rate(tmp, receiver_url, 5, args.concurrency)
        finally:
            stop([receiver])
    report(args, shapes, results, ceiling)


def measure(args, index: int, port: int, receiver_port: int, token: str, work: Path, env: dict, git_env: dict) -> dict:
    """The pushes to this server's projects (the INDEXth block of ARGS.pushes) and a backlog of
    ARGS.drain deliveries: the figures `report` prints."""
    first = index * args.pushes
    times: dict[int, tuple[float, float]] = {}
    lock = threading.Lock()

    def push(n: int) -> None:
        url = f"http://bench:{token}@127.0.0.1:{port}/bench/p{n}.git"
        started = time.time()
        git("push", "-q", url, "master", cwd=work, env=git_env)
        with lock:
            times[n + 1] = (started, time.time())  # project ids start at 1

    print(f"{args.pushes} pushes, {args.concurrency} at once ...", flush=True)
    began = time.time()
    with ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(push, range(first, first + args.pushes)))
    pushed = time.time()
    seen = wait_for(receiver_port, (index + 1) * args.pushes + index * args.drain)
    print(f"a backlog of {args.drain} deliveries ...", flush=True)
    subprocess.run([PYTHON, "-c", BACKLOG, str(args.drain), str(args.pushes), str(index * args.drain)], env=env, check=True)
    everything = wait_for(receiver_port, (index + 1) * (args.pushes + args.drain))
    backlog = [r for r in everything if -(index + 1) * args.drain <= r["project_id"] < -index * args.drain]
    seen = [record for record in seen if first < record["project_id"] <= first + args.pushes]
    arrived = {record["project_id"]: record["at"] for record in seen}
    from_end = [arrived[p] - end for p, (_start, end) in times.items() if p in arrived]
    from_start = [arrived[p] - start for p, (start, _end) in times.items() if p in arrived]
    durations = [end - start for start, end in times.values()]
    drained = max(r["at"] for r in backlog) - min(r["at"] for r in backlog)
    return {
        "delivered": len(seen), "distinct": len({r["delivery"] for r in seen}),
        "push_p50": statistics.median(durations) * 1000, "push_p99": percentile(durations, 0.99) * 1000,
        "end_p50": statistics.median(from_end) * 1000, "end_p99": percentile(from_end, 0.99) * 1000,
        "early": sum(1 for latency in from_end if latency < 0) / len(from_end) * 100,
        "start_p50": statistics.median(from_start) * 1000, "start_p99": percentile(from_start, 0.99) * 1000,
        "pushes_ps": args.pushes / (pushed - began), "deliveries_ps": len(seen) / (max(arrived.values()) - began),
        "drain_ps": len(backlog) / drained, "drained": len(backlog),
    }  # fmt: skip


def report(args, shapes, results: dict, ceiling: float) -> None:
    print(f"\n{args.pushes} pushes ({args.concurrency} at once) to projects with one hook each, per server")
    print(f"{'':44s}" + "".join(f" {shape:>16s}" for shape in shapes))
    rows = [("delivered (distinct)", lambda r: f"{r['delivered']} ({r['distinct']})"),
            ("push (git push) p50 / p99 ms", lambda r: f"{r['push_p50']:.0f} / {r['push_p99']:.0f}"),
            ("push end -> delivery p50 / p99 ms", lambda r: f"{r['end_p50']:.0f} / {r['end_p99']:.0f}"),
            ("arrived before git push ended %", lambda r: f"{r['early']:.1f}"),
            ("push start -> delivery p50 / p99 ms", lambda r: f"{r['start_p50']:.0f} / {r['start_p99']:.0f}"),
            ("pushes per second", lambda r: f"{r['pushes_ps']:.1f}"),
            ("deliveries per second (first push to last)", lambda r: f"{r['deliveries_ps']:.1f}"),
            (f"backlog of {args.drain}: deliveries/s", lambda r: f"{r['drain_ps']:.1f}")]  # fmt: skip
    for title, cell in rows:
        print(f"{title:44s}" + "".join(f" {cell(results[shape]):>16s}" for shape in shapes))
    print("(goal: push end -> delivery p50 / p99 100 / 1000 ms; the job commits before the push response ends,")
    print(" so a delivery can arrive before git push ends)")
    print(f"receiver alone, requests/s: {ceiling:.0f} (wrk -c{args.concurrency}, same run)")
    for shape in shapes:
        if "pushes_ps" in results[shape]:
            print(f"  {shape}: deliveries/s of the backlog / receiver's rate = {results[shape]['drain_ps'] / ceiling:.3f}")


if __name__ == "__main__":
    main()
