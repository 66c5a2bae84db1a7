"""Project settings pages: members, webhooks with their deliveries and redeliver, protected
branches; masters, owners and admins only, checked and changed like the API."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from codeyard.db.models import HookDelivery, Job, ProjectHook
from tests.support import WorkingCopy, make_team


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    team = make_team(users, projects, admin, 0)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first", {"a.txt": "a\n"})
    work.git("branch", "release")
    work.push("master", "release")
    return SimpleNamespace(project=team.project, user=team.user, url="/" + team.project.path_with_namespace)


def _members(api, team):
    found = api.as_(team.user("owner")).get(f"/projects/{team.project.id}/members").json()
    return {member["username"]: member["access_level"] for member in found}


def test_add_and_remove_a_member(api, team, browser_for, users):
    newcomer = users.create("newcomer")
    client = browser_for(team.user("master"))
    page = f"{team.url}/project_members"
    assert "reporter" in client.get(page).text
    response = client.post(page, {"username": "newcomer", "access_level": "30"}, token=client.form_token(page))
    assert response.status_code == 303
    assert _members(api, team)["newcomer"] == 30
    bad = client.post(page, {"username": "newcomer", "access_level": "35"}, token=client.form_token(page))
    assert bad.status_code == 400 and "access_level" in bad.text
    assert client.post(page, {"username": "ghost", "access_level": "30"}, token=client.form_token(page)).status_code == 404
    removed = client.post(f"{page}/{newcomer.id}/remove", token=client.form_token(page))
    assert removed.status_code == 303 and "newcomer" not in _members(api, team)


def test_developers_cannot_change_settings(api, team, browser_for, users, rt):
    users.create("newcomer")
    client = browser_for(team.user("developer"))
    token = client.form_token("/")
    assert client.post(f"{team.url}/project_members", {"username": "newcomer", "access_level": "30"}, token=token).status_code == 403
    assert client.post(f"{team.url}/hooks", {"url": "https://hooks.example/"}, token=token).status_code == 403
    assert client.post(f"{team.url}/protected_branches", {"name": "release"}, token=token).status_code == 403
    assert "newcomer" not in _members(api, team)
    with rt.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(ProjectHook)) == 0


def test_hooks_add_validate_list_and_remove(api, team, browser_for, rt):
    client = browser_for(team.user("owner"))
    page = f"{team.url}/hooks"
    response = client.post(page, {"url": "https://hooks.example/in", "merge_requests_events": "1", "token": "s3cret"},
                           token=client.form_token(page))  # fmt: skip
    assert response.status_code == 303
    [hook] = api.as_(team.user("owner")).get(f"/projects/{team.project.id}/hooks").json()
    assert hook["url"] == "https://hooks.example/in"
    assert hook["merge_requests_events"] == "true" and hook["push_events"] == "false"
    listing = client.get(page).text
    assert "https://hooks.example/in" in listing and "s3cret" not in listing
    for bad in ("ftp://hooks.example/", "not a url", "http://127.0.0.1/x"):
        refused = client.post(page, {"url": bad}, token=client.form_token(page))
        assert refused.status_code == 400, bad
    assert len(api.as_(team.user("owner")).get(f"/projects/{team.project.id}/hooks").json()) == 1
    removed = client.post(f"{page}/{hook['id']}/remove", token=client.form_token(page))
    assert removed.status_code == 303
    assert api.as_(team.user("owner")).get(f"/projects/{team.project.id}/hooks").json() == []


def test_delivery_log_and_redeliver(api, team, browser_for, rt):
    created = api.as_(team.user("owner")).post(f"/projects/{team.project.id}/hooks", json={"url": "https://hooks.example/in"})
    hook_id = created.json()["id"]
    with rt.db.transaction() as session:
        session.add(HookDelivery(hook_id=hook_id, delivery="7f1c8f7e-0000-4000-8000-000000000001", event="Push Hook",
                                 attempt=1, url="https://hooks.example/in", request_headers={}, request_body="{}",
                                 response_status=502, duration=0.25))  # fmt: skip
    with rt.db.transaction() as session:
        delivery_id = session.scalar(select(HookDelivery.id))
        jobs_before = session.scalar(select(func.count()).select_from(Job))
    client = browser_for(team.user("master"))
    page = f"{team.url}/hooks/{hook_id}"
    text = client.get(page).text
    assert "Push Hook" in text and "502" in text and "250 ms" in text
    response = client.post(f"{page}/deliveries/{delivery_id}/redeliver", token=client.form_token(page))
    assert response.status_code == 303
    with rt.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Job)) == jobs_before + 1
    assert client.post(f"{page}/deliveries/999999/redeliver", token=client.form_token(page)).status_code == 404
    assert client.get(f"{team.url}/hooks/999999").status_code == 404


def test_protect_and_unprotect_a_branch(api, team, browser_for):
    client = browser_for(team.user("master"))
    page = f"{team.url}/protected_branches"
    response = client.post(page, {"name": "release", "developers_can_push": "1"}, token=client.form_token(page))
    assert response.status_code == 303
    branch = api.as_(team.user("owner")).get(f"/projects/{team.project.id}/repository/branches/release").json()
    assert branch["protected"] is True and branch["developers_can_push"] is True
    assert "release" in client.get(page).text
    assert client.post(page, {"name": "nope"}, token=client.form_token(page)).status_code == 404
    assert client.post(page, {"name": "-bad"}, token=client.form_token(page)).status_code == 400
    undone = client.post(page + "/unprotect", {"name": "release"}, token=client.form_token(page))
    assert undone.status_code == 303
    branch = api.as_(team.user("owner")).get(f"/projects/{team.project.id}/repository/branches/release").json()
    assert branch["protected"] is False
