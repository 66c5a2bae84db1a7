"""Projects API: get, create, edit, delete, fork, fork relations, stars, archiving, events."""

from __future__ import annotations

import pytest

from codeyard.db.models import Event, ForkLink, Project, ProjectMember, Tombstone
from codeyard.git import storage
from codeyard.services import projects as project_service

from ..support import QueryCounter

SPEC_FIELDS = {
    "id", "description", "default_branch", "public", "visibility_level", "ssh_url_to_repo", "http_url_to_repo",
    "web_url", "tag_list", "owner", "name", "name_with_namespace", "path", "path_with_namespace", "issues_enabled",
    "merge_requests_enabled", "builds_enabled", "wiki_enabled", "snippets_enabled", "open_issues_count",
    "created_at", "last_activity_at", "creator_id", "namespace", "archived", "avatar_url", "shared_runners_enabled",
    "forks_count", "star_count",
}  # fmt: skip
GUEST, REPORTER, DEVELOPER, MASTER = 10, 20, 30, 40


def count(rt, model, **filters) -> int:
    with rt.db.session() as session:
        return session.query(model).filter_by(**filters).count()


def repository_exists(rt, project_id: int) -> bool:
    return (storage.repository_path(rt.config.repositories_dir, project_id) / "HEAD").exists()


# --- get ------------------------------------------------------------------------------------------


def test_single_project_entity(api, users, projects):
    alice = users.create("alice", name="Alice A")
    project = projects.create(alice, name="Hello World", description="hi")
    body = api.as_(alice).get(f"/projects/{project.id}").json()
    assert set(body) >= SPEC_FIELDS
    assert "public_builds" not in body  # only in lists (reference DECISIONS row 8)
    assert body["path"] == "hello-world" and body["path_with_namespace"] == "alice/hello-world"
    assert body["name_with_namespace"] == "Alice A / Hello World"
    assert body["web_url"] == "http://testserver/alice/hello-world"
    assert body["http_url_to_repo"] == "http://testserver/alice/hello-world.git"
    assert body["owner"]["id"] == alice.id and body["owner"]["username"] == "alice"
    assert set(body["namespace"]) >= {"created_at", "description", "id", "name", "owner_id", "path", "updated_at"}
    assert body["permissions"] == {"project_access": {"access_level": 40, "notification_level": 3}, "group_access": None}
    assert len(body["runners_token"]) == 20
    assert body["creator_id"] == alice.id and body["public"] is False and body["visibility_level"] == 0


def test_single_project_is_one_statement_and_no_session(api, users, projects, rt):
    alice = users.create("alice")
    source = projects.create(alice, name="source", visibility=20)
    team = projects.group(alice, "team")
    project = projects.create(alice, group=team, name="grouped")
    with rt.db.session() as session:
        session.add(ForkLink(forked_to_project_id=project.id, forked_from_project_id=source.id))
        session.commit()
    for ref in (str(project.id), "team%2Fgrouped"):
        with QueryCounter(rt) as counter:
            body = api.as_(alice).get(f"/projects/{ref}").json()
        assert body["forked_from_project"]["path_with_namespace"] == "alice/source"
        assert body["permissions"]["group_access"]["access_level"] == 50
        assert counter.count == 0, counter.statements  # no session, no transaction
        assert len(counter.fast_reads) == 1, counter.fast_reads  # the project (and the caller's lookup)
        assert counter.token_reads <= 1


