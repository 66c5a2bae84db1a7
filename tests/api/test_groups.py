"""Groups and group members."""

from __future__ import annotations

from codeyard.db.models import GroupMember, Namespace, Project, Tombstone

from ..support import QueryCounter

GUEST, REPORTER, DEVELOPER, MASTER, OWNER = 10, 20, 30, 40, 50


def count(rt, model, **filters) -> int:
    with rt.db.session() as session:
        return session.query(model).filter_by(**filters).count()


# --- groups ---------------------------------------------------------------------------------------


def test_create_group(api, alice, rt):
    response = api.as_(alice).post("/groups", json={"name": "Team Red", "path": "team-red", "description": "the reds"})
    assert response.status_code == 201
    body = response.json()
    assert body == {"id": body["id"], "name": "Team Red", "path": "team-red", "description": "the reds",
                    "visibility_level": 0, "avatar_url": None, "web_url": "http://testserver/groups/team-red"}  # fmt: skip
    with rt.db.session() as session:
        member = session.query(GroupMember).filter_by(namespace_id=body["id"]).one()
        assert (member.user_id, member.access_level) == (alice.id, OWNER)


def test_create_group_defaults_and_refusals(api, alice, users, admin, rt):
    api.as_(admin).put("/application/settings", json={"default_group_visibility": 10})
    assert api.as_(alice).post("/groups", json={"name": "A", "path": "a"}).json()["visibility_level"] == 10
    assert api.as_(alice).post("/groups", json={"name": "B"}).json() == {"message": '400 (Bad request) "path" not given'}
    taken = api.as_(alice).post("/groups", json={"name": "Alice", "path": "ALICE"})
    assert taken.status_code == 409 and taken.json() == {"message": {"path": ["has already been taken"]}}
    for body, field in [({"name": "ok", "path": "-bad"}, "path"), ({"name": "ok", "path": "api"}, "path"),
                        ({"name": "no/slash", "path": "ok"}, "name"), ({"name": "ok", "path": "ok", "visibility_level": 3}, "visibility_level"),
                        ({"name": "n" * 256, "path": "ok"}, "name")]:  # fmt: skip
        response = api.as_(alice).post("/groups", json=body)
        assert response.status_code == 400 and field in response.json()["message"], body
    no_groups = users.create("nogroups", can_create_group=False)
    assert api.as_(no_groups).post("/groups", json={"name": "X", "path": "x"}).status_code == 403
    assert api.anonymous.post("/groups", json={"name": "X", "path": "x"}).status_code == 401
    assert count(rt, Namespace, kind="group") == 1
    api.as_(admin).put("/application/settings", json={"restricted_visibility_levels": [20]})
    assert api.as_(alice).post("/groups", json={"name": "P", "path": "p", "visibility_level": 20}).status_code == 400


def test_list_and_search(api, alice, users, projects, admin, rt):
    bob = users.create("bob")
    projects.group(alice, "red")
    blue = projects.group(bob, "blue")
    projects.add_group_member(blue, alice, GUEST)
    projects.group(bob, "green")
    assert [g["path"] for g in api.as_(alice).get("/groups").json()] == ["red", "blue"]
    assert [g["path"] for g in api.as_(alice).get("/groups", params={"search": "BL"}).json()] == ["blue"]
    assert [g["path"] for g in api.as_(admin).get("/groups").json()] == ["red", "blue", "green"]
    for who, params, total, reads in ((admin, {"per_page": 1}, "3", 1), (admin, {"per_page": 10}, "3", 1),
                                      (alice, {"search": "e"}, "2", 1), (alice, {"page": 3}, "2", 2)):  # fmt: skip
        with QueryCounter(rt) as counter:  # the read path: the page's statement carries the total
            response = api.as_(who).get("/groups", params=params)
        assert response.headers["x-total"] == total and counter.count == 0 and len(counter.fast_reads) == reads


