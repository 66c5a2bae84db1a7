"""/-/metrics of `codeyard serve` as shipped: two server processes and the job worker, whose figures
add up (prometheus_client's multiprocess mode, codeyard.metrics)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from prometheus_client import multiprocess
from prometheus_client.parser import text_string_to_metric_families

from .receiver import Receiver
from .support import free_port

TOKEN = "metricsroottoken0123456"
CHEAP_ARGON2 = {"CODEYARD_ARGON2_MEMORY_KIB": "1024", "CODEYARD_ARGON2_TIME_COST": "1", "CODEYARD_ARGON2_PARALLELISM": "1"}
USER = ("codeyard_http_requests_total", (("method", "GET"), ("route", "/api/v3/user"), ("status", "200")))


def samples(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(text) for s in f.samples}


def served_by(metrics_dir: Path, pid: int) -> float:
    """The GET /api/v3/user answers process PID counted (its own file)."""
    path = metrics_dir / f"counter_{pid}.db"
    if not path.exists():
        return 0
    merged = multiprocess.MultiProcessCollector.merge([str(path)])
    return sum(s.value for m in merged for s in m.samples if (s.name, tuple(sorted(s.labels.items()))) == USER)


def wait_until(condition, what: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while True:
        found = condition()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def server_processes(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
            try:
                if "spawn_main" in Path(f"/proc/{child}/cmdline").read_text():
                    found.append(int(child))
            except FileNotFoundError:
                continue
    return found


def test_figures_add_up_across_two_server_processes_and_the_job_worker(tmp_path):
    data = tmp_path / "data"
    stale = data / "metrics" / "counter_1.db"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"a previous server's figures")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **CHEAP_ARGON2, "CODEYARD_WORKERS": "2", "CODEYARD_WORKER": "1", "CODEYARD_WORKER_POLL": "0.2",
           "CODEYARD_ROOT_TOKEN": TOKEN, "CODEYARD_DATA_DIR": str(data), "CODEYARD_LOG_LEVEL": "warning"}  # fmt: skip
    env.pop("CODEYARD_DATABASE_URL", None)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    server = subprocess.Popen([sys.executable, "-m", "codeyard", "serve", "--port", str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    root = httpx.Client(base_url=url + "/api/v3", headers={"PRIVATE-TOKEN": TOKEN}, timeout=30)
    try:
        wait_until(lambda: _healthy(url), "the server to start")
        assert not stale.exists() and (data / "metrics").stat().st_mode & 0o777 == 0o700
        pids = wait_until(lambda: len(server_processes(server.pid)) == 2 and server_processes(server.pid), "two server processes")

        # Every request on a new connection, until both processes have answered some.
        sent = 0
        while min(served_by(data / "metrics", pid) for pid in pids) == 0:
            assert sent < 2000, "one process answered every new connection"
            for _ in range(10):
                assert httpx.get(url + "/api/v3/user", headers={"PRIVATE-TOKEN": TOKEN}).status_code == 200
                sent += 1
        # A process counts a request right after answering it: the scrape may come a moment sooner.
        scraped = wait_until(lambda: _total(url) == sent and _total(url), f"{sent} requests in the scrape")
        assert scraped == sent

        # A server process that dies is replaced; what it counted stays in the totals.
        os.kill(pids[0], signal.SIGKILL)
        wait_until(lambda: pids[0] not in server_processes(server.pid) and len(server_processes(server.pid)) == 2, "a new process")
        assert _total(url) == sent

        # A job run by the job worker process: a webhook delivery.
        assert root.put("/application/settings", json={"allow_local_requests_from_hooks": True}).status_code == 200
        project = root.post("/projects", json={"name": "demo"}).json()
        with Receiver() as receiver:
            hook = root.post(f"/projects/{project['id']}/hooks", json={"url": receiver.url()}).json()
            assert root.post(f"/projects/{project['id']}/hooks/{hook['id']}/test").status_code == 201
            delivered = ("codeyard_webhook_deliveries_total", (("outcome", "delivered"),))
            found = wait_until(lambda: (s := _scrape(url)).get(delivered) == 1 and s, "the delivery in the scrape")
        assert found[("codeyard_jobs_total", (("kind", "webhook.deliver"), ("outcome", "finished")))] == 1
        assert found[("codeyard_job_queue_depth", ())] == 0
    finally:
        root.close()
        server.terminate()
        output = server.communicate(timeout=60)[0]
    assert "Traceback" not in output, output


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/-/health").status_code == 200
    except httpx.TransportError:
        return False


def _scrape(url: str) -> dict:
    response = httpx.get(url + "/-/metrics")
    assert response.status_code == 200, response.text
    return samples(response.text)


def _total(url: str) -> float:
    return _scrape(url).get(USER, 0)


def test_serve_refuses_to_start_when_prometheus_client_was_imported_first(tmp_path):
    """Imported before serve names its directory, the library would keep this process's figures
    where no scrape reads them: refused instead of wrong totals."""
    env = {**os.environ, **CHEAP_ARGON2, "CODEYARD_DATA_DIR": str(tmp_path / "data")}
    env.pop("CODEYARD_DATABASE_URL", None)
    code = "import sys, prometheus_client; from codeyard.cli import main; sys.argv[0] = 'codeyard'; main()"
    result = subprocess.run([sys.executable, "-c", code, "serve", "--port", str(free_port())], env=env,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode != 0 and "imported before its multiprocess directory was set" in result.stderr
