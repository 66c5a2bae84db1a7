"""The runners' side of builds (reference 12.2, 12.3): POST builds/register hands out the oldest
pending build a runner may take; PUT builds/:id reports trace and state; PATCH .../trace.txt appends."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, update

from codeyard.db.models import ApplicationSetting, Build, Pipeline, Project, Runner, utcnow
from codeyard.services import credentials
from codeyard.services.ci import traces

from ..support import QueryCounter
from .conftest import V1, build_row, job

FIELDS = {"id", "ref", "tag", "sha", "status", "name", "token", "stage", "project_id", "project_name", "commands",
          "repo_url", "before_sha", "allow_git_fetch", "options", "timeout", "variables", "depends_on_builds"}  # fmt: skip


def set_project(rt, project, **values) -> None:
    with rt.db.transaction() as session:
        session.execute(update(Project).where(Project.id == project.id).values(**values))


def runner_row(rt, token: str) -> Runner:
    with rt.db.session() as session:
        return session.scalar(select(Runner).where(Runner.token_digest == credentials.digest(token)))


# --- register ---------------------------------------------------------------------------------


def test_a_runner_gets_the_oldest_pending_build_with_every_field(runner_api, ci, rt, project):
    variables = [{"key": "DB", "value": "postgres"}]
    spec = {**job("rspec"), "commands": "bundle\nrake spec", "options": {"image": "ruby:2.1", "artifacts": {"paths": ["out/"]}}, "variables": variables}
    pipeline_id = ci.pipeline(project, [spec, job("lint")])
    first, second = sorted(b.id for b in ci.all_builds(pipeline_id))
    token = runner_api.shared()
    response = runner_api.poll(token)
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == FIELDS
    build_token = body["token"]
    assert body["id"] == first and body["status"] == "running" and body["name"] == "rspec" and body["stage"] == "test"
    assert (body["ref"], body["tag"], body["sha"]) == ("master", False, "a" * 40)
    assert body["project_id"] == project.id and body["project_name"] == "Demo"
    assert body["commands"] == "bundle\nrake spec"
    assert body["repo_url"] == f"http://gitlab-ci-token:{build_token}@testserver/alice/demo.git"
    assert body["before_sha"] == "0" * 40 and body["allow_git_fetch"] is True and body["timeout"] == 3600
    assert body["options"] == {"image": "ruby:2.1", "artifacts": {"paths": ["out/"]}}
    assert body["variables"] == [
        {"key": "CI_BUILD_NAME", "value": "rspec", "public": True},
        {"key": "CI_BUILD_STAGE", "value": "test", "public": True},
        {"key": "DB", "value": "postgres", "public": True},
    ]
    assert body["depends_on_builds"] == []
    row = build_row(rt, first)
    assert row.status == "running" and row.runner_id == runner_row(rt, token).id and row.started_at is not None
    assert row.token_digest == credentials.digest(build_token)
    assert ci.status(pipeline_id) == "running"
    assert runner_api.poll(token).json()["id"] == second
    again = runner_api.poll(token)
    assert again.status_code == 404 and again.json() == {"message": "404 Not Found"}


@pytest.mark.parametrize("path", ["/ci/api/v1/builds/register", "/ci/api/v1/builds/register.json", "/api/v3/ci/builds/register"])
def test_every_path_and_a_form_body(runner_api, ci, project, api, path):
    ci.pipeline(project, [job("a")])
    response = api.anonymous.post(f"http://testserver{path}", data={"token": runner_api.shared()})
    assert response.status_code == 201 and response.json()["name"] == "a"


def test_unknown_runner_is_403_and_changes_nothing(runner_api, ci, rt, project, alice):
    pipeline_id = ci.pipeline(project, [job("a")])
    for body in ({"token": "nope"}, {}, {"token": alice.token}, {"token": runner_api.registration_token()}):
        response = runner_api.api.post(f"{V1}/builds/register", json=body)
        assert response.status_code == 403 and response.json() == {"message": "403 Forbidden"}
    assert [b.status for b in ci.all_builds(pipeline_id)] == ["pending"]


def test_a_paused_runner_gets_nothing(runner_api, ci, rt, project):
    pipeline_id = ci.pipeline(project, [job("a")])
    token = runner_api.shared()
    with rt.db.transaction() as session:
        session.execute(update(Runner).values(active=False))
    assert runner_api.poll(token).status_code == 404
    assert [b.status for b in ci.all_builds(pipeline_id)] == ["pending"]
    assert runner_row(rt, token).contacted_at is not None


def test_tags_must_be_a_subset_of_the_runners(runner_api, ci, project):
    pipeline_id = ci.pipeline(project, [job("tagged", tags=["docker"]), job("two", tags=["docker", "linux"]), job("plain")])
    ids = {b.name: b.id for b in ci.all_builds(pipeline_id)}
    untagged, docker, both = runner_api.shared(), runner_api.shared("docker"), runner_api.shared("linux,docker,gpu")
    assert runner_api.poll(untagged).json()["id"] == ids["plain"]
    assert runner_api.poll(untagged).status_code == 404
    assert runner_api.poll(docker).json()["id"] == ids["tagged"]
    assert runner_api.poll(docker).status_code == 404
    assert runner_api.poll(both).json()["id"] == ids["two"]


def test_specific_runners_take_only_their_projects_builds(runner_api, ci, projects, alice, project):
    other = projects.create(alice, name="Other")
    theirs = ci.pipeline(other, [job("elsewhere")], sha="b" * 40)
    mine = ci.pipeline(project, [job("here")])
    token = runner_api.specific(project)
    assert runner_api.poll(token).json()["id"] == ci.all_builds(mine)[0].id
    assert runner_api.poll(token).status_code == 404
    assert [b.status for b in ci.all_builds(theirs)] == ["pending"]


def test_shared_runners_skip_projects_that_refuse_them(runner_api, ci, rt, projects, alice, project):
    no_shared = projects.create(alice, name="NoShared")
    no_builds = projects.create(alice, name="NoBuilds")
    set_project(rt, no_shared, shared_runners_enabled=False)
    set_project(rt, no_builds, builds_enabled=False)
    ci.pipeline(no_shared, [job("a")])
    ci.pipeline(no_builds, [job("b")])
    taken = ci.pipeline(project, [job("c")])
    shared = runner_api.shared()
    assert runner_api.poll(shared).json()["id"] == ci.all_builds(taken)[0].id
    assert runner_api.poll(shared).status_code == 404
    assert runner_api.poll(runner_api.specific(no_shared)).json()["name"] == "a"
    assert runner_api.poll(runner_api.specific(no_builds)).status_code == 404


def test_shared_runners_turned_off_for_the_instance(runner_api, ci, rt, project):
    ci.pipeline(project, [job("a")])
    shared = runner_api.shared()
    with rt.db.transaction() as session:
        session.execute(update(ApplicationSetting).values(shared_runners_enabled=False))
    assert runner_api.poll(shared).status_code == 404
    assert runner_api.poll(runner_api.specific(project)).status_code == 201


def test_a_tag_build_and_its_dependencies(runner_api, ci, rt, project):
    ci.pipeline(project, [job("build", "build", 0), job("test", "test", 1)], ref="v1.0")
    with rt.db.transaction() as session:
        session.execute(update(Pipeline).values(tag=True, before_sha="c" * 40))
        session.execute(update(Build).values(tag=True))
    token = runner_api.shared()
    first = runner_api.poll(token).json()
    assert first["tag"] is True and first["variables"][0] == {"key": "CI_BUILD_TAG", "value": "v1.0", "public": True}
    assert first["before_sha"] == "c" * 40
    with rt.db.transaction() as session:
        session.execute(update(Build).where(Build.id == first["id"]).values(artifacts_file="out.zip", artifacts_size=12))
    assert ci.finish(first["id"], "success")
    second = runner_api.poll(token).json()
    assert second["name"] == "test"
    (dependency,) = second["depends_on_builds"]
    assert dependency == {
        "id": first["id"], "ref": "v1.0", "tag": True, "sha": "a" * 40, "status": "success", "name": "build",
        "token": second["token"], "stage": "build", "project_id": project.id, "project_name": "Demo",
        "artifacts_file": {"filename": "out.zip", "size": 12},
    }  # fmt: skip


def test_contact_and_info_are_written_only_when_stale_or_changed(runner_api, rt, project):
    token = runner_api.shared()
    assert runner_api.poll(token, info={"version": "1.0"}).status_code == 404
    first = runner_row(rt, token)
    assert first.contacted_at is not None and first.version == "1.0"
    assert runner_api.poll(token, info={"version": "1.0"}).status_code == 404
    assert runner_row(rt, token).contacted_at == first.contacted_at
    assert runner_api.poll(token, info={"version": "1.1"}).status_code == 404
    assert runner_row(rt, token).version == "1.1"
    with rt.db.transaction() as session:
        session.execute(update(Runner).values(contacted_at=utcnow() - dt.timedelta(minutes=5)))
    runner_api.poll(token)
    assert utcnow() - runner_row(rt, token).contacted_at < dt.timedelta(minutes=1)


def test_an_idle_poll_is_a_few_statements_whatever_the_queue(runner_api, ci, rt, project, monkeypatch):
    token = runner_api.shared("docker")
    runner_api.poll(token)
    for n in range(3):
        ci.pipeline(project, [job(f"j{i}", tags=["other"]) for i in range(40)], sha=f"{n}" * 40)
    batches = []
    fast_all = rt.db.fast_all
    monkeypatch.setattr(rt.db, "fast_all", lambda statement, params: batches.append(params["limit"]) or fast_all(statement, params))
    with QueryCounter(rt) as counter:
        assert runner_api.poll(token).status_code == 404
    # 120 builds the runner cannot take: batches of 32, 64 and 128 on the fast connection, and
    # nothing in a transaction (the contact is fresh)
    assert batches == [32, 64, 128]
    assert counter.statements == []


@pytest.mark.parametrize("earlier", [1, 6])
def test_a_claim_is_six_prepared_statements_whatever_its_dependencies(runner_api, ci, rt, project, earlier):
    pipeline_id = ci.pipeline(project, [*(job(f"b{i}", "build", 0) for i in range(earlier)), job("test", "test", 1)])
    token = runner_api.shared()
    for build in ci.all_builds(pipeline_id):
        runner_api.poll(token)  # the contact is fresh from here on
        ci.finish(build.id, "success")
    with QueryCounter(rt) as counter:
        body = runner_api.poll(token).json()
    assert body["name"] == "test" and len(body["depends_on_builds"]) == earlier
    # No session: runner, candidates; then in one transaction the claim, the project, the pipeline
    # set running, the earlier builds.
    assert counter.statements == []
    assert [sql.split()[0] for sql in counter.fast] == ["SELECT", "SELECT", "UPDATE", "SELECT", "UPDATE", "SELECT"]


# --- update -----------------------------------------------------------------------------------


@pytest.fixture
def running(runner_api, ci, project):
    """(runner token, job) of a running build."""
    ci.pipeline(project, [job("a"), job("b")])
    token = runner_api.shared()
    return token, runner_api.poll(token).json()


def put(runner_api, build_id, path=V1, **body):
    return runner_api.api.put(f"{path}/builds/{build_id}", json=body)


def test_update_replaces_the_trace_then_finishes(runner_api, rt, running):
    token, job_ = running
    response = put(runner_api, job_["id"], token=token, state="running", trace="first\n")
    assert response.status_code == 200 and response.json() is None
    assert put(runner_api, job_["id"], token=token, trace="second\x1b[0m\n").json() is None
    build = build_row(rt, job_["id"])
    assert build.status == "running" and traces.read(rt, build) == b"second\x1b[0m\n"
    done = put(runner_api, job_["id"], "http://testserver/api/v3/ci", token=token, state="success", trace="all done\n")
    assert done.status_code == 200 and done.json() is True
    build = build_row(rt, job_["id"])
    assert build.status == "success" and build.finished_at is not None and build.token_digest is None
    assert traces.read(rt, build) == b"all done\n"
    late = put(runner_api, job_["id"], token=token, state="failed")
    assert late.status_code == 404 and late.headers["build-status"] == "success"
    assert build_row(rt, job_["id"]).status == "success"


def test_failed(runner_api, rt, running):
    token, job_ = running
    assert put(runner_api, job_["id"], token=token, state="failed").json() is True
    assert build_row(rt, job_["id"]).status == "failed"


def test_update_finds_only_this_runners_running_build(runner_api, ci, rt, running, project):
    token, job_ = running
    other = runner_api.shared()
    assert put(runner_api, job_["id"], token=other, state="success").status_code == 404
    assert put(runner_api, job_["id"], token="nope", state="success").status_code == 403
    assert put(runner_api, 10**6, token=token).json() == {"message": "404 Not found"}
    assert put(runner_api, 10**12, token=token).status_code == 404
    pending = next(b for b in ci.all_builds(build_row(rt, job_["id"]).pipeline_id) if b.status == "pending")
    assert put(runner_api, pending.id, token=token, state="success").status_code == 404
    assert build_row(rt, pending.id).status == "pending" and build_row(rt, job_["id"]).status == "running"


def test_a_canceled_build_tells_its_runner(runner_api, ci, rt, running):
    token, job_ = running
    assert ci.finish(job_["id"], "canceled")
    response = put(runner_api, job_["id"], token=token, trace="more", state="success")
    assert response.status_code == 404 and response.headers["build-status"] == "canceled"
    build = build_row(rt, job_["id"])
    assert build.status == "canceled" and traces.read(rt, build) == b""
    patch = runner_api.api.request("PATCH", f"{V1}/builds/{job_['id']}/trace.txt", content=b"x",
                                   headers={"BUILD-TOKEN": job_["token"], "Content-Range": "0-0"})  # fmt: skip
    assert patch.status_code == 403


def test_a_trace_over_the_limit_is_refused(runner_api, rt, running, monkeypatch):
    token, job_ = running
    monkeypatch.setattr(traces, "MAX_SIZE", 1000)
    response = put(runner_api, job_["id"], token=token, trace="x" * 1001, state="success")
    assert response.status_code == 413
    build = build_row(rt, job_["id"])
    assert build.status == "running" and build.trace_size == 0


# --- trace appends ----------------------------------------------------------------------------


def patch(runner_api, build_id, data: bytes, content_range: str | None, path=V1, **headers):
    if content_range is not None:
        headers["Content-Range"] = content_range
    return runner_api.api.request("PATCH", f"{path}/builds/{build_id}/trace.txt", content=data, headers=headers)


def test_appends_with_content_range(runner_api, rt, running):
    _token, job_ = running
    build_id, token = job_["id"], job_["token"]
    first = patch(runner_api, build_id, b"hello ", "0-5", **{"BUILD-TOKEN": token})
    assert first.status_code == 202 and first.headers["build-status"] == "running" and first.headers["range"] == "0-6"
    second = runner_api.api.request("PATCH", f"http://testserver/api/v3/ci/builds/{build_id}/trace.txt?token={token}",
                                    content=b"world\n", headers={"Content-Range": "6-11"})  # fmt: skip
    assert second.status_code == 202 and second.headers["range"] == "0-12"
    stale = patch(runner_api, build_id, b"again", "0-4", **{"BUILD-TOKEN": token})
    assert stale.status_code == 416 and stale.headers["range"] == "0-12"
    assert traces.read(rt, build_row(rt, build_id)) == b"hello world\n"


def test_append_needs_the_range_and_the_build_token(runner_api, rt, running):
    token, job_ = running
    build_id = job_["id"]
    missing = patch(runner_api, build_id, b"x", None, **{"BUILD-TOKEN": job_["token"]})
    assert missing.status_code == 400 and missing.json() == {"message": "400 Missing header Content-Range"}
    assert patch(runner_api, build_id, b"x", "a-b", **{"BUILD-TOKEN": job_["token"]}).status_code == 400
    assert patch(runner_api, build_id, b"x", "0-0", **{"BUILD-TOKEN": token}).status_code == 403  # the runner's token is not the build's
    assert patch(runner_api, build_id, b"x", "0-0").status_code == 403
    assert patch(runner_api, 10**6, b"x", "0-0", **{"BUILD-TOKEN": job_["token"]}).status_code == 404
    assert build_row(rt, build_id).trace_size == 0
