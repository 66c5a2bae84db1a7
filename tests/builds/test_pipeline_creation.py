"""Pipelines from pushes (reference 12.5): file commits and branch creation through the API here,
git pushes over HTTP in test_git_pushes.py."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from codeyard.db.models import Build, Pipeline, Project
from codeyard.services.ci import config as ci_config

TWO_STAGES = """
stages: [build, test]
compile:
  stage: build
  script: make
rspec:
  script: rspec
deploy_master:
  stage: test
  script: deploy
  only: [master]
"""


@pytest.fixture
def project(projects, alice):
    return projects.create(alice)


def commit_file(api, user, project, path, text, message="change", branch="master", action="post"):
    body = {"file_path": path, "branch_name": branch, "content": text, "commit_message": message}
    response = getattr(api.as_(user), action)(f"/projects/{project.id}/repository/files", json=body)
    assert response.status_code in (200, 201), response.text
    return api.as_(user).get(f"/projects/{project.id}/repository/branches/{branch}").json()["commit"]["id"]


def pipelines_of(rt, project) -> list[Pipeline]:
    with rt.db.transaction(write=False) as session:
        found = list(session.scalars(select(Pipeline).where(Pipeline.project_id == project.id).order_by(Pipeline.id)))
        session.expunge_all()
    return found


def builds_of(rt, pipeline_id) -> list[Build]:
    with rt.db.transaction(write=False) as session:
        found = list(session.scalars(select(Build).where(Build.pipeline_id == pipeline_id).order_by(Build.id)))
        session.expunge_all()
    return found


def test_a_commit_with_a_config_creates_a_pipeline_and_its_first_stage(rt, api, alice, project):
    sha = commit_file(api, alice, project, ".gitlab-ci.yml", TWO_STAGES, "add ci")
    (pipeline,) = pipelines_of(rt, project)
    assert (pipeline.sha, pipeline.ref, pipeline.tag, pipeline.status, pipeline.yaml_errors) == (sha, "master", False, "pending", None)
    assert pipeline.user_id == alice.id
    assert [j["name"] for j in pipeline.config["jobs"]] == ["compile", "rspec", "deploy_master"]
    (build,) = builds_of(rt, pipeline.id)
    assert (build.name, build.stage, build.stage_idx, build.status, build.ref, build.sha, build.commands) == (
        "compile", "build", 0, "pending", "master", sha, "\nmake"  # no before_script: 8.6 put a newline first
    )
    assert build.user_id == alice.id and build.runner_id is None and build.token_digest is None


def test_only_matching_jobs_are_kept_for_another_branch(rt, api, alice, project):
    commit_file(api, alice, project, ".gitlab-ci.yml", TWO_STAGES, "add ci")
    created = api.as_(alice).post(f"/projects/{project.id}/repository/branches", json={"branch_name": "feature", "ref": "master"})
    assert created.status_code == 201
    master, feature = pipelines_of(rt, project)
    assert feature.ref == "feature" and feature.sha == master.sha
    assert [j["name"] for j in feature.config["jobs"]] == ["compile", "rspec"]
    assert [b.name for b in builds_of(rt, feature.id)] == ["compile"]
    # Deleting the branch creates nothing.
    assert api.as_(alice).delete(f"/projects/{project.id}/repository/branches/feature").status_code == 200
    assert len(pipelines_of(rt, project)) == 2


def test_no_config_no_pipeline(rt, api, alice, project):
    commit_file(api, alice, project, "README.md", "hello\n")
    assert pipelines_of(rt, project) == []


def test_ci_skip_records_a_skipped_pipeline_without_builds(rt, api, alice, project):
    commit_file(api, alice, project, ".gitlab-ci.yml", TWO_STAGES, "add ci [ci skip]")
    (pipeline,) = pipelines_of(rt, project)
    assert pipeline.status == "skipped" and builds_of(rt, pipeline.id) == []


def test_an_invalid_file_is_recorded_and_the_commit_succeeds(rt, api, alice, project):
    commit_file(api, alice, project, ".gitlab-ci.yml", "job:\n  script: x\n  stage: nope\n", "bad ci")
    (pipeline,) = pipelines_of(rt, project)
    assert pipeline.status == "failed"
    assert pipeline.yaml_errors == "job job: stage parameter should be build, test, deploy"
    assert builds_of(rt, pipeline.id) == []


def test_a_too_large_file_is_recorded_without_being_read(rt, api, alice, project, monkeypatch):
    monkeypatch.setattr(ci_config, "MAX_BYTES", 100)
    commit_file(api, alice, project, ".gitlab-ci.yml", "job:\n  script: " + "x" * 200 + "\n", "big ci")
    (pipeline,) = pipelines_of(rt, project)
    assert pipeline.status == "failed" and pipeline.yaml_errors == "The file is too large (at most 0 KiB)"


def test_no_job_for_the_ref_is_a_skipped_pipeline(rt, api, alice, project):
    commit_file(api, alice, project, ".gitlab-ci.yml", "job:\n  script: x\n  only: [production]\n")
    (pipeline,) = pipelines_of(rt, project)
    assert pipeline.status == "skipped" and builds_of(rt, pipeline.id) == []


def test_the_first_stage_with_an_on_success_job_starts(rt, api, alice, project):
    text = "cleanup:\n  stage: build\n  script: x\n  when: on_failure\nrspec:\n  script: x\n"
    commit_file(api, alice, project, ".gitlab-ci.yml", text)
    (pipeline,) = pipelines_of(rt, project)
    assert [b.name for b in builds_of(rt, pipeline.id)] == ["rspec"]


def test_builds_disabled_creates_nothing(rt, api, alice, project):
    with rt.db.transaction() as session:
        session.get(Project, project.id).builds_enabled = False
    commit_file(api, alice, project, ".gitlab-ci.yml", TWO_STAGES)
    assert pipelines_of(rt, project) == []


def test_each_commit_gets_its_pipeline(rt, api, alice, project):
    first = commit_file(api, alice, project, ".gitlab-ci.yml", TWO_STAGES)
    second = commit_file(api, alice, project, "README.md", "x\n")
    assert [p.sha for p in pipelines_of(rt, project)] == [first, second]