def test_get_group_with_its_readable_projects(api, alice, users, projects, admin, rt):
    bob = users.create("bob")
    team = projects.group(alice, "team", visibility=20)
    public = projects.create(alice, group=team, name="open", visibility=20)
    projects.create(alice, group=team, name="closed")
    body = api.as_(bob).get("/groups/team").json()
    assert body["path"] == "team" and [p["id"] for p in body["projects"]] == [public.id]
    with QueryCounter(rt) as counter:  # the read path: the guard's statement and the projects'
        assert len(api.as_(alice).get(f"/groups/{team.id}").json()["projects"]) == 2
    assert counter.count == 0 and len(counter.fast_reads) == 2, (counter.statements, counter.fast_reads)
    assert len(api.as_(admin).get("/groups/team").json()["projects"]) == 2
    external = api.as_(users.create("ext", external=True)).get("/groups/team").json()
    assert [p["id"] for p in external["projects"]] == [public.id]
    assert api.as_(alice).get("/groups/TEAM").status_code == 200


def test_group_projects_list(api, alice, users, projects):
    bob = users.create("bob")
    team = projects.group(alice, "team", visibility=20)
    public = projects.create(alice, group=team, name="open", visibility=20)
    closed = projects.create(alice, group=team, name="closed")
    projects.create(alice, name="elsewhere", visibility=20)  # not in the group
    assert [p["id"] for p in api.as_(bob).get("/groups/team/projects").json()] == [public.id]
    page = api.as_(alice).get(f"/groups/{team.id}/projects", params={"per_page": 1, "order_by": "name", "sort": "asc"})
    assert [p["id"] for p in page.json()] == [closed.id] and page.headers["x-total"] == "2"
    assert "public_builds" in page.json()[0] and "permissions" not in page.json()[0]
    assert api.as_(alice).get(f"/groups/{team.id}/projects", params={"order_by": "nope"}).status_code == 400
    private = projects.group(alice, "hidden")
    assert api.as_(bob).get(f"/groups/{private.id}/projects").status_code == 404
    assert api.anonymous.get(f"/groups/{team.id}/projects").status_code == 401


def test_private_groups_are_hidden(api, alice, users, projects):
    bob = users.create("bob")
    secret = projects.group(alice, "secret")
    for ref in ("secret", secret.id, "nothing", 999999):
        response = api.as_(bob).get(f"/groups/{ref}")
        assert response.status_code == 404 and response.json() == {"message": "404 Group Not Found"}
    # Seeing one of its projects is enough to see the group.
    project = projects.create(alice, group=secret, name="shared")
    projects.add_member(project, bob, REPORTER)
    assert [p["id"] for p in api.as_(bob).get("/groups/secret").json()["projects"]] == [project.id]


def test_internal_groups_and_external_users(api, alice, users, projects):
    projects.group(alice, "inside", visibility=10)
    assert api.as_(users.create("bob")).get("/groups/inside").status_code == 200
    assert api.as_(users.create("ext", external=True)).get("/groups/inside").status_code == 404


def test_a_readable_project_shows_its_private_group(api, alice, users, projects):
    """GitLab 8.6: whoever may read one of a group's projects sees the group (its guard's second
    statement, asked only when the group itself is not open to the caller)."""
    inner = projects.group(alice, "inner")
    shared = projects.create(alice, group=inner, name="shared")
    bob, carol, ext = users.create("bob"), users.create("carol"), users.create("ext", external=True)
    projects.add_member(shared, bob, REPORTER)
    projects.add_member(shared, ext, REPORTER)
    assert api.as_(bob).get("/groups/inner").status_code == 200 and api.as_(ext).get("/groups/inner").status_code == 200
    assert api.as_(carol).get("/groups/inner").json() == {"message": "404 Group Not Found"}
    assert api.as_(bob).get("/groups/inner/members").status_code == 200
    assert api.as_(bob).put(f"/groups/{inner.id}", json={"name": "X"}).status_code == 403
    assert api.as_(bob).get("/groups/99999999999").json() == {"message": "404 Group Not Found"}