def test_written_and_read_entities_are_the_same(api, users, projects):
    """Responses to writes render through the request's session, GET through the fast path: the
    same statement and the same entity, byte for byte."""
    alice, bob = users.create("alice"), users.create("bob")
    source = projects.create(bob, name="upstream", visibility=20)
    forked = api.as_(alice).post(f"/projects/fork/{source.id}")
    assert forked.status_code == 201
    project_id = forked.json()["id"]
    api.as_(bob).post(f"/projects/{source.id}/star")
    edited = api.as_(alice).put(f"/projects/{project_id}", data={"description": "mine", "tag_list": "a,b"})
    assert edited.status_code == 200
    read = api.as_(alice).get(f"/projects/{project_id}")
    assert edited.content.replace(b',"permissions"', b"").startswith(read.content.split(b',"permissions"')[0])
    assert edited.json() == {key: value for key, value in read.json().items() if key != "permissions"}
    starred = api.as_(bob).post(f"/projects/{source.id}/star")
    assert starred.status_code == 304
    unstarred = api.as_(bob).delete(f"/projects/{source.id}/star")
    assert unstarred.json()["star_count"] == 0
    assert api.as_(bob).get(f"/projects/{source.id}").json()["star_count"] == 0


def test_get_by_path_any_case_and_with_dots(api, users, projects):
    alice = users.create("dot.user")
    project = projects.create(alice, name="My.Project", path="my.project")
    for ref in ("dot.user%2Fmy.project", "DOT.USER%2FMy.Project", str(project.id)):
        response = api.as_(alice).get(f"/projects/{ref}")
        assert response.status_code == 200, ref
        assert response.json()["id"] == project.id


def test_invisible_and_unknown_projects_are_404(api, users, projects):
    alice, bob = users.create("alice"), users.create("bob")
    private = projects.create(alice, name="secret")
    for ref in (private.id, private.ref, 999999, "nope%2Fnope", "abc"):
        response = api.as_(bob).get(f"/projects/{ref}")
        assert response.status_code == 404
        assert response.json() == {"message": "404 Project Not Found"}
    assert api.anonymous.get(f"/projects/{private.id}").status_code == 401


def test_runners_token_only_for_project_admins(api, users, projects):
    """The field is always there (spec); its value only for those who may administer the project."""
    alice, dev = users.create("alice"), users.create("dev")
    project = projects.create(alice, visibility=20)
    projects.add_member(project, dev, DEVELOPER)
    token = api.as_(alice).get(f"/projects/{project.id}").json()["runners_token"]
    assert len(token) == 20
    assert api.as_(alice).get("/projects").json()[0]["runners_token"] == token
    assert api.as_(dev).get(f"/projects/{project.id}").json()["runners_token"] == ""
    assert api.as_(dev).get("/projects").json()[0]["runners_token"] == ""


# --- create ---------------------------------------------------------------------------------------


def test_create_with_only_a_name(api, users, rt):
    alice = users.create("alice")
    response = api.as_(alice).post("/projects", json={"name": "My Project"})
    assert response.status_code == 201
    body = response.json()
    assert body["path"] == "my-project" and body["name"] == "My Project"
    assert body["owner"]["id"] == alice.id and body["namespace"]["path"] == "alice"
    assert body["visibility_level"] == 0 and body["issues_enabled"] is True and body["snippets_enabled"] is False
    assert "runners_token" in body
    assert repository_exists(rt, body["id"])
    with rt.db.session() as session:
        member = session.query(ProjectMember).filter_by(project_id=body["id"], user_id=alice.id).one()
        assert member.access_level == MASTER
        assert session.query(Event).filter_by(project_id=body["id"]).one().action == 1


def test_create_echoes_every_attribute(api, users):
    alice = users.create("alice")
    attrs = {
        "name": "Thing", "path": "camelCasePath", "description": "about", "issues_enabled": False,
        "merge_requests_enabled": False, "builds_enabled": False, "wiki_enabled": False, "snippets_enabled": True,
        "public_builds": False, "shared_runners_enabled": False, "tag_list": ["a", "b"],
    }  # fmt: skip
    body = api.as_(alice).post("/projects", json=attrs).json()
    assert {key: body[key] for key in attrs if key != "public_builds"} == {k: v for k, v in attrs.items() if k != "public_builds"}
    assert body["open_issues_count"] == 0  # every spec field is present, issues enabled or not
    assert body["default_branch"] == "master"  # nothing pushed yet: the branch the repository's HEAD names
    listed = api.as_(alice).get("/projects").json()[0]
    assert listed["public_builds"] is False


