"""Runner registration and deletion (reference 12.1): /ci/api/v1/runners/register|delete and the
same under /api/v3/ci/; the instance's registration token and projects' runners tokens."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from codeyard.db.models import ApplicationSetting, Project, Runner, RunnerProject
from codeyard.services import credentials, projects
from codeyard.services.ci import runners

V1 = "http://testserver/ci/api/v1"


def registration_token(rt) -> str:
    with rt.db.transaction() as session:
        return runners.registration_token(session, rt)


def runners_token(rt, project) -> str:
    with rt.db.session() as session:
        return projects.runners_token(rt.secret_key, session.get(Project, project.id))


def all_runners(rt) -> list[Runner]:
    with rt.db.session() as session:
        return list(session.scalars(select(Runner).order_by(Runner.id)))


def assignments(rt) -> list[tuple[int, int]]:
    with rt.db.session() as session:
        return [(row.runner_id, row.project_id) for row in session.scalars(select(RunnerProject))]


def test_shared_runner_registers_with_the_registration_token(api, rt):
    token = registration_token(rt)
    response = api.anonymous.post(f"{V1}/runners/register", json={
        "token": token, "description": "build box", "tag_list": "docker, linux , ,docker",
        "info": {"name": "gitlab-ci-multi-runner", "version": "1.1.0", "platform": "linux", "architecture": "amd64", "other": "x"},
    })  # fmt: skip
    assert response.status_code == 201, response.text
    body = response.json()
    assert set(body) == {"id", "token"} and len(body["token"]) == 20
    (runner,) = all_runners(rt)
    assert runner.id == body["id"] and runner.is_shared and runner.active
    assert runner.description == "build box" and runner.tag_list == ["docker", "linux"]
    assert (runner.name, runner.version, runner.platform, runner.architecture) == ("gitlab-ci-multi-runner", "1.1.0", "linux", "amd64")
    assert runner.token_digest == credentials.digest(body["token"]) and body["token"] not in runner.token_digest
    assert assignments(rt) == []


def test_specific_runner_registers_with_a_projects_runners_token(api, rt, project):
    response = api.anonymous.post("/ci/runners/register", data={"token": runners_token(rt, project), "tag_list[]": ["a", "b"]})
    assert response.status_code == 201, response.text
    (runner,) = all_runners(rt)
    assert not runner.is_shared and runner.tag_list == ["a", "b"]
    assert assignments(rt) == [(runner.id, project.id)]


@pytest.mark.parametrize("path", ["/runners/register", "/runners/register.json"])
def test_form_body_and_json_suffix(api, rt, path):
    response = api.anonymous.post(f"{V1}{path}", data={"token": registration_token(rt), "info[revision]": "abc"})
    assert response.status_code == 201
    assert all_runners(rt)[0].revision == "abc"


def test_unknown_token_is_403_and_registers_nothing(api, rt, project, alice):
    registration_token(rt)
    for token in ("nope", credentials.digest(runners_token(rt, project)), alice.token):
        response = api.anonymous.post(f"{V1}/runners/register", json={"token": token})
        assert response.status_code == 403 and response.json() == {"message": "403 Forbidden"}
    assert all_runners(rt) == []


def test_missing_token_is_400(api, rt):
    for body in ({}, {"token": ""}, {"description": "x"}):
        response = api.anonymous.post(f"{V1}/runners/register", json=body)
        assert response.status_code == 400 and response.json() == {"message": '400 (Bad request) "token" not given'}
    assert all_runners(rt) == []


def test_bad_fields_are_400(api, rt):
    token = registration_token(rt)
    assert api.anonymous.post(f"{V1}/runners/register", json={"token": token, "tag_list": {"a": 1}}).status_code == 400
    assert api.anonymous.post(f"{V1}/runners/register", json={"token": token, "description": "x" * 256}).status_code == 400
    assert api.anonymous.post(f"{V1}/runners/register", json={"token": token, "description": "a\nb"}).status_code == 400
    assert all_runners(rt) == []


def test_tags_are_bounded(api, rt):
    tags = ",".join(f"t{n}" for n in range(80))
    assert api.anonymous.post(f"{V1}/runners/register", json={"token": registration_token(rt), "tag_list": tags}).status_code == 201
    assert len(all_runners(rt)[0].tag_list) == runners.MAX_TAGS


def test_delete_runner(api, rt, project):
    token = api.anonymous.post(f"{V1}/runners/register", json={"token": runners_token(rt, project), "description": "d"}).json()["token"]
    response = api.anonymous.delete(f"{V1}/runners/delete", params={"token": token})
    assert response.status_code == 200
    assert response.json()["description"] == "d" and response.json()["is_shared"] is False
    assert all_runners(rt) == [] and assignments(rt) == []
    again = api.anonymous.delete("/ci/runners/delete", params={"token": token})
    assert again.status_code == 403
    assert api.anonymous.delete(f"{V1}/runners/delete").status_code == 400


def test_registration_token_is_derived_and_stored_as_a_digest(rt):
    first = registration_token(rt)
    assert first == registration_token(rt) and len(first) == 20
    with rt.db.session() as session:
        row = session.get(ApplicationSetting, 1)
        assert row.runners_registration_token_digest == credentials.digest(first)
        assert first not in (row.runners_registration_token_nonce or "")
    with rt.db.transaction() as session:
        second = runners.registration_token(session, rt, reset=True)
    assert second != first and registration_token(rt) == second


def test_registration_token_from_the_environment(api, rt):
    configured = SimpleNamespace(config=rt.config.with_overrides(runner_token="given-by-the-operator"), secret_key=rt.secret_key)
    with rt.db.transaction() as session:
        assert runners.registration_token(session, configured) is None
        assert runners.registration_token(session, configured) is None  # not shown: it is not stored
    ok = api.anonymous.post(f"{V1}/runners/register", json={"token": "given-by-the-operator"})
    assert ok.status_code == 201 and all_runners(rt)[0].is_shared
    with rt.db.transaction() as session:  # the operator may still replace it
        fresh = runners.registration_token(session, configured, reset=True)
    assert api.anonymous.post(f"{V1}/runners/register", json={"token": "given-by-the-operator"}).status_code == 403
    assert api.anonymous.post(f"{V1}/runners/register", json={"token": fresh}).status_code == 201


def test_user_credentials_do_not_register(api, rt, admin):
    response = api.as_(admin).post(f"{V1}/runners/register", json={})
    assert response.status_code == 400
    with rt.db.session() as session:
        assert session.scalar(select(func.count()).select_from(Runner)) == 0
