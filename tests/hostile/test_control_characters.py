"""Control characters and markup in user text are refused before they reach anything.

A user name with a newline wrote a forged header into every commit the files API made for that
user; an escape sequence in a name reaches terminals through git logs; `<script>` in a name reaches
every page and mail that shows it. Single-line text refuses control characters (multi-line text
allows tabs and line ends; file content and passwords are taken verbatim), names refuse `<` and `>`.
Each refusal is a 400 that changes nothing.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from codeyard.db.models import Namespace, Project, User

REFUSED = ["must not contain control characters"]


@pytest.fixture
def alice(users):
    return users.create("alice")


def _rows(rt) -> tuple:
    with rt.db.session(write=False) as session:
        users = tuple(session.execute(select(User.id, User.name, User.username, User.email, User.bio).order_by(User.id)))
        count = (session.scalar(select(func.count(Project.id))), session.scalar(select(func.count(Namespace.id))))
    return users, count


def _tree(rt) -> list[str]:
    figures = rt.config.data_dir / "metrics"  # a live server's own figures, not the test's
    return sorted(str(path.relative_to(rt.config.data_dir)) for path in rt.config.data_dir.rglob("*")
                  if path != figures and figures not in path.parents)  # fmt: skip


def test_a_user_name_with_a_newline_is_refused(api, rt, admin, alice):
    before = _rows(rt)
    forged = {"name": "Eve\ncommitter Root <root@example.com> 0 +0000", "username": "eve", "email": "eve@example.com",
              "password": "long enough"}  # fmt: skip
    created = api.as_(admin).post("/users", json=forged)
    assert created.status_code == 400 and created.json()["message"] == {"name": REFUSED}
    edited = api.as_(admin).put(f"/users/{alice.id}", json={"name": "Alice\r\nX"})
    assert edited.status_code == 400 and edited.json()["message"] == {"name": REFUSED}
    assert _rows(rt) == before


def test_escape_sequences_and_nul_are_refused_in_single_line_fields(api, rt, admin, alice):
    before, tree = _rows(rt), _tree(rt)
    for field, value in (("username", "ali\x1b[31mce"), ("email", "a\x00@example.com"), ("website_url", "http://x/\x07"),
                         ("messenger", "\u009b1m")):  # fmt: skip
        response = api.as_(admin).put(f"/users/{alice.id}", json={field: value})
        assert response.status_code == 400, field
        assert REFUSED[0] in response.json()["message"][field][0] or field == "email"
    project = api.as_(alice).post("/projects", json={"name": "demo\x00"})
    assert project.status_code == 400 and "name" in project.json()["message"]
    assert api.as_(alice).get("/projects", params={"search": "x\x00"}).status_code == 400
    assert _rows(rt) == before and _tree(rt) == tree


def test_markup_in_a_user_name_or_email_is_refused(api, rt, admin, alice):
    before = _rows(rt)
    for change in ({"name": "<script>alert(1)</script>"}, {"email": "<img>@example.com"}):
        assert api.as_(admin).put(f"/users/{alice.id}", json=change).status_code == 400
    assert _rows(rt) == before


def test_multiline_text_keeps_its_lines_and_verbatim_text_its_bytes(api, rt, admin, alice):
    bio = api.as_(admin).put(f"/users/{alice.id}", json={"bio": "line one\n\tline two", "password": "pass\tword\x01!"})
    assert bio.status_code == 200 and bio.json()["bio"] == "line one\n\tline two"
    signed_in = api.post("/session", json={"login": "alice", "password": "pass\tword\x01!"})
    assert signed_in.status_code == 201


def test_a_commit_message_with_nul_changes_no_ref(api, rt, alice, projects):
    project = projects.create(alice, name="demo")
    url = f"/projects/{project.id}/repository/files"
    change = {"file_path": "a.txt", "branch_name": "master", "content": "\x00binary\x1b", "commit_message": "add\x00a"}
    refused = api.as_(alice).post(url, json=change)
    assert refused.status_code == 400 and refused.json()["message"] == {"commit_message": REFUSED}
    assert api.as_(alice).get(f"/projects/{project.id}/repository/branches").json() == []
    accepted = api.as_(alice).post(url, json={**change, "commit_message": "add a\n\nwith a body\r\n"})
    assert accepted.status_code == 201
    raw = api.as_(alice).get(f"/projects/{project.id}/repository/blobs/master", params={"filepath": "a.txt"})
    assert raw.content == b"\x00binary\x1b"
