"""Uploaded files as a browser fetches them: with the `codeyard_session` cookie, not a token. A
signed-in user gets the files of every project they may read (any member role on a private
project, anyone signed in on an internal one); an outsider gets 404 like a missing file, and an
anonymous visitor what the API's rule gives (public: 200, otherwise 404). A session that ended
(signed out, blocked) reads as anonymous; nothing is written by reading."""

from __future__ import annotations

import pytest

from ..support import ROLES, make_team
from ..web.conftest import WebClient
from .state import row_counts

PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
NOT_FOUND = {"message": "404 Not Found"}


def expected(role: str, visibility: int) -> int:
    if role == "anonymous":
        return 200 if visibility == PUBLIC else 404
    if role == "outsider" and visibility == PRIVATE:
        return 404
    return 200


@pytest.fixture
def browser(_test_client):
    """A browser signed in through the form as USER (None: anonymous): cookies only, no token."""

    def make(user=None) -> WebClient:
        client = WebClient(_test_client)
        if user is not None:
            client.sign_in(user)
        return client

    return make


def uploaded(api, owner, project, name="dk.png", content=PNG, content_type="image/png") -> str:
    response = api.as_(owner).post(f"/projects/{project.id}/uploads", files={"file": (name, content, content_type)})
    assert response.status_code == 201
    return f"/{project.path_with_namespace}{response.json()['url']}"


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
def test_a_browser_gets_the_files_its_user_may_read(rt, api, users, projects, admin, browser, visibility):
    team = make_team(users, projects, admin, visibility)
    image = uploaded(api, team.user("owner"), team.project)
    text = uploaded(api, team.user("owner"), team.project, "notes.txt", b"hello", "text/plain")
    browsers = {role: browser(team.user(role)) for role in ROLES}
    before = row_counts(rt)
    for role, client in browsers.items():
        for url, content in ((image, PNG), (text, b"hello")):
            response = client.get(url)
            assert response.status_code == expected(role, visibility), (role, url)
            if response.status_code == 200:
                assert response.content == content
                assert response.headers["x-content-type-options"] == "nosniff"
                assert response.headers["content-security-policy"] == "default-src 'none'; sandbox"
            else:
                assert response.json() == NOT_FOUND
    assert row_counts(rt) == before


def test_an_ended_session_reads_as_anonymous(rt, api, users, projects, admin, browser):
    owner, member = users.create("owner"), users.create("member")
    project = projects.create(owner, visibility=PRIVATE)
    projects.add_member(project, member, 20)
    url = uploaded(api, owner, project)
    signed_out, blocked = browser(member), browser(owner)
    assert signed_out.get(url).status_code == 200 and blocked.get(url).status_code == 200
    forged = browser()
    forged.cookies.set("codeyard_session", "x" * 32)
    assert forged.get(url).status_code == 404
    kept = signed_out.cookies["codeyard_session"]
    assert signed_out.post("/users/sign_out").status_code == 303
    replay = browser()
    replay.cookies.set("codeyard_session", kept)
    assert replay.get(url).status_code == 404
    assert api.as_(admin).put(f"/users/{owner.id}/block").status_code == 200
    assert blocked.get(url).status_code == 404


def test_a_token_still_reads_and_is_tried_first(api, users, projects, browser):
    owner, outsider = users.create("owner"), users.create("outsider")
    project = projects.create(owner, visibility=PRIVATE)
    url = uploaded(api, owner, project)
    assert api.as_(owner).get(f"http://testserver{url}").status_code == 200
    # An outsider's browser that also sends the owner's token reads as the owner (the API's order).
    client = browser(outsider)
    assert client.get(url).status_code == 404
    assert client.get(url, headers={"PRIVATE-TOKEN": owner.token}).status_code == 200
