"""Webhook benchmark: push to delivery latency and deliveries per second.

Seeds N projects with one hook each pointing at a local receiver (a bare ASGI app that records
when each delivery arrives), starts `codeyard serve` (with its worker process), and makes one real
`git push` over HTTP to each project (CONCURRENCY at a time). Reports the latency from the end of
each push (the client's `git push` returning) and from its start to the delivery's arrival, p50
and p99, and deliveries per second; then measures the receiver's own request rate with wrk
(POSTs of a push-sized body) as the ceiling a delivery rate is compared with. Pushes arrive slower
than deliveries go out, so a last phase commits a backlog of DRAIN deliveries at once (from another
process: the server's worker finds them at its next poll) and times how fast the worker drains it.

    .venv/bin/python bench/hooks.py [--pushes 1000] [--concurrency 4] [--drain 2000]
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

from common import PYTHON, ROOT, codeyard_env, ensure_wrk, free_port, stop, uvicorn_command, wait_until_up

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
count, hooks = int(sys.argv[1]), int(sys.argv[2])
with rt.db.transaction() as session:
    for n in range(count):
        webhooks.enqueue(session, 1 + n % hooks, "Push Hook", '{"project_id": %d}' % (-1 - n))
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        tmp = Path(tmp)
        env, port = codeyard_env(tmp)
        receiver_port = free_port()
        (tmp / "receiver_app.py").write_text(RECEIVER_APP)
        receiver = subprocess.Popen(uvicorn_command("receiver_app:app", receiver_port, False),
                                    env={**env, "PYTHONPATH": str(tmp)}, cwd=tmp)  # fmt: skip
        receiver_url = f"http://127.0.0.1:{receiver_port}/hook"
        processes = [receiver]
        try:
            wait_until_up(f"http://127.0.0.1:{receiver_port}/")
            print(f"seeding {args.pushes} projects with one hook each ...", flush=True)
            seeded = subprocess.run([PYTHON, "-c", SEED, str(args.pushes), receiver_url], env=env,
                                    capture_output=True, text=True)  # fmt: skip
            if seeded.returncode != 0:
                raise SystemExit(f"seeding failed:\n{seeded.stderr}")
            token = seeded.stdout.split()[-1]
            # `codeyard serve`: the server (uvicorn, as the other benchmarks run it) and its job worker process.
            server = subprocess.Popen([PYTHON, "-m", "codeyard", "serve", "--port", str(port)], env=env, cwd=ROOT,
                                      stdout=subprocess.DEVNULL)  # fmt: skip
            processes.append(server)
            wait_until_up(f"http://127.0.0.1:{port}/-/health")
            git_env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "HOME": str(tmp),
                       "GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "b@example.com",
                       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "b@example.com"}  # fmt: skip
            work = tmp / "work"
            git("init", "-q", "-b", "master", str(work), env=git_env)
            (work / "README.md").write_text("hello\n")
            git("add", "README.md", cwd=work, env=git_env)
            git("commit", "-q", "-m", "first", cwd=work, env=git_env)
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
                list(pool.map(push, range(args.pushes)))
            pushed = time.time()
            seen = wait_for(receiver_port, args.pushes)
            print(f"a backlog of {args.drain} deliveries ...", flush=True)
            subprocess.run([PYTHON, "-c", BACKLOG, str(args.drain), str(args.pushes)], env=env, check=True)
            backlog = [r for r in wait_for(receiver_port, args.pushes + args.drain) if r["project_id"] < 0]
            print("measuring the receiver's own request rate ...", flush=True)
            ceiling = receiver_rate(tmp, receiver_url, 5, args.concurrency)
        finally:
            stop(processes)
    seen = [record for record in seen if record["project_id"] > 0]
    arrived = {record["project_id"]: record["at"] for record in seen}
    from_end = [arrived[p] - end for p, (_start, end) in times.items() if p in arrived]
    from_start = [arrived[p] - start for p, (start, _end) in times.items() if p in arrived]
    durations = [end - start for start, end in times.values()]
    last = max(arrived.values())
    print(f"\n{args.pushes} pushes ({args.concurrency} at once) to projects with one hook each")
    print(f"  delivered                      {len(seen)} (distinct deliveries {len({r['delivery'] for r in seen})})")
    print(f"  push (git push) p50 / p99      {statistics.median(durations) * 1000:7.1f} / {percentile(durations, 0.99) * 1000:7.1f} ms")
    print(f"  push end -> delivery p50 / p99 {statistics.median(from_end) * 1000:7.1f} / {percentile(from_end, 0.99) * 1000:7.1f} ms"
          "   (goal 100 / 1000 ms)")  # fmt: skip
    early = sum(1 for latency in from_end if latency < 0) / len(from_end)
    print(f"  arrived before git push ended  {early * 100:7.1f} %   (the job commits before the push response ends)")
    print(f"  push start -> delivery p50/p99 {statistics.median(from_start) * 1000:7.1f} / {percentile(from_start, 0.99) * 1000:7.1f} ms")
    print(f"  pushes per second              {args.pushes / (pushed - began):7.1f}")
    print(f"  deliveries per second          {len(seen) / (last - began):7.1f}   (first push to last delivery)")
    drained = max(r["at"] for r in backlog) - min(r["at"] for r in backlog)
    print(f"  backlog of {args.drain}: drained at  {len(backlog) / drained:7.1f} deliveries/s (first to last arrival; "
          f"{len(backlog)} arrived)")  # fmt: skip
    print(f"  receiver alone, requests/s     {ceiling:7.0f}   (wrk -c{args.concurrency}, same run)")


if __name__ == "__main__":
    main()