@pytest.mark.parametrize(
    ("params", "level"),
    [({"public": True}, 20), ({"public": "false"}, 0), ({"visibility_level": 10, "public": True}, 10), ({}, 0)],
)
def test_public_and_visibility_level(api, users, params, level):
    alice = users.create("alice")
    body = api.as_(alice).post("/projects", json={"name": "p", **params}).json()
    assert body["visibility_level"] == level and body["public"] is (level == 20)


def test_default_project_visibility_setting(api, users, admin):
    api.as_(admin).put("/application/settings", json={"default_project_visibility": 10})
    assert api.as_(users.create("alice")).post("/projects", json={"name": "p"}).json()["visibility_level"] == 10


def test_restricted_visibility(api, users, admin, rt):
    alice = users.create("alice")
    api.as_(admin).put("/application/settings", json={"restricted_visibility_levels": [20]})
    response = api.as_(alice).post("/projects", json={"name": "p", "public": True})
    assert response.status_code == 400
    assert response.json() == {"message": {"visibility_level": ["public has been restricted by your GitLab administrator"]}}
    assert count(rt, Project) == 0
    assert api.as_(admin).post("/projects", json={"name": "p", "public": True}).status_code == 201


def test_create_requires_name_and_valid_fields(api, users, rt):
    alice = users.create("alice")
    assert api.as_(alice).post("/projects", json={"path": "x"}).json() == {"message": '400 (Bad request) "name" not given'}
    cases = [
        ({"name": "-bad start"}, "name"),
        ({"name": "ok", "path": "has space"}, "path"),
        ({"name": "ok", "path": "ends.git"}, "path"),
        ({"name": "ok", "path": "-dash"}, "path"),
        ({"name": "n" * 256}, "name"),
        ({"name": "ok", "description": "d" * 2001}, "description"),
        ({"name": "ok", "visibility_level": 5}, "visibility_level"),
        ({"name": "ok", "issues_enabled": "sometimes"}, "issues_enabled"),
        ({"name": "ok", "import_url": "file:///etc"}, "import_url"),
    ]
    for body, field in cases:
        response = api.as_(alice).post("/projects", json=body)
        assert response.status_code == 400, body
        assert field in response.json()["message"], body
    assert count(rt, Project) == 0


def test_duplicate_name_or_path_is_409_with_field_map(api, users, projects, rt):
    alice = users.create("alice")
    projects.create(alice, name="Taken")
    response = api.as_(alice).post("/projects", json={"name": "taken"})
    assert response.status_code == 409
    assert response.json() == {"message": {"name": ["has already been taken"], "path": ["has already been taken"]}}
    assert api.as_(alice).post("/projects", json={"name": "Other", "path": "TAKEN"}).json() == {
        "message": {"path": ["has already been taken"]}
    }
    # The same name in another namespace is fine.
    assert api.as_(users.create("bob")).post("/projects", json={"name": "Taken"}).status_code == 201
    assert count(rt, Project) == 2


def test_project_limit(api, users, rt):
    alice = users.create("alice", projects_limit=1)
    assert api.as_(alice).post("/projects", json={"name": "one"}).status_code == 201
    response = api.as_(alice).post("/projects", json={"name": "two"})
    assert response.status_code == 403
    assert "Your project limit is 1 projects" in response.json()["message"]
    assert count(rt, Project) == 1
    assert api.as_(alice).get("/user").json()["can_create_project"] is False
    zero = users.create("zero", projects_limit=0)
    assert api.as_(zero).post("/projects", json={"name": "one"}).status_code == 403


