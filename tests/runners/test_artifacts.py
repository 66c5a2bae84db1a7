"""Artifacts (reference 12.4, 9.2): the runner uploads them with its build token while the build
runs; later builds of the pipeline download them; users with read_build download them."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from codeyard.db.models import ApplicationSetting, Project
from codeyard.services.ci import artifacts

from ..support import make_team
from .conftest import V1, build_row, job

ZIP = b"PK\x03\x04" + bytes(range(256)) * 8


def upload(runner_api, build_id, token, content=ZIP, name="artifacts.zip", path=V1):
    return runner_api.api.post(f"{path}/builds/{build_id}/artifacts", data={"token": token},
                               files={"file": (name, content, "application/zip")})  # fmt: skip


@pytest.fixture
def stages(runner_api, ci, project):
    """A two-stage pipeline whose first build runs: (runner token, first job, pipeline id)."""
    pipeline_id = ci.pipeline(project, [job("build", "build", 0), job("test", "test", 1)])
    runner = runner_api.specific(project)
    return runner, runner_api.poll(runner).json(), pipeline_id


def test_upload_replace_and_pass_to_the_next_stage(runner_api, rt, stages):
    runner, first, _pipeline = stages
    response = upload(runner_api, first["id"], first["token"], b"old", name="../../x.zip")
    assert response.status_code == 201, response.text
    assert response.json()["artifacts_file"] == {"filename": "x.zip", "size": 3}
    replaced = upload(runner_api, first["id"], first["token"], ZIP, path="http://testserver/api/v3/ci")
    assert replaced.status_code == 201 and replaced.json()["artifacts_file"] == {"filename": "artifacts.zip", "size": len(ZIP)}
    build = build_row(rt, first["id"])
    assert artifacts.path(rt, build).read_bytes() == ZIP
    assert [p.name for p in artifacts.directory(rt, build.project_id).iterdir() if "artifacts" in p.name or "upload" in p.name] == [f"{build.id}.artifacts"]
    assert runner_api.api.put(f"{V1}/builds/{first['id']}", json={"token": runner, "state": "success"}).json() is True
    second = runner_api.poll(runner).json()
    assert second["depends_on_builds"][0]["artifacts_file"] == {"filename": "artifacts.zip", "size": len(ZIP)}
    download = runner_api.api.get(f"{V1}/builds/{first['id']}/artifacts", params={"token": second["token"]})
    assert download.status_code == 200 and download.content == ZIP
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["content-disposition"] == 'attachment; filename="artifacts.zip"'
    # the first build's own token ended with it; the runner's token is not a build token
    assert runner_api.api.get(f"{V1}/builds/{first['id']}/artifacts", params={"token": first["token"]}).status_code == 403
    assert runner_api.api.get(f"{V1}/builds/{first['id']}/artifacts", params={"token": runner}).status_code == 403


def test_a_build_of_another_pipeline_cannot_download(runner_api, ci, rt, stages, project):
    _runner, first, _pipeline = stages
    upload(runner_api, first["id"], first["token"])
    ci.pipeline(project, [job("other")], sha="b" * 40)
    stranger = runner_api.poll(runner_api.shared()).json()
    response = runner_api.api.get(f"{V1}/builds/{first['id']}/artifacts", headers={"BUILD-TOKEN": stranger["token"]})
    assert response.status_code == 403
    assert runner_api.api.get(f"{V1}/builds/{stranger['id']}/artifacts", headers={"BUILD-TOKEN": stranger["token"]}).status_code == 404
    assert runner_api.api.get(f"{V1}/builds/{10**6}/artifacts", headers={"BUILD-TOKEN": stranger["token"]}).status_code == 404


def test_upload_refusals_change_nothing(runner_api, ci, rt, stages, project):
    runner, first, pipeline_id = stages
    assert upload(runner_api, first["id"], "wrong").status_code == 403
    assert upload(runner_api, first["id"], runner).status_code == 403
    assert upload(runner_api, 10**6, first["token"]).status_code == 404
    no_file = runner_api.api.post(f"{V1}/builds/{first['id']}/artifacts", data={"token": first["token"]})
    # GitLab 8.6 (lib/ci/api/builds.rb) said `bad_request!('Missing artifacts file!')`, through the
    # helper that wraps its argument as a missing attribute's name.
    assert no_file.status_code == 400 and no_file.json() == {"message": '400 (Bad request) "Missing artifacts file!" not given'}
    assert [b.id for b in ci.all_builds(pipeline_id)] == [first["id"]]  # the second stage waits for this one
    with rt.db.transaction() as session:
        session.execute(update(ApplicationSetting).values(max_artifacts_size=1))
    assert upload(runner_api, first["id"], first["token"], b"x" * (1024 * 1024 + 1)).status_code == 413
    assert upload(runner_api, first["id"], first["token"], b"x" * (2 * 1024 * 1024)).status_code == 413
    build = build_row(rt, first["id"])
    assert build.artifacts_file is None and not artifacts.path(rt, build).exists()
    assert list(artifacts.directory(rt, build.project_id).glob("*upload*")) == []
    assert ci.finish(first["id"], "success")
    assert upload(runner_api, first["id"], first["token"]).status_code == 403


def test_authorize(runner_api, rt, stages):
    _runner, first, _pipeline = stages
    url = f"{V1}/builds/{first['id']}/artifacts/authorize"
    ok = runner_api.api.post(url, data={"token": first["token"], "filesize": 1000})
    assert ok.status_code == 200 and ok.json() == {"TempPath": ""}
    assert runner_api.api.post(url, data={"token": first["token"], "filesize": 101 * 1024 * 1024}).status_code == 413
    assert runner_api.api.post(url, data={"token": "nope"}).status_code == 403


def test_delete(runner_api, rt, stages):
    _runner, first, _pipeline = stages
    upload(runner_api, first["id"], first["token"])
    response = runner_api.api.delete(f"{V1}/builds/{first['id']}/artifacts", params={"token": first["token"]})
    assert response.status_code == 200 and "artifacts_file" not in response.json()
    build = build_row(rt, first["id"])
    assert build.artifacts_file is None and not artifacts.path(rt, build).exists()


def test_users_download_with_read_build(runner_api, rt, users, projects, admin, api):
    team = make_team(users, projects, admin)
    runner = runner_api.specific(team.project)
    from ..builds.conftest import CiFactory

    CiFactory(rt).pipeline(team.project, [job("a")])
    first = runner_api.poll(runner).json()
    path = f"/projects/{team.project.id}/builds/{first['id']}/artifacts"
    assert api.as_(team.user("owner")).get(path).status_code == 404  # none yet
    upload(runner_api, first["id"], first["token"])
    expected = {"anonymous": 401, "outsider": 404, "guest": 403, "reporter": 200, "developer": 200, "master": 200,
                "owner": 200, "admin": 200}  # fmt: skip
    for role, status in expected.items():
        response = api.as_(team.user(role)).get(path)
        assert response.status_code == status, (role, response.text)
        if status == 200:
            assert response.content == ZIP and response.headers["content-disposition"].startswith("attachment")
    with rt.db.transaction() as session:  # public: anyone signed in reads builds while public_builds is on
        session.execute(update(Project).where(Project.id == team.project.id).values(visibility_level=20))
    assert api.as_(team.user("outsider")).get(path).status_code == 200
    with rt.db.transaction() as session:
        session.execute(update(Project).where(Project.id == team.project.id).values(public_builds=False))
    assert api.as_(team.user("outsider")).get(path).status_code == 403
    assert api.as_(team.user("reporter")).get(path).status_code == 200
    assert api.as_(team.user("owner")).get(f"/projects/{team.project.id}/builds/{10**6}/artifacts").status_code == 404


def test_artifacts_go_with_the_project(runner_api, rt, stages, project, alice, api):
    _runner, first, _pipeline = stages
    upload(runner_api, first["id"], first["token"])
    build = build_row(rt, first["id"])
    assert artifacts.path(rt, build).exists()
    assert api.as_(alice).delete(f"/projects/{project.id}").status_code == 200
    assert not artifacts.path(rt, build).exists()
