"""Project hooks: list, get, add, edit, delete; flags as strings; permissions; python-gitlab."""

from __future__ import annotations

import gitlab
import pytest
from sqlalchemy import select

from codeyard.db.models import ProjectHook

from ..support import ROLES, QueryCounter, make_team

PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
MASTER = 40
FLAGS = ("push_events", "issues_events", "merge_requests_events", "tag_push_events", "note_events", "build_events",
         "enable_ssl_verification")  # fmt: skip
HOOK_FIELDS = {"id", "url", "project_id", "created_at", "disabled_at", "disabled_reason", *FLAGS}
DEFAULTS = {"push_events": "true", "issues_events": "false", "merge_requests_events": "false",
            "tag_push_events": "false", "note_events": "false", "build_events": "false",
            "enable_ssl_verification": "true"}  # fmt: skip


def stored(rt, project=None) -> list[dict]:
    """The hooks in the database (of PROJECT, or all), as column dicts."""
    with rt.db.session() as session:
        query = select(ProjectHook).order_by(ProjectHook.id)
        if project is not None:
            query = query.where(ProjectHook.project_id == project.id)
        return [
            {"id": h.id, "project_id": h.project_id, "url": h.url, **{flag: getattr(h, flag) for flag in FLAGS}}
            for h in session.scalars(query)
        ]


@pytest.fixture
def owner(users):
    return users.create("owner")


@pytest.fixture
def project(projects, owner):
    return projects.create(owner)


def add(api, who, project, **body):
    return api.as_(who).post(f"/projects/{project.id}/hooks", json={"url": "http://example.com/hook", **body})


# --- add ------------------------------------------------------------------------------------------


def test_add_hook_with_defaults(api, owner, project, rt):
    response = add(api, owner, project)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == HOOK_FIELDS
    assert body["url"] == "http://example.com/hook" and body["project_id"] == project.id
    assert {flag: body[flag] for flag in FLAGS} == DEFAULTS
    assert body["created_at"].endswith("Z")
    [row] = stored(rt, project)
    assert row["id"] == body["id"] and row["push_events"] is True and row["issues_events"] is False
    assert row["enable_ssl_verification"] is True


def test_add_hook_with_flags(api, owner, project, rt):
    response = add(api, owner, project, issues_events=True, push_events=False, enable_ssl_verification="false",
                   build_events="1", note_events="on", tag_push_events=True, merge_requests_events="t")  # fmt: skip
    assert response.status_code == 201
    body = response.json()
    assert body["issues_events"] == "true" and body["push_events"] == "false"
    assert body["enable_ssl_verification"] == "false" and body["build_events"] == "true"
    assert body["note_events"] == body["tag_push_events"] == body["merge_requests_events"] == "true"
    [row] = stored(rt, project)
    assert row["push_events"] is False and row["enable_ssl_verification"] is False and row["note_events"] is True


def test_add_hook_form_encoded_strips_spaces_and_keeps_credentials(api, owner, project, rt):
    response = api.as_(owner).post(
        f"/projects/{project.id}/hooks", data={"url": "  https://user:secret@hooks.example.com:8443/x?y=1  ", "note_events": "true"}
    )
    assert response.status_code == 201
    assert response.json()["url"] == "https://user:secret@hooks.example.com:8443/x?y=1"
    assert stored(rt, project)[0]["url"] == "https://user:secret@hooks.example.com:8443/x?y=1"
    assert stored(rt, project)[0]["note_events"] is True


URL_MESSAGE = "must be a valid http or https URL"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, '400 (Bad request) "url" not given'),
        ({"url": ""}, '400 (Bad request) "url" not given'),
        ({"url": "   "}, '400 (Bad request) "url" not given'),
        ({"url": "ftp://example.com/x"}, {"url": [URL_MESSAGE]}),
        ({"url": "example.com/hook"}, {"url": [URL_MESSAGE]}),
        ({"url": "http://"}, {"url": [URL_MESSAGE]}),
        ({"url": "http://exa mple.com/"}, {"url": [URL_MESSAGE]}),
        ({"url": "http://example.com:99999/"}, {"url": [URL_MESSAGE]}),
        ({"url": "javascript:alert(1)"}, {"url": [URL_MESSAGE]}),
        ({"url": 42}, {"url": [URL_MESSAGE]}),
        ({"url": ["http://example.com"]}, {"url": ["must be a string"]}),
        ({"url": "http://example.com/" + "x" * 2048}, {"url": ["is too long (maximum is 2048 characters)"]}),
        ({"url": "http://example.com", "push_events": "maybe"}, {"push_events": ["is not a boolean"]}),
        ({"url": "http://example.com", "enable_ssl_verification": 2}, {"enable_ssl_verification": ["is not a boolean"]}),
    ],
)
def test_add_hook_bad_input_changes_nothing(api, owner, project, rt, body, message):
    response = api.as_(owner).post(f"/projects/{project.id}/hooks", json=body)
    assert response.status_code == 400
    assert response.json() == {"message": message}
    assert stored(rt) == []