def test_namespace_id(api, users, projects):
    alice, bob = users.create("alice"), users.create("bob")
    group = projects.group(alice, "team")
    in_group = api.as_(alice).post("/projects", json={"name": "p", "namespace_id": group.id})
    assert in_group.status_code == 201 and in_group.json()["namespace"]["path"] == "team"
    assert in_group.json()["owner"]["id"] == group.id  # a group project's owner is the group
    alice_namespace = next(n["id"] for n in api.as_(alice).get("/namespaces").json() if n["path"] == "alice")
    for namespace_id in (alice_namespace, group.id, 999999):
        response = api.as_(bob).post("/projects", json={"name": "q", "namespace_id": namespace_id})
        assert response.status_code == 400
        assert response.json() == {"message": {"namespace": ["is not valid"]}}


def test_group_visibility_caps_project_visibility(api, users, projects):
    alice = users.create("alice")
    group = projects.group(alice, "team", visibility=10)
    response = api.as_(alice).post("/projects", json={"name": "p", "namespace_id": group.id, "visibility_level": 20})
    assert response.status_code == 400
    assert response.json() == {"message": {"visibility_level": ["public is not allowed in a internal group."]}}


def test_create_for_user(api, users, admin, rt):
    alice = users.create("alice")
    response = api.as_(admin).post(f"/projects/user/{alice.id}", json={"name": "For Alice"})
    assert response.status_code == 201
    body = response.json()
    assert body["owner"]["id"] == alice.id and body["namespace"]["path"] == "alice" and body["creator_id"] == alice.id
    events = api.as_(alice).get(f"/projects/{body['id']}/events").json()
    assert [(e["action_name"], e["author_id"]) for e in events] == [("created", alice.id)]
    # Created as alice: the visibility restrictions that bind her apply.
    api.as_(admin).put("/application/settings", json={"restricted_visibility_levels": [20]})
    refused = api.as_(admin).post(f"/projects/user/{alice.id}", json={"name": "Public", "visibility_level": 20})
    assert refused.status_code == 400 and "visibility_level" in refused.json()["message"]
    assert api.as_(alice).post(f"/projects/user/{admin.id}", json={"name": "x"}).status_code == 403
    assert api.as_(admin).post("/projects/user/999999", json={"name": "x"}).json() == {"message": "404 Not found"}
    assert api.as_(admin).post(f"/projects/user/{alice.id}", json={}).status_code == 400
    assert count(rt, Project) == 1


# --- update ---------------------------------------------------------------------------------------


def test_owner_edits(api, users, projects):
    alice = users.create("alice")
    project = projects.create(alice, name="old")
    response = api.as_(alice).put(f"/projects/{project.id}", json={"name": "new", "visibility_level": 20, "description": "d"})
    assert response.status_code == 200
    body = response.json()
    assert (body["name"], body["visibility_level"], body["description"]) == ("new", 20, "d")
    assert api.as_(alice).put(f"/projects/{project.id}", json={"public": False}).json()["visibility_level"] == 0


def test_master_edits_but_cannot_rename_or_change_visibility(api, users, projects):
    alice, master, dev = users.create("alice"), users.create("master"), users.create("dev")
    project = projects.create(alice, name="proj")
    projects.add_member(project, master, MASTER)
    projects.add_member(project, dev, DEVELOPER)
    as_master = api.as_(master)
    assert as_master.put(f"/projects/{project.id}", json={"path": "renamed-path", "issues_enabled": False}).status_code == 200
    assert as_master.put(f"/projects/{project.id}", json={"name": "proj"}).status_code == 200  # unchanged name is fine
    assert as_master.put(f"/projects/{project.id}", json={"name": "other"}).status_code == 403
    assert as_master.put(f"/projects/{project.id}", json={"visibility_level": 20}).status_code == 403
    assert api.as_(dev).put(f"/projects/{project.id}", json={"description": "x"}).status_code == 403
    assert api.anonymous.put(f"/projects/{project.id}", json={"description": "x"}).status_code == 401
    body = api.as_(alice).get(f"/projects/{project.id}").json()
    assert (body["name"], body["path"], body["visibility_level"], body["issues_enabled"]) == ("proj", "renamed-path", 0, False)


