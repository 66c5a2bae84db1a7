"""Users API: the caller, the directory, admin create/edit/delete/block."""

from __future__ import annotations

import pytest

from codeyard.db.models import Namespace, User

from ..support import QueryCounter

USER_FORM = {"avatar_url", "bio", "created_at", "id", "is_admin", "name", "state", "username", "web_url",
             "website_url", "profnet", "messenger", "microblog"}
FULL_EXTRA = {"email", "projects_limit", "can_create_group", "can_create_project", "last_sign_in_at",
              "current_sign_in_at", "confirmed_at", "identities", "two_factor_enabled", "external", "theme_id",
              "color_scheme_id"}


def new_user(**overrides):
    return {"email": "carol@example.com", "password": "password123", "name": "Carol", "username": "carol", **overrides}


def count(rt, model, **filters) -> int:
    with rt.db.session() as session:
        return session.query(model).filter_by(**filters).count()


def test_current_user_is_the_full_login_record(api, users):
    alice = users.create("alice", bio="hello")
    body = api.as_(alice).get("/user").json()
    assert USER_FORM | FULL_EXTRA | {"private_token"} <= set(body)
    assert body["username"] == "alice" and body["email"] == "alice@example.com" and body["bio"] == "hello"
    assert body["web_url"] == "http://testserver/u/alice"
    assert body["avatar_url"].startswith("http://www.gravatar.com/avatar/")
    assert body["can_create_project"] is True and body["is_admin"] is False
    assert (body["theme_id"], body["color_scheme_id"]) == (2, 1)  # GitLab 8's defaults (C43)


def test_user_list_is_basic_for_users_and_full_for_admins(api, users, admin):
    alice = users.create("alice")
    basic = api.as_(alice).get("/users").json()
    assert {u["username"] for u in basic} == {"alice", "sysadmin"}
    assert set(basic[0]) == {"name", "username", "id", "state", "avatar_url", "web_url"}
    full = api.as_(admin).get("/users").json()
    assert set(full[0]) >= USER_FORM | FULL_EXTRA


def test_user_list_filters(api, users, admin):
    users.create("alice", name="Alice Liddell")
    users.create("bob", email="bob@builders.example")
    users.create("blocked", state="blocked")
    names = lambda **params: [u["username"] for u in api.as_(admin).get("/users", params=params).json()]  # noqa: E731
    assert names(search="LIDDELL") == ["alice"]
    assert names(search="builders") == ["bob"]
    assert names(username="BOB") == ["bob"]
    assert "blocked" in names() and "blocked" not in names(active="true")
    assert names(search="100%") == []


def test_the_directory_is_read_without_a_session(api, users, projects, admin, rt):
    """The read path: one statement per page whatever its size (its rows carry the total and each
    user's personal project count), a count only past the last page; /users/:id one statement."""
    alice = users.create("alice", projects_limit=1)
    projects.create(alice)  # at her limit
    for i in range(4):
        users.create(f"member{i}", name=f"Member {i}")
    cases = (({"per_page": 2}, 1, "6", 2), ({"per_page": 100}, 1, "6", 6), ({"search": "MEMBER"}, 1, "4", 4),
             ({"page": 4, "per_page": 2}, 2, "6", 0), ({"page": 2**31 - 1, "per_page": 100}, 2, "6", 0),
             ({"username": "nobody"}, 1, "0", 0))  # fmt: skip
    for params, reads, total, listed in cases:
        with QueryCounter(rt) as counter:
            response = api.as_(admin).get("/users", params=params)
        assert response.status_code == 200 and response.headers["x-total"] == total, (params, response.text)
        assert len(response.json()) == listed, params
        assert counter.count == 0 and len(counter.fast_reads) == reads, (params, counter.statements, counter.fast_reads)
    listed = {user["username"]: user for user in api.as_(admin).get("/users").json()}
    assert listed["alice"]["can_create_project"] is False and listed["member0"]["can_create_project"] is True
    with QueryCounter(rt) as counter:
        single = api.as_(admin).get(f"/users/{alice.id}").json()
    assert counter.count == 0 and len(counter.fast_reads) == 1
    assert single == listed["alice"]
    own = api.as_(alice).get("/user").json()
    own.pop("private_token")
    assert own == single


def test_single_user(api, users, admin):
    alice = users.create("alice")
    as_user = api.as_(alice).get(f"/users/{admin.id}").json()
    assert set(as_user) == USER_FORM
    assert set(api.as_(admin).get(f"/users/{alice.id}").json()) >= USER_FORM | FULL_EXTRA
    for missing in ("999999", "abc"):
        response = api.as_(alice).get(f"/users/{missing}")
        assert response.status_code == 404
        assert response.json() == {"message": "404 Not found"}


def test_create_user(api, admin, rt):
    response = api.as_(admin).post("/users", json=new_user(bio="b", skype="sk", admin=True, projects_limit=3))
    assert response.status_code == 201
    body = response.json()
    assert body["username"] == "carol" and body["email"] == "carol@example.com" and body["is_admin"] is True
    assert body["messenger"] == "sk" and body["projects_limit"] == 3 and body["bio"] == "b"
    assert count(rt, Namespace, path="carol", kind="user") == 1
    # The new user can sign in with the password.
    session = api.anonymous.post("/session", json={"login": "carol", "password": "password123"})
    assert session.status_code == 201