def test_group_reads_need_no_session(api, alice, users, projects, rt):
    team = projects.group(alice, "team", visibility=20)
    bob = users.create("bob", name="Bob Builder")
    projects.add_group_member(team, bob, DEVELOPER)
    for path, params, reads in ((f"/groups/{team.id}/members", {}, 2), ("/groups/TEAM/members", {"query": "builder"}, 2),
                                (f"/groups/{team.id}/members/{bob.id}", {}, 2), (f"/groups/{team.id}/projects", {}, 2)):  # fmt: skip
        with QueryCounter(rt) as counter:
            response = api.as_(bob).get(path, params=params)
        assert response.status_code == 200 and counter.count == 0, (path, counter.statements)
        assert len(counter.fast_reads) == reads, (path, counter.fast_reads)
    assert [m["username"] for m in api.as_(bob).get("/groups/team/members", params={"query": "builder"}).json()] == ["bob"]
    assert api.as_(bob).get(f"/groups/{team.id}/members/{bob.id}").json()["access_level"] == DEVELOPER
    assert api.as_(bob).get(f"/groups/{team.id}/members/424242").json() == {"message": "404 Not found"}


def test_update_group(api, alice, users, projects, rt):
    bob = users.create("bob")
    team = projects.group(alice, "team", visibility=20)
    projects.add_group_member(team, bob, MASTER)
    project = projects.create(alice, group=team, name="tool", visibility=10)
    assert api.as_(bob).put(f"/groups/{team.id}", json={"name": "X"}).status_code == 403
    response = api.as_(alice).put(f"/groups/{team.id}", json={"name": "Renamed", "path": "squad", "description": "d"})
    assert response.status_code == 200 and response.json()["path"] == "squad"
    assert api.as_(alice).get(f"/projects/{project.id}").json()["path_with_namespace"] == "squad/tool"
    lowered = api.as_(alice).put(f"/groups/{team.id}", json={"visibility_level": 0})
    assert lowered.status_code == 400 and "visibility_level" in lowered.json()["message"]
    assert api.as_(alice).put(f"/groups/{team.id}", json={"visibility_level": 10}).status_code == 200
    taken = api.as_(alice).put(f"/groups/{team.id}", json={"path": "bob"})
    assert taken.status_code == 400 and taken.json() == {"message": {"path": ["has already been taken"]}}
    assert api.as_(alice).get(f"/groups/{team.id}").json()["path"] == "squad"


def test_delete_group(api, alice, users, projects, admin, rt):
    bob = users.create("bob")
    team = projects.group(alice, "team")
    projects.add_group_member(team, bob, MASTER)
    project = projects.create(alice, group=team, name="tool")
    assert api.as_(bob).delete(f"/groups/{team.id}").status_code == 403
    assert api.as_(users.create("out")).delete(f"/groups/{team.id}").status_code == 404
    assert api.as_(alice).delete(f"/groups/{team.id}").status_code == 200
    assert count(rt, Namespace, kind="group") == 0 and count(rt, Project) == 0 and count(rt, GroupMember) == 0
    assert count(rt, Tombstone, kind="group") == 1
    from codeyard.git import storage

    assert not storage.repository_path(rt.config.repositories_dir, project.id).exists()
    assert api.as_(alice).delete(f"/groups/{team.id}").status_code == 200
    assert api.as_(admin).delete("/groups/team").status_code == 200
    assert api.as_(bob).delete(f"/groups/{team.id}").status_code == 404
    assert api.as_(alice).delete("/groups/999999").status_code == 404


def test_projects_in_groups(api, alice, users, projects):
    master, developer = users.create("master"), users.create("developer")
    team = projects.group(alice, "team")
    projects.add_group_member(team, master, MASTER)
    projects.add_group_member(team, developer, DEVELOPER)
    created = api.as_(master).post("/projects", json={"name": "by master", "namespace_id": team.id})
    assert created.status_code == 201
    refused = api.as_(developer).post("/projects", json={"name": "by dev", "namespace_id": team.id})
    assert refused.json() == {"message": {"namespace": ["is not valid"]}}
    assert [p["id"] for p in api.as_(developer).get("/projects").json()] == [created.json()["id"]]
    namespaces = {n["path"]: n["kind"] for n in api.as_(developer).get("/namespaces").json()}
    assert namespaces == {"developer": "user", "team": "group"}


# --- members --------------------------------------------------------------------------------------


