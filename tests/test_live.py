"""A real server process driven over HTTP, by httpx and by python-gitlab 1.4.0 (API v3)."""

from __future__ import annotations

import http.client
import statistics
import time
from pathlib import Path

import gitlab
import pytest

from codeyard import config as config_module

from .conftest import TEST_HASH
from .support import LiveServer


@pytest.mark.both_backends
def test_live_server_answers_the_api(live, users):
    alice = users.create("alice")
    response = live.api.as_(alice).get("/user")
    assert response.status_code == 200
    assert response.json()["username"] == "alice"
    assert response.json()["web_url"] == f"{live.base_url}/u/alice"
    assert live.api.anonymous.get("/user").status_code == 401


def test_live_pagination_links_are_absolute(live, users, admin):
    for i in range(3):
        users.create(f"member{i}")
    response = live.api.as_(admin).get("/users", params={"per_page": 2})
    assert f'<{live.base_url}/api/v3/users?page=2&per_page=2>; rel="next"' in response.headers["link"]


@pytest.fixture
def gl(live, admin):
    client = gitlab.Gitlab(live.base_url, private_token=admin.token, api_version="3")
    client.auth()
    return client


def test_python_gitlab_token_auth_and_users(gl, users, admin):
    assert gl.user.username == "sysadmin"
    alice = users.create("alice")
    everyone = gl.users.list(all=True)
    assert {u.username for u in everyone} == {"sysadmin", "alice"}
    created = gl.users.create({"email": "carol@example.com", "password": "password123", "username": "carol", "name": "Carol"})
    assert created.id and created.username == "carol"
    fetched = gl.users.get(alice.id)
    assert fetched.username == "alice"
    fetched.block()
    assert gl.users.get(alice.id).state == "blocked"
    fetched.unblock()
    assert gl.users.get(alice.id).state == "active"
    with pytest.raises(gitlab.GitlabCreateError) as caught:
        gl.users.create({"email": "carol@example.com", "password": "password123", "username": "carol2", "name": "C"})
    assert caught.value.response_code == 409
    created.delete()
    assert {u.username for u in gl.users.list(all=True)} == {"sysadmin", "alice"}


def test_python_gitlab_password_auth(live, users):
    alice = users.create("alice")
    client = gitlab.Gitlab(live.base_url, email="alice", password=alice.password, api_version="3")
    client.auth()
    assert client.user.username == "alice"
    assert client.private_token


def test_python_gitlab_follows_pages(gl, users):
    for i in range(25):
        users.create(f"member{i:02d}")
    names = [u.username for u in gl.users.list(all=True, per_page=10)]
    assert len(names) == 26 and len(set(names)) == 26


def test_python_gitlab_settings(gl):
    settings = gl.settings.get()
    assert settings.default_projects_limit == 10
    settings.default_projects_limit = 42
    settings.signup_enabled = False
    settings.save()
    again = gl.settings.get()
    assert again.default_projects_limit == 42 and again.signup_enabled is False
    # The client sends both names of the domain list: the edited alias must win over the unchanged one.
    again.domain_whitelist = ["example.com"]
    again.save()
    assert gl.settings.get().restricted_signup_domains == ["example.com"]
    edited = gl.settings.get()
    edited.restricted_signup_domains = ["example.org"]
    edited.save()
    assert gl.settings.get().domain_whitelist == ["example.org"]


def test_python_gitlab_errors(live, users):
    client = gitlab.Gitlab(live.base_url, private_token="wrong", api_version="3")
    with pytest.raises(gitlab.GitlabAuthenticationError):
        client.auth()


@pytest.mark.both_backends
def test_python_gitlab_projects(gl, live, users):
    from gitlab.v3.objects import Project

    alice = users.create("alice")
    as_alice = gitlab.Gitlab(live.base_url, private_token=alice.token, api_version="3")
    created = as_alice.projects.create({"name": "Client Made", "description": "via python-gitlab", "public": True})
    assert created.path == "client-made" and created.visibility_level == 20
    assert [p.id for p in as_alice.projects.list()] == [created.id]
    assert as_alice.projects.get("alice/client-made").id == created.id
    created.description = "changed"
    created.save()
    assert as_alice.projects.get(created.id).description == "changed"
    assert [p.id for p in as_alice.projects.owned()] == [created.id]
    assert [p.id for p in gl.projects.search("client")] == [created.id]
    assert len(gl.projects.all()) == 1
    starred = gl.projects.get(created.id).star()
    assert isinstance(starred, Project) and starred.star_count == 1
    assert [p.id for p in gl.projects.starred()] == [created.id]
    gl.projects.get(created.id).unstar()
    fork = gl.projects.get(created.id).forks.create({})
    assert fork.namespace["path"] == "sysadmin"
    project = as_alice.projects.get(created.id)
    project.archive()
    assert as_alice.projects.get(created.id).archived is True
    project.unarchive()
    other = as_alice.projects.create({"name": "Other"})
    gl.projects.get(other.id).create_fork_relation(created.id)
    assert as_alice.projects.get(other.id).forked_from_project["id"] == created.id
    gl.projects.get(other.id).delete_fork_relation()
    uploaded = as_alice.projects.get(created.id).upload("notes.txt", filedata=b"hello")
    assert uploaded["url"].endswith("/notes.txt")
    as_alice.projects.delete(other.id)
    assert [p.id for p in as_alice.projects.list()] == [created.id]


# Linux delays an ACK by at least 40 ms. With Nagle's algorithm on, a server that writes an answer
# in two pieces (uvicorn: head, then body) holds the second until the client's delayed ACK of the
# first arrives: every answer on a kept connection takes 40 ms or more.
DELAYED_ACK = 0.040


@pytest.mark.live
def test_a_multi_process_server_answers_a_kept_connection_without_delay(tmp_path):
    """`codeyard serve --workers 2` (uvicorn's supervisor binds the socket with proto 0, and
    asyncio then leaves TCP_NODELAY off): sequential requests on one connection take far less
    than the delayed ACK each. Judged by the median, so that a stall of the machine cannot fail it."""
    data_dir = tmp_path / "data"
    config = config_module.Config(data_dir=data_dir, database_url=config_module.sqlite_url(data_dir),
                                  base_url="http://127.0.0.1", workers=2, **TEST_HASH)  # fmt: skip
    server = LiveServer(config, tmp_path)
    server.start()
    try:
        assert len(_children(server.process.pid)) >= 2  # the multi-process server, not one process
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        durations, kept = [], None
        for _ in range(40):
            started = time.perf_counter()
            connection.request("GET", "/-/health")
            response = connection.getresponse()
            response.read()
            durations.append(time.perf_counter() - started)
            assert response.status == 200
            kept = kept or connection.sock
            assert connection.sock is kept  # one connection throughout
        connection.close()
    finally:
        server.stop()
    assert statistics.median(durations) < DELAYED_ACK / 2, [round(d * 1000, 1) for d in durations]


def _children(pid: int) -> list[int]:
    return [int(child) for path in Path(f"/proc/{pid}/task").glob("*/children") for child in path.read_text().split()]