# --- list and get ---------------------------------------------------------------------------------


def test_list_and_get(api, owner, project, projects, rt):
    other = projects.create(owner, name="other")
    first = add(api, owner, project).json()
    second = add(api, owner, project, url="https://example.org/b").json()
    foreign = add(api, owner, other).json()
    response = api.as_(owner).get(f"/projects/{project.id}/hooks")
    assert response.status_code == 200
    assert [h["id"] for h in response.json()] == [first["id"], second["id"]]
    assert response.headers["x-total"] == "2"
    assert api.as_(owner).get(f"/projects/{project.ref}/hooks/{second['id']}").json() == second
    for missing in (foreign["id"], 999999, 99999999999, "abc"):
        response = api.as_(owner).get(f"/projects/{project.id}/hooks/{missing}")
        assert response.status_code == 404
        assert response.json() == {"message": "404 Not found"}
    response = api.as_(owner).get(f"/projects/{project.id}/hooks", params={"per_page": 1, "page": 2})
    assert [h["id"] for h in response.json()] == [second["id"]]


def test_list_query_count_does_not_depend_on_page_size(api, owner, project, rt):
    for i in range(5):
        add(api, owner, project, url=f"http://example.com/{i}")
    counts = []
    for per_page in (1, 5):
        with QueryCounter(rt) as counter:
            response = api.as_(owner).get(f"/projects/{project.id}/hooks", params={"per_page": per_page})
        assert len(response.json()) == per_page
        counts.append(counter.count)
    assert counts[0] == counts[1]
    assert counts[0] <= 5


# --- edit -----------------------------------------------------------------------------------------


