"""v4 members of projects and groups: lists, `/members/all`, one member, add, edit, remove, and who may."""

from __future__ import annotations

import pytest

from ..support import QueryCounter, make_team

MEMBER_KEYS = {"id", "username", "name", "state", "locked", "avatar_url", "web_url", "access_level", "created_at", "expires_at", "membership_state"}


@pytest.fixture
def team(users, projects, admin):
    return make_team(users, projects, admin)


def test_project_members_through_the_client(gl, team, users):
    owner = team.user("owner")
    newcomer = users.create("newcomer")
    project = gl(owner).projects.get(team.project.id, lazy=True)
    added = project.members.create({"user_id": newcomer.id, "access_level": 30})
    assert (added.username, added.access_level, added.expires_at) == ("newcomer", 30, None)
    assert added.created_by["username"] == owner.username
    added.access_level = 40
    added.save()
    assert project.members.get(newcomer.id).access_level == 40
    assert newcomer.id in [m.id for m in project.members.list(get_all=True)]
    project.members.delete(newcomer.id)
    assert newcomer.id not in [m.id for m in project.members.list(get_all=True)]


def test_member_shape_and_paging(api4, team):
    response = api4.as_(team.user("owner")).get(f"/projects/{team.project.id}/members", params={"per_page": 2})
    assert response.status_code == 200
    assert response.headers["x-total"] == "5"  # the owner and four roles
    assert response.headers["x-next-page"] == "2"
    body = response.json()
    assert MEMBER_KEYS <= set(body[0]) <= MEMBER_KEYS | {"created_by"}
    assert body[0]["created_at"].endswith("Z")
    searched = api4.as_(team.user("owner")).get(f"/projects/{team.project.ref}/members", params={"query": "DEVELO"}).json()
    assert [m["username"] for m in searched] == ["developer"]


@pytest.mark.parametrize(
    "role, reads, manages",
    [("outsider", False, False), ("guest", True, False), ("reporter", True, False), ("developer", True, False),
     ("master", True, True), ("owner", True, True), ("admin", True, True)],
)  # fmt: skip
def test_who_may_on_a_private_project(api4, team, users, role, reads, manages):
    caller = api4.as_(team.user(role))
    path = f"/projects/{team.project.id}/members"
    listed = caller.get(path)
    assert listed.status_code == (200 if reads else 404)
    if not reads:
        assert listed.json() == {"message": "404 Project Not Found"}
    assert caller.get(f"{path}/all").status_code == (200 if reads else 404)
    target = users.create(f"target-{role}")
    added = caller.post(path, json={"user_id": target.id, "access_level": 20})
    assert added.status_code == (201 if manages else 403 if reads else 404)
    if manages:
        assert caller.put(f"{path}/{target.id}", json={"access_level": 30}).status_code == 200
        assert caller.delete(f"{path}/{target.id}").status_code == 204
    else:
        guest = team.user("guest")
        assert caller.put(f"{path}/{guest.id}", json={"access_level": 30}).status_code in (403, 404)
        assert caller.delete(f"{path}/{guest.id}").status_code in (403, 404)


def test_public_project_members_are_read_by_anyone_signed_in(api4, users, projects, alice):
    project = projects.create(alice, visibility=20)
    outsider = users.create("outsider")
    assert api4.as_(outsider).get(f"/projects/{project.id}/members").status_code == 200
    assert api4.as_(outsider).post(f"/projects/{project.id}/members", json={"user_id": outsider.id, "access_level": 40}).status_code == 403


def test_hostile_input(api4, team, users):
    owner = api4.as_(team.user("owner"))
    path = f"/projects/{team.project.id}/members"
    target = users.create("target")
    for level in (0, 5, 35, 60, "x", -10, 10**30):
        assert owner.post(path, json={"user_id": target.id, "access_level": level}).status_code == 400, level
    for user_id in (0, 99999999, 10**30):
        response = owner.post(path, json={"user_id": user_id, "access_level": 30})
        assert response.status_code in (400, 404), user_id
    assert owner.post(path, json={"access_level": 30}).json() == {"error": "user_id is missing"}
    assert owner.post(path, json={"user_id": target.id}).json() == {"error": "access_level is missing"}
    assert owner.post(path, json={"user_id": target.id, "access_level": 30, "expires_at": "2030-01-01"}).status_code == 400
    for bad in ("0", "99999999999999999999", "abc"):
        assert owner.get(f"{path}/{bad}").status_code == 404
        assert owner.delete(f"{path}/{bad}").status_code == 404
    assert owner.get(f"{path}/{target.id}").json() == {"message": "404 Not found"}
    assert owner.delete(f"{path}/{target.id}").json() == {"message": "404 Not found"}
    assert api4.as_(team.user("owner")).get("/projects/99999999999/members").status_code == 404