def test_invalid_edits_are_400_and_change_nothing(api, users, projects):
    alice = users.create("alice")
    project = projects.create(alice, name="one")
    projects.create(alice, name="two")
    for body, field in [({"name": "two"}, "name"), ({"path": "TWO"}, "path"), ({"path": "bad path"}, "path"),
                        ({"visibility_level": 7}, "visibility_level"), ({"wiki_enabled": "maybe"}, "wiki_enabled")]:  # fmt: skip
        response = api.as_(alice).put(f"/projects/{project.id}", json=body)
        assert response.status_code == 400, body
        assert field in response.json()["message"], body
    assert api.as_(alice).get(f"/projects/{project.id}").json()["path"] == "one"
    # The same name and path in another namespace are fine.
    other = projects.create(users.create("bob"), name="elsewhere")
    assert api.as_(users.create("carol", admin=True)).put(f"/projects/{other.id}", json={"name": "two", "path": "two"}).status_code == 200


def test_default_branch_must_exist_once_there_are_branches(api, users, projects):
    alice = users.create("alice")
    project = projects.create(alice)
    assert api.as_(alice).put(f"/projects/{project.id}", json={"default_branch": "develop"}).json()["default_branch"] == "develop"


# --- delete ---------------------------------------------------------------------------------------


def test_delete(api, users, projects, rt):
    alice, dev, admin = users.create("alice"), users.create("dev"), users.create("root2", admin=True)
    project = projects.create(alice)
    projects.add_member(project, dev, DEVELOPER)
    assert api.as_(dev).delete(f"/projects/{project.id}").status_code == 403
    assert repository_exists(rt, project.id)
    response = api.as_(alice).delete(f"/projects/{project.id}")
    assert response.status_code == 200
    assert count(rt, Project) == 0 and count(rt, ProjectMember) == 0 and count(rt, Event) == 0
    assert not repository_exists(rt, project.id)
    assert count(rt, Tombstone, kind="project", object_id=project.id) == 1
    # Idempotent for those who could have deleted it; still hidden from others.
    assert api.as_(alice).delete(f"/projects/{project.id}").status_code == 200
    assert api.as_(alice).delete(f"/projects/{project.ref}").status_code == 200
    assert api.as_(admin).delete(f"/projects/{project.id}").status_code == 200
    assert api.as_(dev).delete(f"/projects/{project.id}").status_code == 404
    assert api.as_(alice).delete("/projects/999999").json() == {"message": "404 Project Not Found"}


def test_delete_others_private_project_is_404_and_admin_may(api, users, projects, admin, rt):
    alice, bob = users.create("alice"), users.create("bob")
    project = projects.create(alice)
    assert api.as_(bob).delete(f"/projects/{project.id}").status_code == 404
    assert api.as_(admin).delete(f"/projects/{project.id}").status_code == 200
    assert count(rt, Project) == 0


def test_deleting_a_user_deletes_their_projects(api, users, projects, admin, rt):
    alice = users.create("alice")
    project = projects.create(alice)
    assert api.as_(admin).delete(f"/users/{alice.id}").status_code == 200
    assert count(rt, Project) == 0 and not repository_exists(rt, project.id)


def test_sole_group_owner_cannot_be_deleted(api, users, projects, admin, rt):
    alice = users.create("alice")
    projects.group(alice, "team")
    response = api.as_(admin).delete(f"/users/{alice.id}")
    assert response.status_code == 409
    assert "team" in response.json()["message"]


# --- forks ----------------------------------------------------------------------------------------


