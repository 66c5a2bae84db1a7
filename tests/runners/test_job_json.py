"""The whole Runner job of a build with everything a job can carry (a tag, before sha, YAML
variables, options, its own artifacts, dependencies with and without artifacts, a retried build
left out), pinned field by field; the same whether or not the project has build hooks (with hooks
the claim runs in a session, so that the Build Hook is enqueued in its transaction)."""

from __future__ import annotations

import orjson
import pytest
from sqlalchemy import select, update

from codeyard.db.models import Build, Job, Pipeline, ProjectHook

from .conftest import job


def build_hook_statuses(rt) -> list[tuple[int, str]]:
    with rt.db.session() as session:
        bodies = [orjson.loads(j.payload["body"]) for j in session.scalars(select(Job).order_by(Job.id))
                  if j.payload["event"] == "Build Hook"]  # fmt: skip
    return [(body["build_id"], body["build_status"]) for body in bodies]


@pytest.mark.parametrize("hooked", [False, True], ids=["no-hooks", "build-hooks"])
def test_the_whole_job_of_a_later_stage(runner_api, ci, rt, project, hooked):
    test_spec = {
        **job("rspec", "test", 1, tags=["docker"]),
        "commands": "bundle\nrake spec",
        "options": {"image": "ruby:2.1", "services": ["postgres"], "artifacts": {"paths": ["out/"]}},
        "variables": [{"key": "DB", "value": "postgres"}, {"key": "EMPTY", "value": None}],
    }
    pipeline_id = ci.pipeline(project, [job("compile", "build", 0), job("lint", "build", 0), test_spec], ref="v1.0")
    with rt.db.transaction() as session:
        session.execute(update(Pipeline).values(tag=True, before_sha="c" * 40))
        session.execute(update(Build).values(tag=True))
        if hooked:
            session.add(ProjectHook(project_id=project.id, url="http://example.com/b", build_events=True))
    token = runner_api.shared("docker, linux")
    compile_, lint = runner_api.poll(token).json(), runner_api.poll(token).json()
    with rt.db.transaction() as session:
        session.execute(update(Build).where(Build.id == compile_["id"]).values(artifacts_file="out.zip", artifacts_size=12))
        retried = Build(project_id=project.id, pipeline_id=pipeline_id, name="lint", stage="build", stage_idx=0,
                        ref="v1.0", tag=True, sha="a" * 40, status="failed", retried=True, commands="echo lint")  # fmt: skip
        session.add(retried)
    assert ci.finish(compile_["id"], "success") and ci.finish(lint["id"], "success")
    rspec_id = ci.builds(pipeline_id)["rspec"].id
    with rt.db.transaction() as session:
        session.execute(update(Build).where(Build.id == rspec_id).values(artifacts_file="old.zip", artifacts_size=5))

    response = runner_api.poll(token)
    assert response.status_code == 201, response.text
    body = response.json()
    build_token = body["token"]
    summary = {"ref": "v1.0", "tag": True, "sha": "a" * 40, "token": build_token, "project_id": project.id, "project_name": "Demo"}
    assert body == {
        "id": rspec_id, **summary, "status": "running", "name": "rspec", "stage": "test",
        "artifacts_file": {"filename": "old.zip", "size": 5},
        "commands": "bundle\nrake spec",
        "repo_url": f"http://gitlab-ci-token:{build_token}@testserver/alice/demo.git",
        "before_sha": "c" * 40,
        "allow_git_fetch": True,
        "options": {"image": "ruby:2.1", "services": ["postgres"], "artifacts": {"paths": ["out/"]}},
        "timeout": 3600,
        "variables": [
            {"key": "CI_BUILD_TAG", "value": "v1.0", "public": True},
            {"key": "CI_BUILD_NAME", "value": "rspec", "public": True},
            {"key": "CI_BUILD_STAGE", "value": "test", "public": True},
            {"key": "DB", "value": "postgres", "public": True},
            {"key": "EMPTY", "value": "", "public": True},
        ],
        "depends_on_builds": [
            {"id": compile_["id"], **summary, "status": "success", "name": "compile", "stage": "build",
             "artifacts_file": {"filename": "out.zip", "size": 12}},
            {"id": lint["id"], **summary, "status": "success", "name": "lint", "stage": "build"},
        ],
    }  # fmt: skip
    assert list(body) == [
        "id", "ref", "tag", "sha", "status", "name", "token", "stage", "project_id", "project_name", "artifacts_file",
        "commands", "repo_url", "before_sha", "allow_git_fetch", "options", "timeout", "variables", "depends_on_builds",
    ]  # fmt: skip
    assert ci.status(pipeline_id) == "running"
    expected_hooks = [(compile_["id"], "running"), (lint["id"], "running"), (compile_["id"], "success"),
                      (lint["id"], "success"), (rspec_id, "running")]  # fmt: skip
    assert build_hook_statuses(rt) == (expected_hooks if hooked else [])
