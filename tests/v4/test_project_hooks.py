"""v4 project hooks: list, get, add, edit, delete; JSON booleans and v4's flag names; tests of one
event delivered for real to a receiver on loopback; the hook's events; permissions; bad input."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from codeyard.db.models import ProjectHook
from codeyard.jobs.worker import Worker
from codeyard.services import settings as settings_service

from ..receiver import Receiver
from ..support import WorkingCopy, make_team, record_push

PUBLIC = 20
ZERO = "0" * 40


@pytest.fixture
def owner(users):
    return users.create("owner")


@pytest.fixture
def project(projects, owner):
    return projects.create(owner, name="demo")


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


@pytest.fixture
def local_allowed(rt):
    with rt.db.transaction() as session:
        settings_service.update(session, {"allow_local_requests_from_hooks": True})


def run_jobs(rt) -> int:
    return Worker(rt, backoff=0).run_until_idle()


def stored(rt, project) -> list[ProjectHook]:
    with rt.db.session() as session:
        rows = list(session.scalars(select(ProjectHook).where(ProjectHook.project_id == project.id).order_by(ProjectHook.id)))
        session.expunge_all()
        return rows


def test_add_through_the_client(gl, rt, owner, project):
    hook = gl(owner).projects.get(project.id, lazy=True).hooks.create(
        {"url": "http://example.com/hook", "job_events": True, "merge_requests_events": True, "push_events": False,
         "pipeline_events": True, "token": "s3cret"}
    )  # fmt: skip
    assert hook.url == "http://example.com/hook" and hook.project_id == project.id
    assert hook.job_events is True and hook.merge_requests_events is True and hook.push_events is False
    assert hook.pipeline_events is False  # never sent: not stored
    assert hook.enable_ssl_verification is True and hook.alert_status == "executable"
    assert "token" not in hook.attributes and hook.created_at.endswith("Z")
    [row] = stored(rt, project)
    assert row.build_events is True and row.push_events is False and row.token == "s3cret"


def test_list_get_edit_delete(gl, api4, rt, owner, project):
    client = gl(owner)
    hooks = client.projects.get(project.id, lazy=True).hooks
    first = hooks.create({"url": "http://example.com/1"})
    hooks.create({"url": "http://example.com/2", "note_events": True})
    assert [h.url for h in hooks.list(get_all=True)] == ["http://example.com/1", "http://example.com/2"]
    got = hooks.get(first.id)
    assert got.push_events is True and got.note_events is False
    got.url = "http://example.com/changed"
    got.tag_push_events = True
    got.save()
    again = hooks.get(first.id)
    assert again.url == "http://example.com/changed" and again.tag_push_events is True
    assert stored(rt, project)[0].token is None
    response = api4.as_(owner).delete(f"/projects/{project.id}/hooks/{first.id}")
    assert response.status_code == 204 and response.content == b""
    assert api4.as_(owner).delete(f"/projects/{project.id}/hooks/{first.id}").status_code == 404
    assert api4.as_(owner).get(f"/projects/{project.id}/hooks/{first.id}").status_code == 404
    assert len(stored(rt, project)) == 1


def test_a_hook_of_another_project_is_not_found(api4, owner, project, projects):
    other = projects.create(owner, name="other")
    hook = api4.as_(owner).post(f"/projects/{other.id}/hooks", json={"url": "http://example.com/x"}).json()
    for method in ("get", "put", "delete"):
        response = getattr(api4.as_(owner), method)(f"/projects/{project.id}/hooks/{hook['id']}", json={"url": "http://a.example"})
        assert response.status_code == 404, method
    assert api4.as_(owner).post(f"/projects/{project.id}/hooks/{hook['id']}/test/push_events").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": "javascript:alert(1)"}, "url"),
        ({"url": "http://example.com", "push_events": "maybe"}, "push_events"),
        ({"url": "http://example.com", "push_events_branch_filter": "main"}, "push_events_branch_filter"),
        ({"url": "http://example.com", "branch_filter_strategy": "regex"}, "branch_filter_strategy"),
        ({"url": "http://example.com", "token": "a\nb"}, "token"),
        ({"url": "http://127.0.0.1/x"}, "url"),
    ],
)
def test_bad_input_changes_nothing(api4, rt, owner, project, body, field):
    response = api4.as_(owner).post(f"/projects/{project.id}/hooks", json=body)
    assert response.status_code == 400, response.text
    assert field in response.text
    assert stored(rt, project) == []


@pytest.mark.parametrize("visibility", [0, PUBLIC])
def test_hooks_are_for_maintainers_owners_and_admins(api4, users, projects, admin, visibility):
    team = make_team(users, projects, admin, visibility)
    base = f"/projects/{team.project.id}/hooks"
    hook = api4.as_(team.user("owner")).post(base, json={"url": "http://example.com/h"}).json()
    for role in ("outsider", "guest", "reporter", "developer", "master", "owner", "admin"):
        response = api4.as_(team.user(role)).get(base)
        if role in ("master", "owner", "admin"):
            assert response.status_code == 200 and len(response.json()) == 1, role
        elif role == "outsider" and visibility == 0:
            assert response.status_code == 404, role
        else:
            assert response.status_code == 403, role
            assert api4.as_(team.user(role)).post(f"{base}/{hook['id']}/test/push_events").status_code == 403
            assert api4.as_(team.user(role)).delete(f"{base}/{hook['id']}").status_code == 403
    assert api4.anonymous.get(base).status_code == 401


def test_push_test_sends_the_latest_push_for_real(gl, api4, rt, owner, project, receiver, local_allowed, tmp_path):
    hook = gl(owner).projects.get(project.id, lazy=True).hooks.create({"url": receiver.url(), "push_events": False})
    hook.test("push_events")
    run_jobs(rt)
    sample = receiver.requests[-1]
    assert sample.headers["x-gitlab-event"] == "Push Hook" and sample.json["commits"] == []
    work = WorkingCopy(rt, project, tmp_path / "work")
    sha = work.commit("first")
    work.git("tag", "v1")
    work.push("master", "v1")
    record_push(rt, project, owner, ("refs/heads/master", ZERO, sha), ("refs/tags/v1", ZERO, sha))
    run_jobs(rt)
    assert len(receiver.requests) == 1  # push_events is off
    hook.test("push_events")
    run_jobs(rt)
    assert receiver.requests[-1].json["after"] == sha and receiver.requests[-1].json["object_kind"] == "push"
    response = api4.as_(owner).post(f"/projects/{project.id}/hooks/{hook.id}/test/tag_push_events")
    assert response.status_code == 201 and response.json()["event"] == "Tag Push Hook"
    run_jobs(rt)
    assert receiver.requests[-1].json["ref"] == "refs/tags/v1"
    assert receiver.requests[-1].headers["x-codeyard-delivery"] == response.json()["delivery"]
    events = api4.as_(owner).get(f"/projects/{project.id}/hooks/{hook.id}/events").json()
    assert [e["trigger"] for e in events] == ["tag_push_hooks", "push_hooks", "push_hooks"]
    assert events[0]["response_status"] == "200" and events[0]["request_data"]["ref"] == "refs/tags/v1"
    assert events[0]["request_headers"]["X-Gitlab-Event"] == "Tag Push Hook"


def test_tests_that_need_what_the_project_lacks(api4, gl, gitlab, owner, project):
    hook = api4.as_(owner).post(f"/projects/{project.id}/hooks", json={"url": "http://example.com/h"}).json()
    base = f"/projects/{project.id}/hooks/{hook['id']}/test"
    for trigger, message in (("tag_push_events", "Ensure the project has tags."),
                             ("merge_requests_events", "Ensure the project has merge requests."),
                             ("note_events", "Ensure the project has notes."), ("job_events", "Ensure the project has jobs.")):  # fmt: skip
        response = api4.as_(owner).post(f"{base}/{trigger}")
        assert response.status_code == 422 and response.json()["message"] == message, trigger
    assert api4.as_(owner).post(f"{base}/pipeline_events").status_code == 422
    assert api4.as_(owner).post(f"{base}/nonsense").status_code == 400
    with pytest.raises(gitlab.exceptions.GitlabHookTestError):
        gl(owner).projects.get(project.id, lazy=True).hooks.get(hook["id"], lazy=True).test("tag_push_events")


def test_merge_request_and_note_tests(api4, rt, owner, project, receiver, local_allowed, tmp_path):
    work = WorkingCopy(rt, project, tmp_path / "work")
    sha = work.commit("first")
    work.push("master")
    record_push(rt, project, owner, ("refs/heads/master", ZERO, sha))
    work.git("checkout", "-q", "-b", "feature")
    feature = work.commit("feature")
    work.push("feature")
    record_push(rt, project, owner, ("refs/heads/feature", ZERO, feature))
    v3 = api4.client.post(f"/api/v3/projects/{project.id}/merge_requests", headers={"PRIVATE-TOKEN": owner.token},
                          json={"source_branch": "feature", "target_branch": "master", "title": "A change"})  # fmt: skip
    assert v3.status_code in (200, 201), v3.text
    hook = api4.as_(owner).post(f"/projects/{project.id}/hooks", json={"url": receiver.url()}).json()
    base = f"/projects/{project.id}/hooks/{hook['id']}/test"
    assert api4.as_(owner).post(f"{base}/merge_requests_events").status_code == 201
    run_jobs(rt)
    sent = receiver.requests[-1]
    assert sent.headers["x-gitlab-event"] == "Merge Request Hook" and sent.json["object_attributes"]["title"] == "A change"
    note = api4.client.post(f"/api/v3/projects/{project.id}/merge_requests/{v3.json()['id']}/notes",
                            headers={"PRIVATE-TOKEN": owner.token}, json={"body": "looks good"})  # fmt: skip
    assert note.status_code == 201, note.text
    assert api4.as_(owner).post(f"{base}/note_events").status_code == 201
    run_jobs(rt)
    assert receiver.requests[-1].json["object_attributes"]["note"] == "looks good"
