"""Git's HTTP answers are never pages a browser would render.

An error page that echoed a hostile URL as HTML, or a response a browser could sniff into HTML,
would let a link to the git endpoints run script in the service's origin. Every git response says
`X-Content-Type-Options: nosniff`, and codeyard's own git errors are `text/plain`.
"""

from __future__ import annotations

import httpx
import pytest

from codeyard.git import storage
from tests.githttp.conftest import server_ref


@pytest.fixture
def alice(users):
    return users.create("alice")


def _assert_plain(response: httpx.Response, status: int, text: str) -> None:
    assert response.status_code == status
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert text in response.text
    assert "<" not in response.text


def _info_refs(live, path: str, auth=None, service: str | None = "git-upload-pack") -> httpx.Response:
    params = {"service": service} if service else {}
    return httpx.get(f"{live.base_url}/{path}/info/refs", params=params, auth=auth)


def test_anonymous_on_a_private_project_is_asked_for_credentials_in_plain_text(live, alice, projects):
    project = projects.create(alice, name="demo")
    response = _info_refs(live, f"{project.path_with_namespace}.git")
    _assert_plain(response, 401, "401 Unauthorized")
    assert response.headers["www-authenticate"] == 'Basic realm="codeyard"'


def test_a_hostile_url_is_not_echoed_as_html(live, alice):
    response = _info_refs(live, "%3Cscript%3Ealert(1)%3C%2Fscript%3E/x.git", auth=(alice.username, alice.token))
    _assert_plain(response, 404, "404 Project Not Found")


def test_a_segment_holding_an_encoded_slash_names_no_project(live, alice, projects):
    """As for the pages and uploads (`services.loader.path_ident`): `alice%2Fdemo/x.git` is not alice/demo."""
    project = projects.create(alice, name="demo", visibility=20)
    assert _info_refs(live, f"{project.path_with_namespace}.git").status_code == 200
    response = _info_refs(live, f"{project.path_with_namespace.replace('/', '%2F')}/x.git", auth=(alice.username, alice.token))
    _assert_plain(response, 404, "404 Project Not Found")


def test_dumb_protocol_refusal_is_plain_text(live, alice, projects):
    project = projects.create(alice, name="demo", visibility=20)
    _assert_plain(_info_refs(live, f"{project.path_with_namespace}.git", service=None), 400, "smart HTTP")


def test_a_refused_push_is_plain_text_and_changes_nothing(live, rt, alice, users, projects):
    project = projects.create(alice, name="demo", visibility=20)
    bob = users.create("bob")
    response = httpx.post(f"{live.base_url}/{project.path_with_namespace}.git/git-receive-pack",
                          content=b"0000", auth=(bob.username, bob.token),
                          headers={"content-type": "application/x-git-receive-pack-request"})  # fmt: skip
    _assert_plain(response, 403, "You are not allowed to push code to this project")
    assert server_ref(rt, project, "refs/heads/master") is None


def test_a_missing_repository_is_plain_text(live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    storage.remove(storage.repository_path(rt.config.repositories_dir, project.id))
    response = _info_refs(live, f"{project.path_with_namespace}.git", auth=(alice.username, alice.token))
    _assert_plain(response, 500, "repository")


def test_git_answers_say_nosniff(live, alice, projects):
    project = projects.create(alice, name="demo")
    response = _info_refs(live, f"{project.path_with_namespace}.git", auth=(alice.username, alice.token))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-git-upload-pack-advertisement"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_an_unexpected_failure_is_plain_text(api, alice, projects, monkeypatch):
    from codeyard.githttp import transport

    def broken(*_args):
        raise RuntimeError("boom")

    monkeypatch.setattr(transport, "authorize", broken)
    project = projects.create(alice, name="demo")
    response = api.anonymous.get(f"http://testserver/{project.path_with_namespace}.git/info/refs",
                                 params={"service": "git-upload-pack"})  # fmt: skip
    _assert_plain(response, 500, "500 Internal Server Error")