def test_members(api, alice, users, projects, rt):
    bob, carol = users.create("bob"), users.create("carol")
    team = projects.group(alice, "team", visibility=10)
    added = api.as_(alice).post(f"/groups/{team.id}/members", json={"user_id": bob.id, "access_level": DEVELOPER})
    assert added.status_code == 201
    assert {k: added.json()[k] for k in ("id", "username", "access_level")} == {"id": bob.id, "username": "bob", "access_level": DEVELOPER}
    assert set(added.json()) >= {"email", "name", "state", "created_at"}
    again = api.as_(alice).post(f"/groups/{team.id}/members", json={"user_id": bob.id, "access_level": MASTER})
    assert again.status_code == 409 and again.json() == {"message": "Already exists"}
    listed = api.as_(carol).get(f"/groups/{team.id}/members").json()
    assert [(m["username"], m["access_level"]) for m in listed] == [("alice", OWNER), ("bob", DEVELOPER)]
    assert [m["username"] for m in api.as_(alice).get(f"/groups/{team.id}/members", params={"query": "BO"}).json()] == ["bob"]
    assert api.as_(alice).get(f"/groups/{team.id}/members/{bob.id}").json()["access_level"] == DEVELOPER
    assert api.as_(alice).get(f"/groups/{team.id}/members/{carol.id}").json() == {"message": "404 Not found"}
    assert api.as_(alice).put(f"/groups/{team.id}/members/{bob.id}", json={"access_level": MASTER}).json()["access_level"] == MASTER
    assert api.as_(alice).put(f"/groups/{team.id}/members/{carol.id}", json={"access_level": MASTER}).status_code == 404
    removed = api.as_(alice).delete(f"/groups/{team.id}/members/{bob.id}")
    assert removed.status_code == 200 and removed.json()["username"] == "bob"
    gone = api.as_(alice).delete(f"/groups/{team.id}/members/{bob.id}")
    assert gone.status_code == 200 and gone.json() == {"message": "Access revoked", "id": bob.id}
    assert count(rt, GroupMember, namespace_id=team.id) == 1


def test_member_refusals(api, alice, users, projects, rt):
    bob = users.create("bob")
    team = projects.group(alice, "team")
    projects.add_group_member(team, bob, MASTER)
    assert api.as_(bob).post(f"/groups/{team.id}/members", json={"user_id": bob.id, "access_level": 10}).status_code == 403
    cases = [
        ({"access_level": 30}, 400, '400 (Bad request) "user_id" not given'),
        ({"user_id": bob.id}, 400, '400 (Bad request) "access_level" not given'),
        ({"user_id": bob.id, "access_level": 35}, 400, {"access_level": ["is not included in the list"]}),
        ({"user_id": 999999, "access_level": 30}, 404, "404 User Not Found"),
        ({"user_id": "abc", "access_level": 30}, 400, {"user_id": ["is not a number"]}),
    ]
    for body, status, message in cases:
        response = api.as_(alice).post(f"/groups/{team.id}/members", json=body)
        assert (response.status_code, response.json()) == (status, {"message": message}), body
    last_owner = api.as_(alice).delete(f"/groups/{team.id}/members/{alice.id}")
    assert last_owner.status_code == 403 and "owner" in last_owner.json()["message"]
    assert api.as_(alice).put(f"/groups/{team.id}/members/{alice.id}", json={"access_level": MASTER}).status_code == 403
    api.as_(alice).put(f"/groups/{team.id}/members/{bob.id}", json={"access_level": OWNER})
    assert api.as_(alice).put(f"/groups/{team.id}/members/{alice.id}", json={"access_level": MASTER}).status_code == 200
    assert count(rt, GroupMember, namespace_id=team.id) == 2
    assert api.as_(users.create("out")).get(f"/groups/{team.id}/members").status_code == 404


def test_python_gitlab_groups(live, alice, users):
    import gitlab

    bob = users.create("bob")
    client = gitlab.Gitlab(live.base_url, private_token=alice.token, api_version="3")
    group = client.groups.create({"name": "Client Group", "path": "client-group"})
    assert group.path == "client-group"
    group.members.create({"user_id": bob.id, "access_level": DEVELOPER})
    assert sorted(m.username for m in client.groups.get(group.id).members.list()) == ["alice", "bob"]
    assert [g.path for g in client.groups.list()] == ["client-group"]
    client.projects.create({"name": "In Group", "namespace_id": group.id})
    assert [p.path for p in client.groups.get(group.id).projects.list()] == ["in-group"]
    client.groups.get(group.id).members.delete(bob.id)
    client.groups.delete(group.id)
    assert client.groups.list() == []
