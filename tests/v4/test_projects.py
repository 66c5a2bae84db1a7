"""v4 projects: one project, create (with a first commit), edit, delete, forks, stars, archiving,
transfer, languages, statistics; through python-gitlab 8 and raw requests, for every role."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from codeyard.db.models import ProtectedBranch
from codeyard.git import repo

from ..support import WorkingCopy, make_team, record_push

PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
GUEST, REPORTER, DEVELOPER, MASTER, OWNER = 10, 20, 30, 40, 50
ZERO = "0" * 40


def project_path(api4, who, ident, **params):
    return api4.as_(who).get(f"/projects/{ident}", params=params)


# --- one project ------------------------------------------------------------------------------------


def test_the_v4_shape(api4, alice, projects):
    made = projects.create(alice, name="Demo", visibility=INTERNAL, description="about")
    body = api4.as_(alice).get(f"/projects/{made.id}").json()
    assert body["id"] == made.id and body["name"] == "Demo" and body["path"] == "demo"
    assert body["path_with_namespace"] == "alice/demo" and body["name_with_namespace"].endswith(" / Demo")
    assert body["visibility"] == "internal" and "visibility_level" not in body and "public" not in body
    assert body["namespace"] == {
        "id": made.namespace_id, "name": body["namespace"]["name"], "path": "alice", "kind": "user", "full_path": "alice",
        "parent_id": None, "avatar_url": None, "web_url": "http://testserver/u/alice",
    }  # fmt: skip
    assert body["owner"]["username"] == "alice" and body["owner"]["locked"] is False
    assert body["_links"]["self"] == f"http://testserver/api/v4/projects/{made.id}"
    assert body["_links"]["repo_branches"].endswith("/repository/branches")
    assert body["empty_repo"] is True and body["default_branch"] is None
    assert body["jobs_enabled"] is True and body["builds_access_level"] == "enabled"
    assert body["issues_access_level"] == "enabled" and body["repository_access_level"] == "enabled"
    assert body["permissions"]["project_access"]["access_level"] == MASTER
    assert body["created_at"].endswith("Z") and body["updated_at"].endswith("Z")
    assert body["topics"] == body["tag_list"] == []
    assert len(body["runners_token"]) == 20  # the owner administers it
    assert "forked_from_project" not in body and "statistics" not in body
    assert "builds_enabled" not in body and "open_issues_count" not in body


def test_get_by_encoded_path_and_through_the_client(gl, api4, alice, projects):
    made = projects.create(alice, name="Thing")
    assert api4.as_(alice).get("/projects/alice%2Fthing").json()["id"] == made.id
    assert api4.as_(alice).get("/projects/ALICE%2FTHING").json()["id"] == made.id
    project = gl(alice).projects.get("alice/thing")
    assert project.id == made.id and project.visibility == "private"


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
def test_who_reads_a_project(api4, users, projects, admin, visibility):
    team = make_team(users, projects, admin, visibility)
    readers = {"guest", "reporter", "developer", "master", "owner", "admin"}
    if visibility >= INTERNAL:
        readers.add("outsider")
    if visibility == PUBLIC:
        readers.add("anonymous")
    for role in ("anonymous", "outsider", "guest", "reporter", "developer", "master", "owner", "admin"):
        who = team.user(role)
        client = api4.as_(who) if who is not None else api4.anonymous
        response = client.get(f"/projects/{team.project.id}")
        if role in readers:
            assert response.status_code == 200, role
            body = response.json()
            assert ("runners_token" in body) == (role in ("master", "owner", "admin")), role
        else:
            assert response.status_code == 404 and response.json() == {"message": "404 Project Not Found"}, role


@pytest.mark.parametrize("ident", ["0", "99999999999999999999", "-1", "..%2F..", "a%2Fb%2Fc", "%00", "x" * 300])
def test_unknown_projects_are_404(api4, alice, ident):
    response = api4.as_(alice).get(f"/projects/{ident}")
    assert response.status_code == 404


def test_statistics_for_reporters(api4, rt, users, projects, admin, tmp_path):
    team = make_team(users, projects, admin, PUBLIC)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    first = work.commit("one")
    work.commit("two")
    work.push()
    record_push(rt, team.project, team.user("owner"), ("refs/heads/master", ZERO, work.git("rev-parse", "HEAD")))
    assert first
    body = api4.as_(team.user("reporter")).get(f"/projects/{team.project.id}", params={"statistics": "true"}).json()
    assert body["statistics"]["commit_count"] == 2 and body["statistics"]["repository_size"] > 0
    assert body["empty_repo"] is False and body["default_branch"] == "master"
    for role in ("guest", "outsider"):
        body = api4.as_(team.user(role)).get(f"/projects/{team.project.id}", params={"statistics": "true"}).json()
        assert "statistics" not in body, role


def test_languages_by_bytes(api4, gl, rt, alice, projects, tmp_path, users):
    made = projects.create(alice, visibility=PUBLIC)
    work = WorkingCopy(rt, made, tmp_path / "work")
    sha = work.commit("code", {"a.py": "x" * 300, "lib/b.rb": "y" * 100, "README": "z" * 5000, "c.PY": "w" * 100})
    work.push()
    record_push(rt, made, alice, ("refs/heads/master", ZERO, sha))
    assert gl(alice).projects.get(made.id).languages() == {"Python": 80.0, "Ruby": 20.0}
    assert api4.anonymous.get(f"/projects/{made.id}/languages").json() == {"Python": 80.0, "Ruby": 20.0}
    empty = projects.create(alice, name="empty")
    assert api4.as_(alice).get(f"/projects/{empty.id}/languages").json() == {}
    assert api4.as_(users.create("eve")).get(f"/projects/{empty.id}/languages").status_code == 404


# --- create ---------------------------------------------------------------------------------------


def test_create_through_the_client_with_a_readme_on_main(gl, api4, rt, alice, tmp_path):
    client = gl(alice)
    project = client.projects.create({"name": "Fresh Start", "description": "new", "visibility": "internal",
                                      "initialize_with_readme": True, "topics": ["a", "b"], "jobs_enabled": False})  # fmt: skip
    assert project.path == "fresh-start" and project.visibility == "internal" and project.topics == ["a", "b"]
    assert project.default_branch == "main" and project.empty_repo is False and project.jobs_enabled is False
    assert project.builds_access_level == "disabled"
    repository = rt.config.repositories_dir / f"{project.id}.git"
    assert repo.branch_names(repository) == ["main"] and repo.head_branch(repository) == "main"
    assert api4.as_(alice).get(f"/projects/{project.id}/languages").json() == {}  # a README only
    with rt.db.session() as session:  # the first commit is a first push: the default branch is protected
        assert session.scalars(select(ProtectedBranch.name).where(ProtectedBranch.project_id == project.id)).all() == ["main"]


def test_create_without_readme_is_empty_with_head_on_main(api4, rt, alice):
    response = api4.as_(alice).post("/projects", json={"path": "bare-one"})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["name"] == "bare-one" and body["empty_repo"] is True and body["default_branch"] is None
    assert repo.head_branch(rt.config.repositories_dir / f"{body['id']}.git") == "main"


def test_create_parameters_in_the_query_string(api4, alice):
    response = api4.as_(alice).post("/projects?name=Query%20Made&visibility=public&issues_access_level=disabled")
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["visibility"] == "public" and body["issues_enabled"] is False and body["issues_access_level"] == "disabled"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": "x", "visibility": "secret"}, "visibility"),
        ({"name": "x", "issues_access_level": "private"}, "issues_access_level"),
        ({"name": "x", "issues_access_level": "sometimes"}, "issues_access_level"),
        ({"name": "-bad name!"}, "name"),
        ({"name": "ok", "path": "../../etc"}, "path"),
        ({"name": "ok", "path": "x.git"}, "path"),
        ({"name": "x" * 300}, "name"),
        ({"name": "ok", "import_url": "https://example.com/repo.git"}, "import_url"),
        ({"name": "ok", "namespace_id": 999999}, "namespace"),
        ({"name": "ok", "description": "a\x00b"}, "description"),
    ],
)
def test_create_refuses_bad_input(api4, alice, body, field):
    response = api4.as_(alice).post("/projects", json=body)
    assert response.status_code == 400, response.text
    assert field in str(response.json())
    assert api4.as_(alice).get("/projects", params={"owned": "true"}).json() == []


def test_create_taken_path_and_foreign_namespace(api4, alice, users, projects):
    assert api4.as_(alice).post("/projects", json={"name": "dup"}).status_code == 201
    assert api4.as_(alice).post("/projects", json={"name": "dup"}).status_code in (400, 409)
    bob = users.create("bob")
    group = projects.group(bob, "bobs")
    assert api4.as_(alice).post("/projects", json={"name": "in", "namespace_id": group.id}).status_code == 400
    assert api4.as_(bob).post("/projects", json={"name": "in", "namespace_id": group.id}).status_code == 201
    assert api4.anonymous.post("/projects", json={"name": "anon"}).status_code == 401


def test_create_for_a_user_is_for_admins(api4, alice, admin, users):
    bob = users.create("bob")
    assert api4.as_(alice).post(f"/projects/user/{bob.id}", json={"name": "given"}).status_code == 403
    response = api4.as_(admin).post(f"/projects/user/{bob.id}", json={"name": "given"})
    assert response.status_code == 201 and response.json()["owner"]["id"] == bob.id
    assert response.json()["creator_id"] == bob.id
    assert api4.as_(admin).post("/projects/user/999999", json={"name": "x"}).status_code == 404


# --- edit and delete ------------------------------------------------------------------------------


def test_edit_through_the_client(gl, alice, projects):
    made = projects.create(alice, name="Editable")
    project = gl(alice).projects.get(made.id)
    project.description = "changed"
    project.visibility = "public"
    project.merge_requests_access_level = "disabled"
    project.topics = ["x"]
    project.save()
    again = gl(alice).projects.get(made.id)
    assert again.description == "changed" and again.visibility == "public" and again.merge_requests_enabled is False
    assert again.tag_list == ["x"]


def test_edit_permissions(api4, users, projects, admin):
    team = make_team(users, projects, admin, PUBLIC)
    url = f"/projects/{team.project.id}"
    for role, status in (("outsider", 403), ("guest", 403), ("developer", 403), ("master", 200), ("owner", 200)):
        assert api4.as_(team.user(role)).put(url, json={"description": role}).status_code == status, role
    assert api4.as_(team.user("master")).put(url, json={"visibility": "private"}).status_code == 403
    assert api4.as_(team.user("owner")).put(url, json={"visibility": "private"}).json()["visibility"] == "private"
    assert api4.as_(team.user("outsider")).put(url, json={"description": "x"}).status_code == 404  # private now


def test_delete_answers_202(api4, gl, users, projects, admin):
    team = make_team(users, projects, admin, PUBLIC)
    url = f"/projects/{team.project.id}"
    for role in ("outsider", "developer", "master"):
        assert api4.as_(team.user(role)).delete(url).status_code == 403, role
    response = api4.as_(team.user("owner")).delete(url)
    assert response.status_code == 202 and response.json() == {"message": "202 Accepted"}
    assert api4.as_(team.user("owner")).get(url).status_code == 404
    assert api4.as_(team.user("owner")).delete(url).status_code == 404
    other = projects.create(team.user("owner"), name="second")
    gl(admin).projects.delete(other.id)
    assert api4.as_(admin).get(f"/projects/{other.id}").status_code == 404


# --- forks ----------------------------------------------------------------------------------------


def test_fork_through_the_client(gl, api4, alice, users, projects):
    bob = users.create("bob")
    source = projects.create(alice, name="Origin", visibility=PUBLIC)
    fork = gl(bob).projects.get(source.id, lazy=True).forks.create({})
    assert fork.path_with_namespace == "bob/origin"
    assert fork.forked_from_project["id"] == source.id
    named = gl(bob).projects.get(source.id, lazy=True).forks.create({"name": "Other Name", "path": "other"})
    assert named.path == "other" and named.name == "Other Name"
    forks = gl(alice).projects.get(source.id).forks.list(get_all=True)
    assert sorted(p.id for p in forks) == sorted([fork.id, named.id])
    assert api4.as_(alice).get(f"/projects/{source.id}").json()["forks_count"] == 2
    again = api4.as_(bob).post(f"/projects/{source.id}/fork")
    assert again.status_code == 409


def test_fork_into_a_namespace(api4, alice, users, projects):
    bob = users.create("bob")
    source = projects.create(alice, visibility=PUBLIC, name="src")
    group = projects.group(bob, "bobgroup", visibility=PUBLIC)
    response = api4.as_(bob).post(f"/projects/{source.id}/fork", json={"namespace_path": "bobgroup"})
    assert response.status_code == 201 and response.json()["namespace"]["id"] == group.id
    foreign = projects.group(alice, "alicegroup")
    assert api4.as_(bob).post(f"/projects/{source.id}/fork", json={"namespace_id": foreign.id}).status_code == 404
    private = projects.create(alice, name="hidden")
    assert api4.as_(bob).post(f"/projects/{private.id}/fork").status_code == 404


def test_private_forks_are_not_listed_to_outsiders(api4, alice, users, projects):
    bob, eve = users.create("bob"), users.create("eve")
    source = projects.create(alice, visibility=PUBLIC, name="src")
    fork = api4.as_(bob).post(f"/projects/{source.id}/fork").json()
    assert api4.as_(bob).put(f"/projects/{fork['id']}", json={"visibility": "private"}).status_code == 200
    assert [p["id"] for p in api4.as_(bob).get(f"/projects/{source.id}/forks").json()] == [fork["id"]]
    assert api4.as_(eve).get(f"/projects/{source.id}/forks").json() == []


def test_fork_relations(api4, alice, users, projects, admin):
    source = projects.create(alice, visibility=PUBLIC, name="src")
    target = projects.create(alice, name="tgt")
    response = api4.as_(alice).post(f"/projects/{target.id}/fork/{source.id}")
    assert response.status_code == 201 and response.json()["forked_from_project"]["id"] == source.id
    assert api4.as_(alice).post(f"/projects/{target.id}/fork/{source.id}").status_code == 409
    bob = users.create("bob")
    assert api4.as_(bob).delete(f"/projects/{target.id}/fork").status_code == 404
    assert api4.as_(alice).delete(f"/projects/{target.id}/fork").status_code == 204
    assert api4.as_(alice).delete(f"/projects/{target.id}/fork").status_code == 304
    assert "forked_from_project" not in api4.as_(alice).get(f"/projects/{target.id}").json()
    hidden = projects.create(bob, name="bobs")
    assert api4.as_(alice).post(f"/projects/{target.id}/fork/{hidden.id}").status_code == 404


# --- stars, archive, transfer ---------------------------------------------------------------------


def test_stars_through_the_client(gl, api4, alice, users, projects):
    made = projects.create(alice, visibility=PUBLIC)
    bob = users.create("bob")
    project = gl(bob).projects.get(made.id)
    project.star()
    assert project.star_count == 1
    assert api4.as_(bob).post(f"/projects/{made.id}/star").status_code == 304
    starrers = api4.as_(alice).get(f"/projects/{made.id}/starrers").json()
    assert [s["user"]["username"] for s in starrers] == ["bob"] and starrers[0]["starred_since"].endswith("Z")
    assert api4.as_(alice).get(f"/projects/{made.id}/starrers", params={"search": "nobody"}).json() == []
    assert [p.id for p in gl(bob).projects.list(starred=True)] == [made.id]
    project.unstar()
    assert project.star_count == 0
    assert api4.as_(bob).post(f"/projects/{made.id}/unstar").status_code == 304
    hidden = projects.create(alice, name="hidden")
    assert api4.as_(bob).post(f"/projects/{hidden.id}/star").status_code == 404


def test_archive_through_the_client(gl, api4, users, projects, admin):
    team = make_team(users, projects, admin, PUBLIC)
    project = gl(team.user("owner")).projects.get(team.project.id)
    project.archive()
    assert project.archived is True
    assert api4.as_(team.user("master")).post(f"/projects/{team.project.id}/unarchive").status_code == 403
    assert [p.id for p in gl(team.user("owner")).projects.list(archived=True, owned=True)] == [team.project.id]
    project.unarchive()
    assert project.archived is False


def test_transfer(gl, api4, alice, users, projects):
    made = projects.create(alice, name="moving")
    group = projects.group(alice, "target")
    project = gl(alice).projects.get(made.id)
    project.transfer(group.id)
    body = api4.as_(alice).get(f"/projects/{made.id}").json()
    assert body["path_with_namespace"] == "target/moving" and body["namespace"]["kind"] == "group"
    assert "owner" not in body
    bob = users.create("bob")
    other = projects.group(bob, "bobs")
    assert api4.as_(alice).put(f"/projects/{made.id}/transfer", json={"namespace": other.id}).status_code == 404
    assert api4.as_(alice).put(f"/projects/{made.id}/transfer", json={"namespace": "alice"}).json()["path_with_namespace"] == "alice/moving"
    assert api4.as_(alice).put(f"/projects/{made.id}/transfer", json={}).status_code == 400


def test_head_and_storage_through_the_client(gl, api4, alice, admin, projects):
    made = projects.create(alice)
    assert gl(alice).projects.head()["x-total"] == "1"
    assert gl(alice).projects.head(made.id)["content-type"] == "application/json"
    storage = gl(admin).projects.get(made.id, lazy=True).storage.get()
    assert storage.repository_storage == "default" and storage.project_id == made.id
    assert api4.as_(alice).get(f"/projects/{made.id}/storage").status_code == 403