def test_edit_hook(api, owner, project, rt):
    hook = add(api, owner, project, issues_events=True).json()
    response = api.as_(owner).put(
        f"/projects/{project.id}/hooks/{hook['id']}", json={"url": "https://example.net/new", "push_events": False}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["url"] == "https://example.net/new" and body["push_events"] == "false"
    # Flags not sent keep their value.
    assert body["issues_events"] == "true" and body["enable_ssl_verification"] == "true"
    assert body["id"] == hook["id"] and body["created_at"] == hook["created_at"]
    [row] = stored(rt, project)
    assert row["url"] == "https://example.net/new" and row["push_events"] is False and row["issues_events"] is True


@pytest.mark.parametrize(
    ("target", "body", "status", "message"),
    [
        ("missing", {}, 404, "404 Not found"),
        ("missing", {"url": "ftp://x"}, 404, "404 Not found"),
        ("foreign", {"url": "http://example.com/x"}, 404, "404 Not found"),
        ("abc", {"url": "http://example.com/x"}, 404, "404 Not found"),
        ("hook", {}, 400, '400 (Bad request) "url" not given'),
        ("hook", {"push_events": False}, 400, '400 (Bad request) "url" not given'),
        ("hook", {"url": "ftp://example.com/x"}, 400, {"url": [URL_MESSAGE]}),
        ("hook", {"url": "http://example.com/x", "note_events": "perhaps"}, 400, {"note_events": ["is not a boolean"]}),
    ],
)
def test_edit_hook_refusals_change_nothing(api, owner, project, projects, rt, target, body, status, message):
    hook = add(api, owner, project).json()
    foreign = add(api, owner, projects.create(owner, name="other")).json()
    before = stored(rt)
    ident = {"missing": 999999, "foreign": foreign["id"], "hook": hook["id"]}.get(target, target)
    response = api.as_(owner).put(f"/projects/{project.id}/hooks/{ident}", json=body)
    assert response.status_code == status
    assert response.json() == {"message": message}
    assert stored(rt) == before


# --- delete ---------------------------------------------------------------------------------------


def test_delete_hook_is_idempotent_and_scoped(api, owner, project, projects, rt):
    hook = add(api, owner, project).json()
    other = projects.create(owner, name="other")
    foreign = add(api, owner, other).json()
    response = api.as_(owner).delete(f"/projects/{project.id}/hooks/{hook['id']}")
    assert response.status_code == 200
    assert response.json() == hook
    assert stored(rt, project) == []
    again = api.as_(owner).delete(f"/projects/{project.id}/hooks/{hook['id']}")
    assert again.status_code == 200 and again.json() is None
    # A hook of another project is not touched through this project.
    response = api.as_(owner).delete(f"/projects/{project.id}/hooks/{foreign['id']}")
    assert response.status_code == 200 and response.json() is None
    assert [h["id"] for h in stored(rt)] == [foreign["id"]]
    assert api.as_(owner).delete(f"/projects/{project.id}/hooks/99999999999").json() is None
    assert api.as_(owner).delete(f"/projects/{project.id}/hooks/abc").status_code == 404


def test_delete_without_id_is_405(api, owner, project):
    response = api.as_(owner).delete(f"/projects/{project.id}/hooks")
    assert response.status_code == 405
    assert response.json() == {"message": "405 Method Not Allowed"}
    assert set(response.headers["allow"].split(", ")) == {"GET", "HEAD", "POST"}


def test_hooks_go_with_their_project(api, owner, project, rt):
    add(api, owner, project)
    assert api.as_(owner).delete(f"/projects/{project.id}").status_code == 200
    assert stored(rt) == []


# --- permissions ----------------------------------------------------------------------------------


def expected(role: str, visibility: int, success: int) -> int:
    if role == "anonymous":
        return 401
    if role == "outsider":
        return 404 if visibility == PRIVATE else 403
    if role in ("guest", "reporter", "developer"):
        return 403
    return success


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
def test_permissions(api, users, projects, admin, rt, visibility):
    team = make_team(users, projects, admin, visibility)
    project = team.project
    base = f"/projects/{project.id}/hooks"
    existing = add(api, team.user("owner"), project).json()
    for role in ROLES:
        caller = api.as_(team.user(role))
        assert caller.get(base).status_code == expected(role, visibility, 200), role
        assert caller.get(f"{base}/{existing['id']}").status_code == expected(role, visibility, 200), role
        created = caller.post(base, json={"url": f"http://example.com/{role}"})
        assert created.status_code == expected(role, visibility, 201), role
        target = created.json()["id"] if created.status_code == 201 else existing["id"]
        edited = caller.put(f"{base}/{target}", json={"url": f"http://example.com/{role}/edited"})
        assert edited.status_code == expected(role, visibility, 200), role
        removed = caller.delete(f"{base}/{target}")
        assert removed.status_code == expected(role, visibility, 200), role
    # Only the first hook is left, untouched by every refused call.
    assert [(h["id"], h["url"]) for h in stored(rt)] == [(existing["id"], "http://example.com/hook")]


def test_group_master_manages_hooks(api, users, projects):
    owner, master, dev = users.create("owner"), users.create("gmaster"), users.create("gdev")
    group = projects.group(owner, "team")
    projects.add_group_member(group, master, MASTER)
    projects.add_group_member(group, dev, 30)
    project = projects.create(owner, group=group)
    assert add(api, master, project).status_code == 201
    assert add(api, dev, project).status_code == 403
    assert api.as_(dev).get(f"/projects/{project.id}/hooks").status_code == 403


# --- python-gitlab 1.4.0 against a real server ---------------------------------------------------


def test_python_gitlab_hooks(live, owner, project, rt):
    gl = gitlab.Gitlab(live.base_url, private_token=owner.token, api_version="3")
    remote = gl.projects.get(project.id)
    hook = remote.hooks.create({"url": "http://example.com/hook", "issues_events": True})
    assert hook.id and hook.url == "http://example.com/hook"
    assert hook.push_events == "true" and hook.issues_events == "true" and hook.note_events == "false"
    assert [h.id for h in remote.hooks.list()] == [hook.id]
    fetched = remote.hooks.get(hook.id)
    assert fetched.enable_ssl_verification == "true"
    fetched.url = "https://example.com/changed"
    fetched.note_events = True
    fetched.save()
    again = remote.hooks.get(hook.id)
    assert again.url == "https://example.com/changed" and again.note_events == "true" and again.issues_events == "true"
    with pytest.raises(gitlab.GitlabCreateError) as caught:
        remote.hooks.create({"url": "ftp://example.com"})
    assert caught.value.response_code == 400
    again.delete()
    assert remote.hooks.list() == []
    with pytest.raises(gitlab.GitlabGetError) as caught:
        remote.hooks.get(hook.id)
    assert caught.value.response_code == 404
    assert stored(rt) == []
