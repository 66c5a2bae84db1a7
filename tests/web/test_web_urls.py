"""Every `web_url` the API returns, and every link a hook payload carries, resolves to a page."""

from __future__ import annotations

import json

from sqlalchemy import select

from codeyard.db.models import Job
from tests.builds.conftest import CiFactory, job
from tests.support import WorkingCopy

BASE = "http://testserver"


def _links(value) -> set[str]:
    """Every string under a `web_url`, `url` or `homepage` key that points into the service."""
    found = set()

    def walk(item, key=None):
        if isinstance(item, dict):
            for name, child in item.items():
                walk(child, name)
        elif isinstance(item, list):
            for child in item:
                walk(child, key)
        elif isinstance(item, str) and key in ("web_url", "url", "homepage") and item.startswith(BASE + "/"):
            found.add(item)

    walk(value)
    return found


def test_every_web_url_resolves(api, users, projects, rt, tmp_path, browser_for, admin):
    alice = users.create("alice")
    bob = users.create("bob")
    group = projects.group(alice, "team", visibility=10)
    project = projects.create(alice, group=group, name="app", visibility=10)
    personal = projects.create(alice, name="mine")
    projects.add_member(project, bob, 30)
    as_alice = api.as_(alice)
    as_alice.post(f"/projects/{project.id}/hooks", json={"url": "https://hooks.example/", "push_events": True,
                                                         "merge_requests_events": True, "note_events": True,
                                                         "build_events": True})  # fmt: skip
    work = WorkingCopy(rt, project, tmp_path / "work")
    first = work.commit("first", {"a.txt": "a\n"})
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature", {"b.txt": "b\n"})
    work.push("master", "feature")
    mr = api.as_(bob).post(f"/projects/{project.id}/merge_requests",
                           json={"source_branch": "feature", "target_branch": "master", "title": "Feature"}).json()  # fmt: skip
    api.as_(bob).post(f"/projects/{project.id}/merge_requests/{mr['id']}/comments", json={"note": "hi"})
    api.as_(alice).post(f"/projects/{project.id}/repository/branches", json={"branch_name": "from-api", "ref": "master"})
    ci = CiFactory(rt)
    build = ci.builds(ci.pipeline(project, [job("rspec")], sha=first))["rspec"]
    ci.run(build.id)  # the Build Hook fires

    responses = [
        as_alice.get("/user"), as_alice.get(f"/users/{bob.id}"), as_alice.get("/users"),
        as_alice.get("/projects"), as_alice.get(f"/projects/{project.id}"), as_alice.get(f"/projects/{personal.id}"),
        as_alice.get(f"/projects/{project.id}/members"), as_alice.get(f"/groups/{group.id}"), as_alice.get("/groups"),
        as_alice.get(f"/groups/{group.id}/members"), as_alice.get(f"/projects/{project.id}/merge_requests"),
        as_alice.get(f"/projects/{project.id}/merge_requests/{mr['id']}/comments"),
        as_alice.get(f"/projects/{project.id}/events"),
        as_alice.get(f"/projects/{project.id}/builds"), as_alice.get(f"/projects/{project.id}/builds/{build.id}"),
        as_alice.get(f"/projects/{project.id}/repository/commits/{first}/statuses"),
    ]  # fmt: skip
    links = set()
    for response in responses:
        assert response.status_code == 200, response.request.url
        links |= _links(response.json())
    hooks = set()
    with rt.db.transaction() as session:
        for payload in session.scalars(select(Job.payload)):
            if isinstance(payload, dict) and "body" in payload:
                links |= _links(json.loads(payload["body"]))
                hooks.add(json.loads(payload["body"]).get("object_kind"))
    assert {"push", "merge_request", "note", "build"} <= hooks, hooks
    kinds = {link.removeprefix(BASE).split("/")[1] for link in links}
    assert {"u", "groups", "team", "alice"} <= kinds, links
    assert any("/merge_requests/" in link for link in links), links
    assert any("/commit/" in link for link in links), links
    client = browser_for(admin)
    for link in sorted(links):
        assert client.get(link.removeprefix(BASE)).status_code == 200, link
