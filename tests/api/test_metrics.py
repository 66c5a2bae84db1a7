"""/-/metrics and the access log in one process (the default registry); tests/test_metrics_live.py
scrapes `codeyard serve` with two server processes and its job worker."""

from __future__ import annotations

import logging

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from codeyard import metrics
from codeyard.app import CodeyardApp, build_router
from codeyard.jobs import queue
from codeyard.jobs.worker import Worker

LOOPBACK = ("127.0.0.1", 50000)


@pytest.fixture(scope="module")
def _loopback_client(session_runtime):
    app = CodeyardApp(session_runtime, build_router(), owns_runtime=False)
    with TestClient(app, base_url="http://testserver", raise_server_exceptions=False, client=LOOPBACK) as client:
        yield client


@pytest.fixture
def loopback(rt, _loopback_client) -> TestClient:
    """A client calling from 127.0.0.1, where metrics may be read by default."""
    return _loopback_client


def scrape(client) -> dict[tuple[str, frozenset], float]:
    """Every sample of a scrape by (name, labels)."""
    response = client.get("/-/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def grown(before: dict, after: dict, name: str, **labels) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_requests_are_counted_by_route_template_method_and_status(loopback, api, alice, projects):
    project = projects.create(alice, name="demo")
    before = scrape(loopback)
    for _ in range(3):
        assert api.as_(alice).get("/user").status_code == 200
    assert api.as_(alice).get(f"/projects/{project.id}").status_code == 200
    assert api.as_(alice).get("/projects/999999").status_code == 404
    assert api.anonymous.get("/user").status_code == 401
    after = scrape(loopback)
    requests, seconds = "codeyard_http_requests_total", "codeyard_http_request_duration_seconds_count"
    assert grown(before, after, requests, route="/api/v3/user", method="GET", status="200") == 3
    assert grown(before, after, requests, route="/api/v3/user", method="GET", status="401") == 1
    assert grown(before, after, requests, route="/api/v3/projects/:id", method="GET", status="200") == 1
    assert grown(before, after, requests, route="/api/v3/projects/:id", method="GET", status="404") == 1
    assert grown(before, after, seconds, route="/api/v3/user", method="GET") == 4
    assert grown(before, after, seconds, route="/api/v3/projects/:id", method="GET") == 2
    # The first scrape is counted too, by its own template.
    assert grown(before, after, requests, route="/-/metrics", method="GET", status="200") == 1
    assert not any(str(project.id) in dict(labels).get("route", "").split("/") for _, labels in after)


def test_web_pages_git_and_misses_are_counted(loopback, api, alice):
    before = scrape(loopback)
    assert api.client.get("/users/sign_in").status_code == 200
    assert api.client.get("/nobody/nothing.git/info/refs?service=git-upload-pack").status_code in (401, 404)
    assert api.client.get("/-/health").status_code == 200
    assert api.client.get("/api/v3/no/such/thing").status_code == 404
    after = scrape(loopback)
    requests = "codeyard_http_requests_total"
    assert grown(before, after, requests, route="/users/sign_in", method="GET", status="200") == 1
    assert grown(before, after, requests, route="/-/health", method="GET", status="200") == 1
    assert grown(before, after, requests, route=metrics.UNMATCHED, method="GET", status="404") == 1
    git = [labels for (name, labels), v in after.items() if name == requests and ("route", "/:namespace/:project/info/refs") in labels]
    assert git, "the git route is counted by its template"


def test_jobs_are_counted_by_kind_and_outcome_and_the_queue_is_measured(loopback, rt):
    def ok(rt_, job):
        pass

    def again(rt_, job):
        raise queue.Retry("later")

    def never(rt_, job):
        raise queue.Fail("no")

    with rt.db.transaction() as session:
        for kind in ("ok", "again", "never", "ok"):
            queue.enqueue(session, kind, {})
    before = scrape(loopback)
    assert value(before, "codeyard_job_queue_depth") == 4
    assert value(before, "codeyard_job_queue_oldest_due_age_seconds") >= 0
    assert Worker(rt, handlers={"ok": ok, "again": again, "never": never}, backoff=3600).run_until_idle() == 4
    after = scrape(loopback)
    jobs = "codeyard_jobs_total"
    assert grown(before, after, jobs, kind="ok", outcome="finished") == 2
    assert grown(before, after, jobs, kind="again", outcome="retried") == 1
    assert grown(before, after, jobs, kind="never", outcome="failed") == 1
    assert grown(before, after, "codeyard_job_duration_seconds_count", kind="ok") == 2
    assert value(after, "codeyard_job_queue_depth") == 0  # the retried one waits an hour
    assert value(after, "codeyard_job_queue_oldest_due_age_seconds") == 0


def test_the_oldest_due_job_age_is_how_long_it_has_waited(loopback, rt):
    import datetime as dt

    from sqlalchemy import update

    from codeyard.db.models import Job, utcnow

    with rt.db.transaction() as session:
        queue.enqueue(session, "ok", {})
        queue.enqueue(session, "later", {}, delay=3600)
        session.flush()
        session.execute(update(Job).where(Job.kind == "ok").values(run_at=utcnow() - dt.timedelta(seconds=90)))
    samples = scrape(loopback)
    assert value(samples, "codeyard_job_queue_depth") == 1
    assert 90 <= value(samples, "codeyard_job_queue_oldest_due_age_seconds") < 3600


def test_the_access_log_has_one_line_per_request(loopback, api, alice, caplog, monkeypatch):
    monkeypatch.setattr(api.client.app, "access_log", True)
    with caplog.at_level(logging.INFO, logger="codeyard.access"):
        assert api.as_(alice).get("/user").status_code == 200
        assert api.anonymous.get("/projects/12345").status_code == 401
    lines = [record.getMessage() for record in caplog.records if record.name == "codeyard.access"]
    assert len(lines) == 2, lines
    method, route, status, duration, user = lines[0].split(" ")
    assert (method, route, status, user) == ("GET", "/api/v3/user", "200", f"user={alice.id}")
    assert duration.endswith("ms") and float(duration[:-2]) >= 0
    assert lines[1].split(" ")[1:3] == ["/api/v3/projects/:id", "401"] and lines[1].endswith("user=-")


def test_the_access_log_is_off_by_default(api, alice, caplog):
    assert api.client.app.access_log is False
    with caplog.at_level(logging.INFO, logger="codeyard.access"):
        api.as_(alice).get("/user")
    assert not [record for record in caplog.records if record.name == "codeyard.access"]
