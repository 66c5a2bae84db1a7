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

Labels are bounded: a route's template, never its path (`UNMATCHED` for every path no route has),
a known method or `OTHER`, the status; job kinds from the handlers' table.
"""

from __future__ import annotations

import logging
import os
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

_request_children: dict[tuple[str, str, int], tuple] = {}


def record_request(route: str, method: str, status: int, seconds: float) -> None:
    """Count one answered request (on the event loop: a dictionary lookup and two increments)."""
    children = _request_children.get((route, method, status))
    if children is None:
        children = _children(route, method, status)
    children[0].inc()
    children[1].observe(seconds)


def _children(route: str, method: str, status: int) -> tuple:
    method_label = method if method in METHODS else "OTHER"
    children = (HTTP_REQUESTS.labels(route, method_label, str(status)), HTTP_SECONDS.labels(route, method_label))
    _request_children[(route, method, status)] = children
    return children


def method_label(method: str) -> str:
    return method if method in METHODS else "OTHER"


# --- the scrape -------------------------------------------------------------------------------------


def multiprocess_directory() -> str | None:
    return os.environ.get(DIRECTORY_VARIABLE) or None


def exposition(gauges: list[GaugeMetricFamily]) -> bytes:
    """Every process's figures (or this one's) and GAUGES, in Prometheus' text format."""
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
