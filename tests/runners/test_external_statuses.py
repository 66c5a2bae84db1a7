"""External commit statuses (POST /projects/:id/statuses/:sha) are pending builds of a pipeline, yet
no runner is ever handed one: the queue (and its partial index) leaves generic rows out."""

from __future__ import annotations

from ..builds.test_pipeline_creation import commit_file
from .conftest import build_row, job


def test_a_runner_never_receives_an_external_status(runner_api, ci, rt, api, alice, project):
    sha = commit_file(api, alice, project, "README.md", "hello\n", "readme")
    external = [
        api.as_(alice).post(f"/projects/{project.id}/statuses/{sha}", json={"state": "pending", "name": name}).json()
        for name in ("jenkins", "travis")
    ]
    shared, specific = runner_api.shared(), runner_api.specific(project)
    assert runner_api.poll(shared).status_code == 404
    assert runner_api.poll(specific).status_code == 404
    pipeline_id = ci.pipeline(project, [job("rspec")], sha=sha, ref="later")
    (build,) = ci.all_builds(pipeline_id)
    handed = runner_api.poll(shared)
    assert handed.status_code == 201 and handed.json()["id"] == build.id  # newer than the external statuses
    assert runner_api.poll(specific).status_code == 404
    for status in external:
        row = build_row(rt, status["id"])
        assert row.status == "pending" and row.runner_id is None and row.token_digest is None
