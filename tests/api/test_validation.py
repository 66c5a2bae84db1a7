"""Every invalid field is reported in one 400, the service's own name and path rules included
(issue 10: `username` errors used to appear only once every other field was fixed)."""

from __future__ import annotations

from codeyard.services.users import NAMESPACE_MESSAGE


def test_user_fields_are_reported_together(api, admin):
    response = api.as_(admin).post("/users", json={
        "email": "not-an-email", "password": "short", "name": "<b>", "username": "-bad", "projects_limit": -1,
    })  # fmt: skip
    assert response.status_code == 400
    assert response.json()["message"] == {
        "email": ["is invalid"],
        "password": ["is too short (minimum is 8 characters)"],
        "name": ["cannot contain < or >"],
        "username": [NAMESPACE_MESSAGE],
        "projects_limit": ["must be greater than or equal to 0"],
    }
    renamed = api.as_(admin).put(f"/users/{admin.id}", json={"username": "admin", "email": "x"})
    assert renamed.json()["message"] == {"email": ["is invalid"], "username": ["admin is a reserved name"]}


def test_group_fields_are_reported_together(api, admin):
    response = api.as_(admin).post("/groups", json={"name": "bad!", "path": "ends.", "visibility_level": 5})
    assert response.status_code == 400
    assert set(response.json()["message"]) == {"name", "path", "visibility_level"}


def test_project_fields_are_reported_together(api, admin):
    response = api.as_(admin).post("/projects", json={"name": "bad!", "path": "x.git", "visibility_level": 5})
    assert response.status_code == 400
    assert set(response.json()["message"]) == {"name", "path", "visibility_level"}
    edit = api.as_(admin).post("/projects", json={"name": "fine"}).json()
    response = api.as_(admin).put(f"/projects/{edit['id']}", json={"name": "bad!", "path": "-x", "public": "maybe"})
    assert set(response.json()["message"]) == {"name", "path", "public"}
