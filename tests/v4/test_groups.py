"""v4 groups: list and its filters, one group, create, edit, delete, and who may do each."""

from __future__ import annotations

import pytest

from ..support import QueryCounter

GROUP_KEYS = {
    "id", "web_url", "name", "path", "description", "visibility", "share_with_group_lock",
    "require_two_factor_authentication", "two_factor_grace_period", "project_creation_level",
    "auto_devops_enabled", "subgroup_creation_level", "emails_disabled", "emails_enabled", "mentions_disabled",
    "lfs_enabled", "default_branch", "avatar_url", "request_access_enabled", "full_name", "full_path",
    "created_at", "parent_id",
}  # fmt: skip


def test_create_through_the_client(gl, alice):
    group = gl(alice).groups.create({"name": "My Team", "path": "my-team", "visibility": "internal", "description": "d"})
    assert (group.name, group.path, group.visibility, group.description) == ("My Team", "my-team", "internal", "d")
    assert group.full_path == "my-team" and group.parent_id is None
    assert group.web_url.endswith("/groups/my-team") and group.created_at.endswith("Z")
    members = group.members.list()
    assert [(m.username, m.access_level) for m in members] == [("alice", 50)]


def test_create_refusals(api4, alice, users, projects):
    projects.group(alice, "taken")
    client = api4.as_(alice)
    taken = client.post("/groups", json={"name": "Taken", "path": "TAKEN"})
    assert (taken.status_code, taken.json()) == (400, {"message": {"path": ["has already been taken"]}})
    assert client.post("/groups", json={"name": "User", "path": "alice"}).status_code == 400
    assert client.post("/groups", json={"name": "X", "path": "x", "visibility": "secret"}).status_code == 400
    assert client.post("/groups", json={"name": "X", "path": "-bad."}).status_code == 400
    assert client.post("/groups", json={"name": "X", "path": "x", "parent_id": 1}).status_code == 400
    assert client.post("/groups", json={"name": "X"}).json() == {"error": "path is missing"}
    cannot = users.create("nogroups", can_create_group=False)
    assert api4.as_(cannot).post("/groups", json={"name": "N", "path": "n"}).status_code == 403
    assert api4.anonymous.post("/groups", json={"name": "N", "path": "n"}).status_code == 401


def test_create_takes_query_string_parameters(api4, alice):
    response = api4.as_(alice).post("/groups?name=Q&path=qgroup&visibility=public")
    assert response.status_code == 201 and response.json()["visibility"] == "public"


def test_shape(api4, alice, projects):
    group = projects.group(alice, "shape", visibility=20)
    body = api4.as_(alice).get(f"/groups/{group.id}").json()
    assert set(body) >= GROUP_KEYS and "projects" not in body
    assert body["visibility"] == "public"
    listed = api4.as_(alice).get("/groups").json()
    assert set(listed[0]) == GROUP_KEYS
    assert api4.as_(alice).get("/groups/shape").json()["id"] == group.id


@pytest.mark.parametrize(
    "visibility, outsider_reads", [(0, False), (10, True), (20, True)]
)
def test_who_reads_a_group(api4, users, alice, admin, projects, visibility, outsider_reads):
    group = projects.group(alice, "g", visibility=visibility)
    outsider, external, guest = users.create("outsider"), users.create("ext", external=True), users.create("guest")
    projects.add_group_member(group, guest, 10)
    assert api4.as_(guest).get(f"/groups/{group.id}").status_code == 200
    assert api4.as_(admin).get(f"/groups/{group.id}").status_code == 200
    assert api4.as_(outsider).get(f"/groups/{group.id}").status_code == (200 if outsider_reads else 404)
    assert api4.as_(external).get(f"/groups/{group.id}").status_code == (200 if visibility == 20 else 404)
    if not outsider_reads:
        assert api4.as_(outsider).get(f"/groups/{group.id}").json() == {"message": "404 Group Not Found"}


def test_list_filters(gl, users, alice, admin, projects):
    projects.group(alice, "mine")
    member = projects.group(admin, "member")
    developer = projects.group(admin, "developer")
    projects.group(admin, "open", visibility=20)
    projects.group(admin, "internal", visibility=10)
    projects.group(admin, "private")
    projects.add_group_member(member, alice, 10)
    projects.add_group_member(developer, alice, 30)
    client = gl(alice)
    assert sorted(g.path for g in client.groups.list()) == ["developer", "member", "mine"]
    assert [g.path for g in client.groups.list(owned=True)] == ["mine"]
    assert sorted(g.path for g in client.groups.list(min_access_level=30)) == ["developer", "mine"]
    available = sorted(g.path for g in client.groups.list(all_available=True))
    assert available == ["developer", "internal", "member", "mine", "open"]
    external = users.create("ext", external=True)
    assert [g.path for g in gl(external).groups.list(all_available=True)] == ["open"]
    assert len(gl(admin).groups.list(get_all=True)) == 6
    assert [g.path for g in gl(admin).groups.list(all_available=False, get_all=True)] == sorted(
        ["member", "developer", "open", "internal", "private"]
    )
    assert [g.id for g in client.groups.list(search="ELOP")] == [developer.id]