def test_fork(api, users, projects, rt):
    alice, bob = users.create("alice"), users.create("bob")
    source = projects.create(alice, name="Source", description="orig", visibility=10)
    response = api.as_(bob).post(f"/projects/fork/{source.id}")
    assert response.status_code == 201
    fork = response.json()
    assert (fork["name"], fork["path"], fork["description"], fork["visibility_level"]) == ("Source", "source", "orig", 10)
    assert fork["owner"]["id"] == bob.id and fork["namespace"]["path"] == "bob"
    assert fork["forked_from_project"] == {
        "id": source.id, "name": "Source", "name_with_namespace": "User alice / Source", "path": "source",
        "path_with_namespace": "alice/source",
    }  # fmt: skip
    assert repository_exists(rt, fork["id"])
    assert api.as_(alice).get(f"/projects/{source.id}").json()["forks_count"] == 1
    again = api.as_(bob).post(f"/projects/fork/{source.id}")
    assert again.status_code == 409
    assert again.json() == {"message": {"name": ["has already been taken"], "path": ["has already been taken"]}}


def test_fork_permissions(api, users, projects):
    alice, guest, reporter, outsider = users.create("alice"), users.create("guest"), users.create("rep"), users.create("out")
    private = projects.create(alice, name="private")
    projects.add_member(private, guest, GUEST)
    projects.add_member(private, reporter, REPORTER)
    assert api.as_(outsider).post(f"/projects/fork/{private.id}").json() == {"message": "404 Project Not Found"}
    assert api.as_(guest).post(f"/projects/fork/{private.id}").status_code == 403  # guests may not read the code
    assert api.as_(reporter).post(f"/projects/fork/{private.id}").status_code == 201
    assert api.as_(alice).post("/projects/fork/999999").status_code == 404
    assert api.anonymous.post(f"/projects/fork/{private.id}").json() == {"message": "401 Unauthorized"}


def test_fork_hits_the_project_limit_as_409(api, users, projects):
    alice, bob = users.create("alice"), users.create("bob", projects_limit=0)
    source = projects.create(alice, visibility=20)
    response = api.as_(bob).post(f"/projects/fork/{source.id}")
    assert response.status_code == 409
    assert "limit_reached" in response.json()["message"]


def test_fork_relations(api, users, projects, admin, rt):
    alice = users.create("alice")
    a, b, c = (projects.create(alice, name=n) for n in ("a", "b", "c"))
    assert api.as_(alice).post(f"/projects/{a.id}/fork/{b.id}").status_code == 403
    response = api.as_(admin).post(f"/projects/{a.id}/fork/{b.id}")
    assert response.status_code == 201
    assert response.json()["forked_to_project_id"] == a.id and response.json()["forked_from_project_id"] == b.id
    assert api.as_(admin).post(f"/projects/{a.id}/fork/{c.id}").status_code == 409
    assert api.as_(admin).post(f"/projects/{c.id}/fork/999999").json() == {"message": "404 Source Project Not Found"}
    assert api.as_(alice).get(f"/projects/{a.id}").json()["forked_from_project"]["id"] == b.id
    assert api.as_(admin).delete(f"/projects/{a.id}/fork").status_code == 200
    assert count(rt, ForkLink) == 0
    not_forked = api.as_(admin).delete(f"/projects/{a.id}/fork")
    assert not_forked.status_code == 200 and not_forked.json() is None


def test_fork_relation_removal_is_for_admins(api, users, projects, admin, rt):
    """Spec: admin only, the owner of the fork included (GitLab 8.6 let owners do it)."""
    alice, master = users.create("alice"), users.create("master")
    a, b = projects.create(alice, name="a"), projects.create(alice, name="b")
    projects.add_member(a, master, MASTER)
    api.as_(admin).post(f"/projects/{a.id}/fork/{b.id}")
    for caller in (alice, master, users.create("out")):
        assert api.as_(caller).delete(f"/projects/{a.id}/fork").status_code == 403
    assert count(rt, ForkLink) == 1


# --- stars, archiving, events ---------------------------------------------------------------------


