"""git and runner figures of a live server's /-/metrics: upload-pack and receive-pack timed by outcome,
runner claims counted by outcome."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from codeyard.services.ci import runners

from ..builds.conftest import CiFactory, job
from .conftest import repo_url


def scrape(live) -> dict:
    response = live.http.get("/-/metrics")
    assert response.status_code == 200, response.text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in text_string_to_metric_families(response.text) for s in f.samples}


def grown(before: dict, after: dict, name: str, **labels) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0) - before.get(key, 0)


def test_git_operations_and_runner_claims_are_measured(git, live, rt, alice, projects):
    project = projects.create(alice, name="measured")
    before = scrape(live)
    work = git.new_work("work")
    sha = git.commit(work, "README.md", "hello\n", "first")
    git.run("push", repo_url(live, project, alice), "master", cwd=work)
    git.clone(repo_url(live, project, alice), "copy")
    refused = git.clone(repo_url(live, project, alice, "wrong-password"), "refused", check=False)
    assert refused.returncode != 0
    CiFactory(rt).pipeline(project, [job("one")], sha=sha)
    with rt.db.transaction() as session:
        registration = runners.registration_token(session, rt)
    runner = live.http.post("/ci/api/v1/runners/register", json={"token": registration}).json()["token"]
    assert live.http.post("/ci/api/v1/builds/register", json={"token": runner}).status_code == 201
    assert live.http.post("/ci/api/v1/builds/register", json={"token": runner}).status_code == 404
    after = scrape(live)
    seconds = "codeyard_git_operation_duration_seconds_count"
    assert grown(before, after, seconds, operation="receive-pack", outcome="ok") == 1
    # One clone: one POST with protocol v0, two with v2 (ls-refs, then fetch); the refused one ran no git.
    assert grown(before, after, seconds, operation="upload-pack", outcome="ok") in (1, 2)
    assert grown(before, after, "codeyard_runner_claims_total", outcome="build") == 1
    assert grown(before, after, "codeyard_runner_claims_total", outcome="none") == 1
    assert grown(before, after, "codeyard_http_requests_total", route="/:namespace/:project/git-receive-pack",
                 method="POST", status="200") == 1  # fmt: skip