def test_list_order_and_paging(api4, alice, projects):
    for path in ("bbb", "aaa", "ccc"):
        projects.group(alice, path, name=path.upper())
    response = api4.as_(alice).get("/groups", params={"per_page": 2})
    assert [g["path"] for g in response.json()] == ["aaa", "bbb"]
    assert response.headers["x-total"] == "3" and response.headers["x-total-pages"] == "2"
    assert "page=2" in response.headers["link"]
    by_id = api4.as_(alice).get("/groups", params={"order_by": "id", "sort": "desc"}).json()
    assert [g["path"] for g in by_id] == ["ccc", "aaa", "bbb"]
    assert api4.as_(alice).get("/groups", params={"order_by": "size"}).status_code == 400
    assert api4.as_(alice).get("/groups", params={"min_access_level": 35}).status_code == 400


def test_edit_by_owner_only(gl, api4, users, alice, admin, projects):
    group = projects.group(alice, "edit-me")
    maintainer = users.create("maint")
    projects.add_group_member(group, maintainer, 40)
    found = gl(alice).groups.get(group.id)
    found.description = "new words"
    found.visibility = "internal"
    found.save()
    again = gl(alice).groups.get(group.id)
    assert (again.description, again.visibility) == ("new words", "internal")
    assert api4.as_(maintainer).put(f"/groups/{group.id}", json={"name": "No"}).status_code == 403
    outsider = users.create("outsider2")
    assert api4.as_(outsider).put(f"/groups/{group.id}", json={"name": "No"}).status_code == 403  # internal: readable
    renamed = api4.as_(admin).put(f"/groups/{group.id}", json={"path": "moved", "name": "Moved"})
    assert renamed.status_code == 200 and renamed.json()["full_path"] == "moved"
    assert api4.as_(alice).put(f"/groups/{group.id}", json={"path": "alice"}).status_code == 400


def test_delete(gl, api4, users, alice, projects, api):
    group = projects.group(alice, "doomed")
    projects.create(alice, group=group)
    maintainer = users.create("maint")
    projects.add_group_member(group, maintainer, 40)
    assert api4.as_(maintainer).delete(f"/groups/{group.id}").status_code == 403
    outsider = users.create("outsider")
    assert api4.as_(outsider).delete(f"/groups/{group.id}").status_code == 404
    response = api4.as_(alice).delete(f"/groups/{group.id}")
    assert (response.status_code, response.json()) == (202, {"message": "202 Accepted"})
    assert api4.as_(alice).get(f"/groups/{group.id}").status_code == 404
    assert api4.as_(alice).delete(f"/groups/{group.id}").status_code == 404
    other = projects.group(alice, "via-client")
    gl(alice).groups.get(other.id).delete()
    assert api4.as_(alice).get(f"/groups/{other.id}").status_code == 404


def test_bad_ids(api4, alice):
    for bad in ("0", "99999999999999999999", "no-such-group", "..%2F..", "%00"):
        assert api4.as_(alice).get(f"/groups/{bad}").status_code == 404, bad


def test_list_is_one_statement(api4, rt, alice, admin, projects):
    for path in ("one", "two", "three"):
        projects.group(alice, path)
    for who, params in ((alice, {}), (alice, {"all_available": True}), (alice, {"min_access_level": 30}), (admin, {"per_page": 1})):
        with QueryCounter(rt) as counter:
            response = api4.as_(who).get("/groups", params=params)
        assert response.headers["x-total"] == "3"
        assert counter.count == 0 and len(counter.fast_reads) == 1, (params, counter.statements, counter.fast_reads)


def test_visibility_cannot_narrow_below_a_project(api4, alice, projects):
    group = projects.group(alice, "wide", visibility=20)
    projects.create(alice, group=group, visibility=20)
    refused = api4.as_(alice).put(f"/groups/{group.id}", json={"visibility": "private"})
    assert refused.status_code == 400 and "visibility_level" in refused.json()["message"]
    assert api4.as_(alice).get(f"/groups/{group.id}").json()["visibility"] == "public"


def test_delete_with_a_json_body_as_gitbeaker_sends(api4, alice, projects):
    group = projects.group(alice, "gb")
    response = api4.as_(alice).request("DELETE", f"/groups/{group.id}", json={})
    assert response.status_code == 202