@pytest.mark.parametrize("missing", ["email", "password", "name", "username"])
def test_create_user_requires_each_field(api, admin, rt, missing):
    body = new_user()
    del body[missing]
    response = api.as_(admin).post("/users", json=body)
    assert response.status_code == 400
    assert response.json() == {"message": f'400 (Bad request) "{missing}" not given'}
    assert count(rt, User, username="carol") == 0


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("bio", "x" * 256, "is too long (maximum is 255 characters)"),
        ("email", "not-an-email", "is invalid"),
        ("password", "short", "is too short (minimum is 8 characters)"),
        ("username", "-bad", "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.'."),
        ("username", "api", "api is a reserved name"),
        ("projects_limit", -1, "must be greater than or equal to 0"),
        ("projects_limit", "lots", "is not a number"),
        ("admin", "maybe", "is not a boolean"),
        ("name", "n" * 256, "is too long (maximum is 255 characters)"),
    ],
)
def test_create_user_validation(api, admin, rt, field, value, message):
    response = api.as_(admin).post("/users", json=new_user(**{field: value}))
    assert response.status_code == 400
    assert response.json() == {"message": {field: [message]}}
    assert count(rt, User, email="carol@example.com") == 0


def test_create_user_conflicts(api, admin, users, rt):
    users.create("dave", email="dave@example.com")
    response = api.as_(admin).post("/users", json=new_user(email="DAVE@example.com"))
    assert response.status_code == 409
    assert response.json() == {"message": "Email has already been taken"}
    response = api.as_(admin).post("/users", json=new_user(username="Dave"))
    assert response.status_code == 409
    assert response.json() == {"message": "Username has already been taken"}
    assert count(rt, User) == 2


def test_create_user_is_admin_only(api, users, rt):
    alice = users.create("alice")
    response = api.as_(alice).post("/users", json=new_user())
    assert response.status_code == 403
    assert response.json() == {"message": "403 Forbidden"}
    assert api.anonymous.post("/users", json=new_user()).status_code == 401
    assert count(rt, User, username="carol") == 0


def test_new_users_get_the_default_projects_limit(api, admin):
    assert api.as_(admin).put("/application/settings", json={"default_projects_limit": 4}).status_code == 200
    assert api.as_(admin).post("/users", json=new_user()).json()["projects_limit"] == 4


def test_restricted_signup_domains_apply(api, admin):
    api.as_(admin).put("/application/settings", json={"restricted_signup_domains": ["corp.example"]})
    response = api.as_(admin).post("/users", json=new_user())
    assert response.status_code == 400
    assert response.json()["message"]["email"][0].startswith("is not whitelisted")
    assert api.as_(admin).post("/users", json=new_user(email="carol@corp.example")).status_code == 201


def test_update_user(api, admin, users, rt):
    alice = users.create("alice")
    response = api.as_(admin).put(
        f"/users/{alice.id}", json={"name": "Alice B", "username": "alice2", "twitter": "@ab", "website_url": "https://a.example"}
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["name"], body["username"], body["microblog"], body["website_url"]) == (
        "Alice B", "alice2", "@ab", "https://a.example"
    )
    assert count(rt, Namespace, path="alice2") == 1 and count(rt, Namespace, path="alice") == 0
    # A new password works.
    api.as_(admin).put(f"/users/{alice.id}", json={"password": "new-password-1"})
    assert api.anonymous.post("/session", json={"login": "alice2", "password": "new-password-1"}).status_code == 201


def test_update_user_conflicts_and_errors(api, admin, users):
    alice, users_bob = users.create("alice"), users.create("bob")
    assert api.as_(admin).put(f"/users/{alice.id}", json={"email": "bob@example.com"}).status_code == 409
    assert api.as_(admin).put(f"/users/{alice.id}", json={"username": "BOB"}).json() == {
        "message": "Username has already been taken"
    }
    assert api.as_(admin).put(f"/users/{alice.id}", json={"bio": "x" * 300}).status_code == 400
    assert api.as_(admin).put("/users/999999", json={"name": "x"}).json() == {"message": "404 Not found"}
    assert api.as_(alice).put(f"/users/{users_bob.id}", json={"name": "x"}).status_code == 403
    assert api.as_(admin).get(f"/users/{alice.id}").json()["username"] == "alice"


def test_block_and_unblock(api, admin, users):
    alice = users.create("alice")
    assert api.as_(admin).put(f"/users/{alice.id}/block").json() is True
    assert api.as_(admin).put(f"/users/{alice.id}/block").json() is False
    assert api.as_(alice).get("/user").status_code == 401
    assert api.as_(admin).get(f"/users/{alice.id}").json()["state"] == "blocked"
    assert api.as_(admin).put(f"/users/{alice.id}/unblock").json() is True
    assert api.as_(alice).get("/user").status_code == 200
    assert api.as_(admin).put("/users/999999/block").json() == {"message": "404 User Not Found"}
    assert api.as_(alice).put(f"/users/{admin.id}/block").status_code == 403


def test_delete_user(api, admin, users, rt):
    alice = users.create("alice")
    response = api.as_(admin).delete(f"/users/{alice.id}")
    assert response.status_code == 200 and response.json()["username"] == "alice"
    assert api.as_(alice).get("/user").status_code == 401
    assert count(rt, Namespace, path="alice") == 0
    again = api.as_(admin).delete(f"/users/{alice.id}")
    assert again.status_code == 200 and again.json()["username"] == "alice"
    assert api.as_(admin).delete("/users/999999").json() == {"message": "404 User Not Found"}
    assert api.as_(users.create("bob")).delete(f"/users/{admin.id}").status_code == 403
    # Ids are never handed out again.
    carol = api.as_(admin).post("/users", json=new_user()).json()
    assert carol["id"] > alice.id
