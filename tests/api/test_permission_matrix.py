"""The permission matrix: every project endpoint x every role x every visibility.

Expectations restate the reference's ability table (section 3) independently of the policy code:
each endpoint names the least member role it needs and whether public/internal projects grant it
to every signed-in user. Then, for any endpoint:
  anonymous -> 401 (the API needs authentication);
  an outsider of a private project -> 404 (never reveal it exists);
  a role below the need -> 403, unless the project's visibility grants it;
  the need or above, and admins -> the endpoint's success status.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from codeyard.db.models import ProjectHook

ROLES = ("anonymous", "outsider", "guest", "reporter", "developer", "master", "owner", "admin")
RANK = {"guest": 10, "reporter": 20, "developer": 30, "master": 40, "owner": 50}
VISIBILITIES = {"private": 0, "internal": 10, "public": 20}


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # {id} is the project; {user} a user id; {other} another project's id
    needs: str  # least role: guest, reporter, developer, master, owner, or admin (403 for everyone else)
    ok: int = 200
    public_grants: bool = False  # visibility internal/public gives it to any signed-in user
    body: dict | object = field(default_factory=dict)  # or a function of (visibility level, world)
    files: dict | None = None
    destructive: bool = False  # success changes the world: rebuild it for the next role
    ok_for: dict = field(default_factory=dict)  # role -> status where success differs (e.g. 409)

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"

    def body_for(self, level: int, world=None) -> dict | None:
        body = self.body(level, world) if callable(self.body) else self.body
        return body or None

    def request(self, client, world, level: int):
        path = self.path.format(
            id=world.project.id, owner=world.users["owner"].id, guest=world.users["guest"].id, hook=world.hook_id
        )
        if self.files:
            return client.request(self.method, path, files=self.files)
        return client.request(self.method, path, json=self.body_for(level, world))


ENDPOINTS = [
    Endpoint("GET", "/projects/{id}", "guest", public_grants=True),
    Endpoint("GET", "/projects/{id}/events", "guest", public_grants=True),
    Endpoint("PUT", "/projects/{id}", "master", body={"description": "changed"}),
    Endpoint("PUT", "/projects/{id}", "owner", body={"name": "Renamed"}),
    Endpoint("PUT", "/projects/{id}", "owner", body=lambda level, _: {"visibility_level": 20 if level != 20 else 0}),
    Endpoint("DELETE", "/projects/{id}", "owner", destructive=True),
    Endpoint("POST", "/projects/fork/{id}", "reporter", ok=201, public_grants=True, destructive=True, ok_for={"owner": 409}),
    Endpoint("DELETE", "/projects/{id}/fork", "admin"),
    Endpoint("POST", "/projects/{id}/star", "guest", ok=201, public_grants=True, destructive=True),
    Endpoint("POST", "/projects/{id}/archive", "owner", ok=201, destructive=True),
    Endpoint("POST", "/projects/{id}/unarchive", "owner", ok=201),
    Endpoint("GET", "/projects/{id}/members", "guest", public_grants=True),
    Endpoint("GET", "/projects/{id}/members/{owner}", "guest", public_grants=True),
    Endpoint("POST", "/projects/{id}/members", "master", ok=201, body=lambda level, w: {"user_id": w.users["outsider"].id, "access_level": 20}),
    Endpoint("PUT", "/projects/{id}/members/{guest}", "master", body={"access_level": 20}),
    Endpoint("DELETE", "/projects/{id}/members/{guest}", "master", destructive=True),
    Endpoint("GET", "/projects/{id}/hooks", "master"),
    Endpoint("POST", "/projects/{id}/hooks", "master", ok=201, body={"url": "http://example.com/hook"}),
    Endpoint("GET", "/projects/{id}/hooks/{hook}", "master"),
    Endpoint("PUT", "/projects/{id}/hooks/{hook}", "master", body={"url": "http://example.com/other"}),
    Endpoint("DELETE", "/projects/{id}/hooks/{hook}", "master", destructive=True),
    Endpoint("POST", "/projects/{id}/uploads", "guest", ok=201, public_grants=True, files={"file": ("a.txt", b"hello")}),
]


def one_per_role(users, tag: str = "", prefix: str = "") -> dict:
    """A new user per role but anonymous, named PREFIX<role>TAG<n>."""
    people = {role: users.create(f"{prefix}{role}{tag}{_next()}") for role in ROLES if role not in ("anonymous", "admin")}
    people["admin"] = users.create(f"{prefix}admin{_next()}", admin=True)
    return people


class World:
    """A project of VISIBILITY with one user per role; given PEOPLE (a previous world's users), a
    fresh project with its members and hook for them: no endpoint of the matrix changes a user."""

    def __init__(self, users, projects, visibility: int, people: dict | None = None):
        self.users = people or one_per_role(users, str(visibility))
        self.project = projects.create(self.users["owner"], name=f"target{_next()}", visibility=visibility)
        for role in ("guest", "reporter", "developer", "master"):
            projects.add_member(self.project, self.users[role], RANK[role])
        with projects.rt.db.transaction() as session:
            hook = ProjectHook(project_id=self.project.id, url="http://example.com/existing")
            session.add(hook)
            session.flush()
            self.hook_id = hook.id

    def client(self, api, role):
        return api.anonymous if role == "anonymous" else api.as_(self.users[role])


_counter = iter(range(1, 10**9))


def _next() -> int:
    return next(_counter)


def expected(endpoint: Endpoint, role: str, visibility: str) -> int:
    if role == "anonymous":
        return 401
    success = endpoint.ok_for.get(role, endpoint.ok)
    if role == "admin":
        return success
    if endpoint.needs == "admin":  # refused before the project is looked up, so nothing leaks
        return 403
    if role == "outsider":
        if visibility == "private":
            return 404
        return success if endpoint.public_grants else 403
    if RANK[role] >= RANK[endpoint.needs]:
        return success
    if endpoint.public_grants and visibility != "private":
        return success
    return 403


@pytest.mark.parametrize("visibility", list(VISIBILITIES))
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.id} {sorted(e.body) if isinstance(e.body, dict) else ''}")
def test_matrix(api, users, projects, endpoint, visibility):
    world = World(users, projects, VISIBILITIES[visibility])
    failures = []
    for role in ROLES:
        response = endpoint.request(world.client(api, role), world, VISIBILITIES[visibility])
        want = expected(endpoint, role, visibility)
        if response.status_code != want:
            failures.append(f"{role}: {response.status_code} (want {want}) {response.text[:120]}")
        elif want == 404:
            assert response.json() == {"message": "404 Project Not Found"}
        if endpoint.destructive and response.status_code < 300:
            world = World(users, projects, VISIBILITIES[visibility], people=world.users)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("visibility", ["private"])
def test_private_projects_do_not_leak_by_path(api, users, projects, visibility):
    world = World(users, projects, VISIBILITIES[visibility])
    outsider = api.as_(world.users["outsider"])
    known = outsider.get(f"/projects/{world.project.ref}")
    unknown = outsider.get("/projects/nobody%2Fnothing")
    assert known.status_code == unknown.status_code == 404
    assert known.json() == unknown.json()


# --- groups ---------------------------------------------------------------------------------------

GROUP_ENDPOINTS = [
    # (method, path, least member role, success status, readable groups grant it, body)
    ("GET", "/groups/{id}", "guest", 200, True, None),
    ("GET", "/groups/{id}/members", "guest", 200, True, None),
    ("GET", "/groups/{id}/members/{owner}", "guest", 200, True, None),
    ("PUT", "/groups/{id}", "owner", 200, False, {"description": "changed"}),
    ("POST", "/groups/{id}/members", "owner", 201, False, "outsider"),
    ("PUT", "/groups/{id}/members/{guest}", "owner", 200, False, {"access_level": 20}),
    ("DELETE", "/groups/{id}/members/{guest}", "owner", 200, False, None),
    ("DELETE", "/groups/{id}", "owner", 200, False, None),
]


class GroupWorld:
    """A group of VISIBILITY with one user per role; given PEOPLE, a fresh group for them."""

    def __init__(self, users, projects, visibility: int, people: dict | None = None):
        self.users = people or one_per_role(users, prefix="g")
        self.group = projects.group(self.users["owner"], f"grp{_next()}", visibility=visibility)
        for role in ("guest", "reporter", "developer", "master"):
            projects.add_group_member(self.group, self.users[role], RANK[role])


def group_expected(least: str, success: int, readable_grants: bool, role: str, visibility: str) -> int:
    if role == "anonymous":
        return 401
    if role == "admin" or (role != "outsider" and RANK[role] >= RANK[least]):
        return success
    readable = role != "outsider" or visibility != "private"
    if not readable:
        return 404
    return success if readable_grants else 403


@pytest.mark.parametrize("visibility", list(VISIBILITIES))
@pytest.mark.parametrize("endpoint", GROUP_ENDPOINTS, ids=lambda e: f"{e[0]} {e[1]}")
def test_group_matrix(api, users, projects, endpoint, visibility):
    method, template, least, success, readable_grants, body = endpoint
    world = GroupWorld(users, projects, VISIBILITIES[visibility])
    failures = []
    for role in ROLES:
        client = api.anonymous if role == "anonymous" else api.as_(world.users[role])
        path = template.format(id=world.group.id, owner=world.users["owner"].id, guest=world.users["guest"].id)
        payload = {"user_id": world.users["outsider"].id, "access_level": 20} if body == "outsider" else body
        response = client.request(method, path, json=payload)
        want = group_expected(least, success, readable_grants, role, visibility)
        if response.status_code != want:
            failures.append(f"{role}: {response.status_code} (want {want}) {response.text[:120]}")
        if response.status_code < 300 and method != "GET":
            world = GroupWorld(users, projects, VISIBILITIES[visibility], people=world.users)
    assert not failures, "\n".join(failures)