def test_existing_member_is_a_conflict_and_username_works(api4, team, users):
    owner = api4.as_(team.user("owner"))
    path = f"/projects/{team.project.id}/members"
    guest = team.user("guest")
    response = owner.post(path, json={"user_id": guest.id, "access_level": 40})
    assert (response.status_code, response.json()) == (409, {"message": "Member already exists"})
    assert owner.get(f"{path}/{guest.id}").json()["access_level"] == 10
    target = users.create("byname")
    made = owner.post(path, params={"username": "BYNAME", "access_level": 20})
    assert made.status_code == 201 and made.json()["id"] == target.id
    assert owner.post(path, json={"username": "nobody-here", "access_level": 20}).json() == {"message": "404 User Not Found"}


def test_personal_project_owner_keeps_their_place(api4, team):
    owner = team.user("owner")
    path = f"/projects/{team.project.id}/members/{owner.id}"
    assert api4.as_(owner).delete(path).status_code == 403
    assert api4.as_(owner).put(path, json={"access_level": 10}).status_code == 403


def test_members_all_merges_the_group_at_the_highest_level(gl, api4, users, projects, alice):
    group = projects.group(alice, "team")
    project = projects.create(alice, group=group)
    both, group_only, project_only = users.create("both"), users.create("grouponly"), users.create("projectonly")
    projects.add_group_member(group, both, 40)
    projects.add_member(project, both, 20)
    projects.add_group_member(group, group_only, 10)
    projects.add_member(project, project_only, 30)
    client = gl(alice).projects.get(project.id, lazy=True)
    levels = {m.username: m.access_level for m in client.members_all.list(get_all=True)}
    assert levels == {"alice": 50, "both": 40, "grouponly": 10, "projectonly": 30}
    direct = {m.username for m in client.members.list(get_all=True)}
    assert "grouponly" not in direct and "both" in direct
    assert client.members_all.get(both.id).access_level == 40
    response = api4.as_(group_only).get(f"/projects/{project.id}/members/all/{group_only.id}")
    assert response.json()["access_level"] == 10
    assert api4.as_(alice).get(f"/projects/{project.id}/members/{group_only.id}").status_code == 404
    paged = api4.as_(alice).get(f"/projects/{project.id}/members/all", params={"per_page": 3})
    assert paged.headers["x-total"] == "4" and len(paged.json()) == 3


def test_group_members(gl, api4, users, projects, alice, admin):
    group = projects.group(alice, "crew")
    maintainer, outsider, target = users.create("maint"), users.create("outsider"), users.create("target")
    projects.add_group_member(group, maintainer, 40)
    found = gl(alice).groups.get(group.id)
    made = found.members.create({"user_id": target.id, "access_level": 20})
    assert (made.username, made.access_level, made.created_by["username"]) == ("target", 20, "alice")
    made.access_level = 30
    made.save()
    assert found.members.get(target.id).access_level == 30
    assert {m.username for m in found.members_all.list()} == {"alice", "maint", "target"}
    assert api4.as_(alice).get(f"/groups/{group.id}/members/all/{target.id}").json()["access_level"] == 30
    path = f"/groups/{group.id}/members"
    assert api4.as_(maintainer).post(path, json={"user_id": outsider.id, "access_level": 10}).status_code == 403
    assert api4.as_(outsider).get(path).status_code == 404
    assert api4.as_(alice).post(path, json={"user_id": target.id, "access_level": 10}).status_code == 409
    last_owner = api4.as_(alice).delete(f"{path}/{alice.id}")
    assert last_owner.status_code == 403
    assert api4.as_(admin).delete(f"{path}/{target.id}").status_code == 204
    assert api4.as_(admin).delete(f"{path}/{target.id}").status_code == 404
    assert api4.as_(alice).post(path, json={"user_id": outsider.id, "access_level": 99}).status_code == 400


def test_public_group_members_are_read_by_outsiders(api4, users, projects, alice):
    group = projects.group(alice, "open", visibility=20)
    outsider = users.create("outsider")
    assert [m["username"] for m in api4.as_(outsider).get(f"/groups/{group.id}/members").json()] == ["alice"]
    assert api4.as_(outsider).delete(f"/groups/{group.id}/members/{alice.id}").status_code == 403


def test_lists_are_one_statement_after_the_guard(api4, rt, team, users, projects, alice):
    group = projects.group(alice, "crew")
    project = projects.create(alice, group=group)
    for n in range(4):
        projects.add_group_member(group, users.create(f"crew{n}"), 20)
        projects.add_member(project, users.create(f"proj{n}"), 30)
    for path, total in ((f"/projects/{project.id}/members/all", "9"), (f"/projects/{project.id}/members", "4"),
                        (f"/groups/{group.id}/members", "5")):  # fmt: skip
        with QueryCounter(rt) as counter:  # the guard's statement and the page's
            response = api4.as_(alice).get(path, params={"per_page": 3})
        assert response.headers["x-total"] == total
        assert counter.count == 0 and len(counter.fast_reads) == 2, (path, counter.statements, counter.fast_reads)


def test_remove_with_a_json_body_as_gitbeaker_sends(api4, team):
    guest = team.user("guest")
    response = api4.as_(team.user("owner")).request("DELETE", f"/projects/{team.project.id}/members/{guest.id}", json={})
    assert response.status_code == 204 and response.content == b""
