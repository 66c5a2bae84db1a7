"""What the server counts for Prometheus (`/-/metrics`, prometheus_client) and the access log.

`codeyard serve` runs several server processes and a job worker. For their figures to add up, the
library's multiprocess mode is on there: `serve` clears `<data>/metrics` and names it in
PROMETHEUS_MULTIPROC_DIR before anything imports prometheus_client (the library chooses its storage
at import), every process started after inherits it and writes its figures to its own memory-mapped
files there, and a scrape adds them up. Without it (tests, `codeyard worker` alone) the figures are
the process's own, in the library's default registry.

Only counters and histograms live in those files: what a dead process counted stays part of the
totals, as Prometheus expects of counters (a server process uvicorn starts again, or a job worker
the supervisor starts again, adds to them). The job queue's gauges are computed at scrape time from
the `jobs` table, so no process leaves a stale gauge behind; `process_died` still removes a dead
process's live-gauge files, as the library asks.

Requests are tallied in the process first (`RequestTally`) and added to the library's values every
second and before each scrape: a scrape sees another server process's requests at most about a
second late, and a process killed outright loses at most its last second.

Labels are bounded: a route's template, never its path (`UNMATCHED` for every path no route has),
a known method or `OTHER`, the status; job kinds from the handlers' table.
"""

from __future__ import annotations

import bisect
import logging
import math
import os
import threading
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import REGISTRY

DIRECTORY_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
UNMATCHED = "(unmatched)"  # the route label of every request no route answers (404, 414, 405)
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))

# Seconds: most API answers take well under 5 ms; git transfers and archives take seconds.
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
LONG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0)

HTTP_REQUESTS = Counter(
    "codeyard_http_requests", "HTTP requests answered, by route template, method and status",
    ("route", "method", "status"),
)  # fmt: skip
# By route and method only: a status label would multiply every route's buckets.
HTTP_SECONDS = Histogram(
    "codeyard_http_request_duration_seconds", "Time from a request's arrival to the end of its answer",
    ("route", "method"), buckets=REQUEST_BUCKETS,
)  # fmt: skip
GIT_SECONDS = Histogram(
    "codeyard_git_operation_duration_seconds", "git upload-pack (fetch, clone) and receive-pack (push) over HTTP",
    ("operation", "outcome"), buckets=LONG_BUCKETS,
)  # fmt: skip
JOBS = Counter("codeyard_jobs", "Background job runs by kind and outcome (finished, retried, failed)", ("kind", "outcome"))
JOB_SECONDS = Histogram("codeyard_job_duration_seconds", "Time a job's handler ran", ("kind",), buckets=LONG_BUCKETS)
WEBHOOK_DELIVERIES = Counter(
    "codeyard_webhook_deliveries", "Webhook delivery attempts by outcome (delivered, rejected, unreachable, blocked)",
    ("outcome",),
)  # fmt: skip
RUNNER_CLAIMS = Counter("codeyard_runner_claims", "Runners' requests for a build, by outcome (build, none)", ("outcome",))

access_log = logging.getLogger("codeyard.access")

FLUSH_EVERY = 1.0  # seconds: how old another server process's request figures may be at a scrape


class RequestTally:
    """Requests counted in a dictionary and added to prometheus_client's values every FLUSH_EVERY
    seconds by a thread, and before each scrape: one request counted through the library in
    multiprocess mode (a lock, getpid and a write for each of three values) cost a good share of
    `GET /api/v3/user`, a dictionary entry next to nothing (docs/MEASUREMENTS.md)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str, int], list] = {}  # (route, method, status) -> [count, sum, buckets]
        self._children: dict[tuple[str, str, int], tuple] = {}
        self._flusher: threading.Thread | None = None

    def add(self, route: str, method: str, status: int, seconds: float) -> None:
        bucket = bisect.bisect_left(REQUEST_BOUNDS, seconds)
        key = (route, method_label(method), status)  # bounded keys, as the labels
        with self._lock:
            entry = self._pending.get(key)
            if entry is None:
                entry = self._pending[key] = [0, 0.0, [0] * len(REQUEST_BOUNDS)]
            entry[0] += 1
            entry[1] += seconds
            entry[2][bucket] += 1

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for key, (count, total, buckets) in pending.items():
            counter, histogram = self._children.get(key) or self._labelled(key)
            counter.inc(count)
            # The histogram's own values, added to in bulk (Histogram.observe adds one observation).
            histogram._sum.inc(total)
            for index, observed in enumerate(buckets):
                if observed:
                    histogram._buckets[index].inc(observed)

    def _labelled(self, key: tuple[str, str, int]) -> tuple:
        route, method, status = key[0], key[1], str(key[2])
        children = self._children[key] = (HTTP_REQUESTS.labels(route, method, status), HTTP_SECONDS.labels(route, method))
        return children

    def start(self) -> None:
        """Flush every FLUSH_EVERY seconds from a daemon thread (once per process)."""
        with self._lock:
            if self._flusher is not None:
                return
            self._flusher = threading.Thread(target=self._flush_forever, name="codeyard-metrics", daemon=True)
        self._flusher.start()

    def _flush_forever(self) -> None:
        while True:
            time.sleep(FLUSH_EVERY)
            try:
                self.flush()
            except Exception:
                logging.getLogger("codeyard").exception("adding up the request figures failed")


REQUEST_BOUNDS = (*REQUEST_BUCKETS, math.inf)
requests = RequestTally()
record_request = requests.add


def method_label(method: str) -> str:
    return method if method in METHODS else "OTHER"


# --- the scrape -------------------------------------------------------------------------------------


def multiprocess_directory() -> str | None:
    return os.environ.get(DIRECTORY_VARIABLE) or None


def exposition(gauges: list[GaugeMetricFamily]) -> bytes:
    """Every process's figures (or this one's) and GAUGES, in Prometheus' text format."""
    requests.flush()
    if multiprocess_directory() is None:
        counted = generate_latest(REGISTRY)
    else:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        counted = generate_latest(registry)
    now = CollectorRegistry(auto_describe=False)
    now.register(_Computed(gauges))
    return counted + generate_latest(now)


class _Computed:
    """A collector of figures computed for one scrape."""

    def __init__(self, families: list[GaugeMetricFamily]):
        self.families = families

    def collect(self):
        return self.families


def gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


def process_died(pid: int) -> None:
    """A dead process's live gauges no longer count (its counters and histograms do)."""
    if multiprocess_directory() is not None:
        multiprocess.mark_process_dead(pid)


# --- set-up -----------------------------------------------------------------------------------------


def start_access_log(setting: str) -> None:
    """CODEYARD_ACCESS_LOG: empty or 0 off, 1 to standard error, anything else a file appended to."""
    if setting in ("", "0"):
        return  # CodeyardApp.access_log is false: nothing is logged
    access_log.setLevel(logging.INFO)
    if setting != "1" and not access_log.handlers:
        handler = logging.FileHandler(Path(setting), encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        access_log.addHandler(handler)
        access_log.propagate = False
