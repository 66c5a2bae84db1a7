"""v4 without a token, as GitLab allows it: reads of public projects and groups and what they hold
(repository, merge requests and their threads, members), the public lists and users; 404 on
internal and private ones; 401 on what needs a user (the caller's own things, global merge
requests, namespaces, version, tokens, settings) and on every write.

The tables walk the router itself: every v4 GET is either opened (and sampled here on each
visibility) or answers 401, and only GETs may be opened."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from sqlalchemy import update

from codeyard.db.models import Project
from codeyard.routes import API4
from codeyard.services import settings

from ..support import WorkingCopy

PUBLIC, INTERNAL, PRIVATE = 20, 10, 0

# Query parameters an opened route needs to answer 200.
QUERIES = {
    "/projects/:id/repository/files/:file_path": {"ref": "master"},
    "/projects/:id/repository/files/:file_path/blame": {"ref": "master"},
    "/projects/:id/repository/compare": {"from": "master", "to": "feature"},
    "/projects/:id/repository/merge_base": {"refs[]": ["master", "feature"]},
}
# Opened routes that name no project or group: the same answer whatever is private.
UNSCOPED = {"/projects", "/groups", "/users", "/users/:id", "/users/:id/projects"}
# The GETs that need a user (GitLab's reasons): the caller's own things, admin-only reads, and
# what GitLab authenticates first (global merge requests, namespaces, version, metadata, hooks).
NEEDS_A_USER = {
    "/user", "/user/emails", "/user/emails/:email_id",  # the caller's own
    "/personal_access_tokens", "/personal_access_tokens/self", "/personal_access_tokens/:id",
    "/merge_requests",  # 401 for an anonymous scope
    "/namespaces", "/namespaces/:id", "/namespaces/:id/exists",  # authenticate!
    "/version", "/metadata",  # authenticate!
    "/projects/:id/hooks", "/projects/:id/hooks/:hook_id", "/projects/:id/hooks/:hook_id/events",  # maintainers
    "/users/:id/emails", "/users/:id/impersonation_tokens", "/users/:id/impersonation_tokens/:token_id",  # admins
    "/application/settings", "/projects/:id/storage",  # admins
}
# Routes that are not GETs and still let an anonymous caller through (none: writes need a user).
OPEN_WRITES: set[tuple[str, str]] = set()


def v4_routes():
    return [route for routes in API4 for route in routes.routes]


def _place(world, subject, template: str) -> str:
    """TEMPLATE with each parameter filled from SUBJECT (one project with its group) and WORLD."""
    values = {
        "id": {"projects": subject.project_id, "groups": subject.group_id}.get(template.split("/")[1], world.owner.id),
        "merge_request_iid": subject.iid, "note_id": subject.note_id, "discussion_id": subject.discussion_id,
        "award_id": subject.note_award_id if "/notes/" in template else subject.award_id,
        "sha": subject.blob if "/blobs/" in template else subject.head, "file_path": "a.txt",
        "branch": "master", "name": "master", "tag_name": "v1", "user_id": world.member.id,
    }  # fmt: skip
    return re.sub(r"[:*](\w+)", lambda match: str(values.get(match.group(1), 1)), template)


def _subject(api, api4, rt, world, tmp_path, visibility: int) -> SimpleNamespace:
    """A group and a project of VISIBILITY: master and feature pushed, tag v1, master protected, a
    merge request with a note (a thread) and award emoji on both, a direct member in each."""
    owner, projects = world.owner, world.projects
    group = projects.group(owner, f"g{visibility}", visibility=visibility)
    project = projects.create(owner, group=group, name=f"p{visibility}", visibility=visibility)
    projects.add_member(project, world.member, 30)
    projects.add_group_member(group, world.member, 30)
    work = WorkingCopy(rt, project, tmp_path / f"work{visibility}")
    work.commit("first", {"a.txt": "one\n"})
    work.git("checkout", "-q", "-b", "feature")
    head = work.commit("feature work", {"a.txt": "two\n", "b.txt": "b\n"})
    work.push("master", "feature")
    with rt.db.transaction() as session:
        session.execute(update(Project).where(Project.id == project.id).values(default_branch="master"))
    v3, v4, base = api.as_(owner), api4.as_(owner), f"/projects/{project.id}"
    created = v3.post(f"{base}/merge_requests", json={"source_branch": "feature", "target_branch": "master", "title": "Two"})
    assert created.status_code == 200, created.text  # v3 answers 200
    iid = v3.get(f"{base}/merge_requests/{created.json()['id']}").json()["iid"]
    mr = f"{base}/merge_requests/{iid}"
    note = v4.post(f"{mr}/notes", json={"body": "looks good"})
    assert note.status_code == 201, note.text
    posted = [v4.post(path, json={"name": "thumbsup"}) for path in (f"{mr}/award_emoji", f"{mr}/notes/{note.json()['id']}/award_emoji")]
    assert [answer.status_code for answer in posted] == [201, 201], posted[0].text
    for path, body in ((f"{base}/repository/tags", {"tag_name": "v1", "ref": "master"}), (f"{base}/protected_branches", {"name": "master"})):
        assert v4.post(path, json=body).status_code == 201
    discussion = v4.get(f"{mr}/discussions").json()[0]["id"]
    blob = v4.get(f"{base}/repository/tree", params={"ref": "feature"}).json()[0]["id"]
    return SimpleNamespace(project_id=project.id, group_id=group.id, iid=iid, note_id=note.json()["id"], discussion_id=discussion,
                           award_id=posted[0].json()["id"], note_award_id=posted[1].json()["id"], head=head, blob=blob)  # fmt: skip


@pytest.fixture
def world(api, api4, rt, users, projects, tmp_path):
    world = SimpleNamespace(owner=users.create("keeper"), member=users.create("member"), projects=projects)
    world.subjects = {visibility: _subject(api, api4, rt, world, tmp_path, visibility) for visibility in (PUBLIC, INTERNAL, PRIVATE)}
    return world


def _writes_are_401_and_change_nothing(api4, world):
    anonymous, subject = api4.anonymous, world.subjects[PUBLIC]
    writes = [route for route in v4_routes() if route.method != "GET"]
    answers = {(route.method, route.template): anonymous.request(route.method, _place(world, subject, route.template), json={}).status_code
               for route in writes}  # fmt: skip
    assert {key: status for key, status in answers.items() if status != 401} == {}
    assert len(answers) > 60
    tags = api4.as_(world.owner).get(f"/projects/{subject.project_id}/repository/tags").json()
    assert [tag["name"] for tag in tags] == ["v1"]


def test_every_v4_get_is_open_on_public_things_only_or_needs_a_user_and_writes_need_one(api4, world):
    anonymous = api4.anonymous
    opened, refused = [], []
    for route in v4_routes():
        if route.method != "GET":
            continue
        template, query = route.template, QUERIES.get(route.template, {})
        if route.auth == "required":
            answer = anonymous.get(_place(world, world.subjects[PUBLIC], template), params=query)
            refused.append((template, answer.status_code))
            continue
        statuses = tuple(anonymous.get(_place(world, world.subjects[v], template), params=query).status_code
                         for v in (PUBLIC, INTERNAL, PRIVATE))  # fmt: skip
        opened.append((template, statuses))
    assert [(template, status) for template, status in refused if status != 401] == []
    expected = {template: (200, 200, 200) if template in UNSCOPED else (200, 404, 404) for template, _ in opened}
    assert dict(opened) == expected
    assert {template for template, _ in refused} == NEEDS_A_USER
    assert len(opened) > 50  # the project's reads, merge requests and their threads, members, groups and users
    _writes_are_401_and_change_nothing(api4, world)


def test_only_gets_are_open():
    open_writes = {(route.method, route.template) for route in v4_routes()
                   if route.auth != "required" and route.method != "GET"}  # fmt: skip
    assert open_writes == OPEN_WRITES
    assert any(route.auth == "optional" for route in v4_routes() if route.method == "GET")


def test_lists_hold_public_things_only(api4, world):
    anonymous = api4.anonymous
    public = world.subjects[PUBLIC]
    ours = {subject.project_id for subject in world.subjects.values()}
    listed = anonymous.get("/projects", params={"per_page": 100})
    assert listed.status_code == 200
    assert {row["id"] for row in listed.json()} & ours == {public.project_id}
    assert all(row["visibility"] == "public" for row in listed.json())
    groups = anonymous.get("/groups", params={"per_page": 100}).json()
    assert [group["id"] for group in groups] == [public.group_id]
    for params in ({"owned": "true"}, {"min_access_level": 10}, {"all_available": "false"}):
        assert anonymous.get("/groups", params=params).json() == []
    assert [row["id"] for row in anonymous.get(f"/groups/{public.group_id}/projects").json()] == [public.project_id]
    requests = anonymous.get(f"/groups/{public.group_id}/merge_requests").json()
    assert [(row["project_id"], row["iid"]) for row in requests] == [(public.project_id, public.iid)]
    assert anonymous.get(f"/users/{world.owner.id}").json()["username"] == "keeper"
    assert "email" not in anonymous.get(f"/users/{world.owner.id}").json()
    assert anonymous.get("/merge_requests", params={"scope": "all"}).status_code == 401


def test_users_are_closed_when_the_public_level_is_restricted(api4, rt, users):
    keeper = users.create("keeper")
    paths = ("/users", f"/users/{keeper.id}", f"/users/{keeper.id}/projects")
    assert [api4.anonymous.get(path).status_code for path in paths] == [200, 200, 200]
    with rt.db.transaction() as session:
        settings.update(session, {"restricted_visibility_levels": [PUBLIC]})
    refused = [api4.anonymous.get(path) for path in paths]
    assert [(answer.status_code, answer.json()["message"]) for answer in refused] == [
        (403, "403 Forbidden"), (404, "404 User Not Found"), (404, "404 User Not Found")]
    assert [api4.as_(keeper).get(path).status_code for path in paths] == [200, 200, 200]


def test_python_gitlab_without_a_token(gl, gitlab, world):
    public, private = world.subjects[PUBLIC], world.subjects[PRIVATE]
    client = gl(None)
    project = client.projects.get(public.project_id)
    assert project.visibility == "public" and project.default_branch == "master"
    assert project.files.get("a.txt", ref="master").decode() == b"one\n"
    assert [(mr.iid, mr.title) for mr in project.mergerequests.list()] == [(public.iid, "Two")]
    assert [note.body for note in project.mergerequests.get(public.iid).notes.list()] == ["looks good"]
    assert sorted(item["name"] for item in project.repository_tree(ref="feature")) == ["a.txt", "b.txt"]
    with pytest.raises(gitlab.exceptions.GitlabGetError) as refused:
        client.projects.get(private.project_id)
    assert refused.value.response_code == 404
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError):  # 401
        project.mergerequests.get(public.iid, lazy=True).notes.create({"body": "drive-by"})
    # A token that names nobody is 401 even where none is needed (GitLab v4), not an anonymous read.
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError):
        gl("not-a-token").projects.get(public.project_id)