def test_star_and_unstar(api, users, projects):
    alice, bob = users.create("alice"), users.create("bob")
    project = projects.create(alice, visibility=20)
    first = api.as_(bob).post(f"/projects/{project.id}/star")
    assert first.status_code == 201 and first.json()["star_count"] == 1
    assert api.as_(bob).post(f"/projects/{project.id}/star").status_code == 304
    assert [p["id"] for p in api.as_(bob).get("/projects/starred").json()] == [project.id]
    assert "permissions" not in api.as_(bob).get("/projects/starred").json()[0]
    unstar = api.as_(bob).delete(f"/projects/{project.id}/star")
    assert unstar.status_code == 200 and unstar.json()["star_count"] == 0
    assert api.as_(bob).delete(f"/projects/{project.id}/star").status_code == 304
    private = projects.create(alice, name="private")
    assert api.as_(bob).post(f"/projects/{private.id}/star").status_code == 404


def test_archive_and_unarchive(api, users, projects):
    alice, master = users.create("alice"), users.create("master")
    project = projects.create(alice)
    projects.add_member(project, master, MASTER)
    assert api.as_(master).post(f"/projects/{project.id}/archive").status_code == 403
    response = api.as_(alice).post(f"/projects/{project.id}/archive")
    assert response.status_code == 201 and response.json()["archived"] is True
    assert [p["id"] for p in api.as_(alice).get("/projects", params={"archived": "true"}).json()] == [project.id]
    assert api.as_(alice).get("/projects", params={"archived": "false"}).json() == []
    assert api.as_(alice).post(f"/projects/{project.id}/unarchive").json()["archived"] is False


def test_events(api, users, projects, rt):
    alice = users.create("alice")
    project = projects.create(alice)
    with rt.db.transaction() as session:
        from codeyard.services import events

        stored = session.get(Project, project.id)
        events.record(session, stored, alice.id, events.JOINED)
        events.record(session, stored, None, events.LEFT)  # no author: never listed
    response = api.as_(alice).get(f"/projects/{project.id}/events")
    assert response.status_code == 200
    body = response.json()
    assert [e["action_name"] for e in body] == ["joined", "created"]
    assert body[0]["author_username"] == "alice" and body[0]["author"]["name"] == "User alice"
    assert set(body[0]) >= {"title", "project_id", "action_name", "target_id", "target_type", "author_id", "data", "target_title", "created_at"}
    assert response.headers["x-total"] == "2"
    assert api.as_(users.create("bob")).get(f"/projects/{project.id}/events").json() == {"message": "404 Project Not Found"}


def test_events_read_path_renders_each_event_as_its_model(api, users, projects, rt):
    """The events list (one statement, no session) gives each event as the models render it: pushes
    (new, to, deleted), comments with their note (on a request and on a commit, the note's author
    deleted or the note gone), and no event without an author."""
    from codeyard.db.models import Event, MergeRequest, Note
    from codeyard.entities.events import event as event_entity
    from codeyard.services import events

    alice, carol = users.create("alice"), users.create("carol")
    project = projects.create(alice)
    zero, sha = "0" * 40, "a" * 40
    with rt.db.transaction() as session:
        stored = session.get(Project, project.id)
        mr = MergeRequest(iid=1, target_project_id=project.id, source_project_id=project.id, source_branch="f",
                          target_branch="master", title="T", author_id=alice.id)  # fmt: skip
        session.add(mr)
        session.flush()
        notes = [Note(project_id=project.id, merge_request_id=mr.id, author_id=carol.id, note=":+1:"),
                 Note(project_id=project.id, commit_id=sha, author_id=None, note="on a commit"),
                 Note(project_id=project.id, merge_request_id=mr.id, author_id=alice.id, note="gone")]  # fmt: skip
        session.add_all(notes)
        session.flush()
        for data in ({"before": zero, "after": sha}, {"before": sha, "after": sha}, {"before": sha, "after": zero}):
            events.record(session, stored, alice.id, events.PUSHED, data=data)
        for note in notes:
            events.record(session, stored, carol.id, events.COMMENTED, target_id=note.id, target_type="Note", title="T")
        events.record(session, stored, None, events.LEFT)  # no author: never listed
        session.delete(notes[2])
    with QueryCounter(rt) as counter:
        listed = api.as_(alice).get(f"/projects/{project.id}/events", params={"per_page": 100})
    assert counter.count == 0 and len(counter.fast_reads) == 2, counter.statements
    view = rt.view()
    with rt.db.session() as session:
        models = session.query(Event).filter(Event.project_id == project.id, Event.author_id.isnot(None)).order_by(Event.id.desc()).all()
        kept = {note.id: note for note in session.query(Note).filter_by(project_id=project.id)}
        expected = [event_entity(e, view, events.action_name(e), e.author, kept.get(e.target_id) if e.target_type == "Note" else None)
                    for e in models]  # fmt: skip
    assert listed.json() == expected and listed.headers["x-total"] == str(len(expected)) == "7"
    assert [e["action_name"] for e in expected[3:6]] == ["deleted", "pushed to", "pushed new"]
    assert [e.get("note", {}).get("body") for e in expected[:3]] == [None, "on a commit", ":+1:"]


def test_runners_token_is_derived_and_stored_only_as_digest(rt, users, projects):
    alice = users.create("alice")
    project = projects.create(alice)
    with rt.db.session() as session:
        stored = session.get(Project, project.id)
        token = project_service.runners_token(rt.secret_key, stored)
        assert stored.runners_token_digest == project_service.digest(token)
        assert token not in (stored.runners_token_nonce, stored.runners_token_digest)


def test_group_project_shapes(api, users, projects):
    alice = users.create("alice")
    group = projects.group(alice, "team")
    project = projects.create(alice, group=group, name="Tool")
    body = api.as_(alice).get(f"/projects/{project.id}").json()
    assert body["owner"]["kind"] == "group" and body["namespace"]["path"] == "team"
    assert body["name_with_namespace"] == "Team / Tool"
    assert body["permissions"] == {"project_access": None, "group_access": {"access_level": 50, "notification_level": 3}}


def test_delete_group_project_twice(api, users, projects):
    alice, bob = users.create("alice"), users.create("bob")
    group = projects.group(alice, "team")
    projects.add_group_member(group, bob, MASTER)
    project = projects.create(alice, group=group)
    assert api.as_(bob).delete(f"/projects/{project.id}").status_code == 403
    assert api.as_(alice).delete(f"/projects/{project.id}").status_code == 200
    assert api.as_(alice).delete(f"/projects/{project.id}").status_code == 200
    assert api.as_(bob).delete(f"/projects/{project.id}").status_code == 404


def test_create_with_shared_runners_flag(api, users):
    body = api.as_(users.create("alice")).post("/projects", json={"name": "x", "shared_runners_enabled": False}).json()
    assert body["shared_runners_enabled"] is False


def test_fork_into_a_group(api, users, projects):
    alice, bob = users.create("alice"), users.create("bob")
    source = projects.create(alice, visibility=20)
    team = projects.group(bob, "team", visibility=20)
    response = api.as_(bob).post(f"/projects/fork/{source.id}", json={"namespace": "team"})
    assert response.status_code == 201 and response.json()["namespace"]["id"] == team.id
    assert api.as_(bob).post(f"/projects/fork/{source.id}", json={"namespace": str(team.id)}).status_code == 409
    assert api.as_(bob).post(f"/projects/fork/{source.id}", json={"namespace": "alice"}).json() == {
        "message": {"namespace": ["is not valid"]}
    }
    private_team = projects.group(bob, "quiet")
    refused = api.as_(bob).post(f"/projects/fork/{source.id}", json={"namespace": "quiet"})
    assert refused.status_code == 409
    assert refused.json() == {"message": {"visibility_level": ["public is not allowed in a private group."]}}
    assert private_team.id
