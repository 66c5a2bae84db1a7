"""Personal access tokens and impersonation tokens (v4): created by admins for a user, listed,
read, revoked and rotated by their owner; usable as PRIVATE-TOKEN, `private_token` and Bearer; their
scopes enforced on every API route of both versions. Git over HTTP with them: tests/githttp/."""

from __future__ import annotations

import datetime as dt
import logging

import pytest
from sqlalchemy import update

from codeyard.db.models import Token, utcnow
from codeyard.services import credentials

from ..support import QueryCounter, WorkingCopy

TODAY = dt.datetime.now(dt.UTC).date()
NEXT_MONTH = (TODAY + dt.timedelta(days=30)).isoformat()
INSUFFICIENT = "The request requires higher privileges than provided by the access token."


def issue(rt, user, scopes=("api",), kind=credentials.PERSONAL, name="t", expires_on=None) -> tuple[int, str]:
    """A token for USER made by the service (id, secret)."""
    with rt.db.transaction() as session:
        token, secret = credentials.issue_scoped(session, user.id, kind, name, list(scopes), expires_on)
        return token.id, secret


def bearer(secret: str) -> dict:
    return {"Authorization": f"Bearer {secret}"}


# --- create (admins) --------------------------------------------------------------------------


def test_admin_creates_a_token_for_a_user_through_the_client(gl, admin, alice):
    created = gl(admin).users.get(alice.id, lazy=True).personal_access_tokens.create(
        {"name": "deploy", "scopes": ["read_api", "read_repository"], "expires_at": NEXT_MONTH}
    )
    assert created.token.startswith("glpat-") and len(created.token) == 26
    assert created.name == "deploy"
    assert created.scopes == ["read_api", "read_repository"]
    assert created.user_id == alice.id
    assert created.expires_at == NEXT_MONTH
    assert created.active is True and created.revoked is False
    assert created.last_used_at is None
    assert created.created_at.endswith("Z")
    assert gl(created.token).http_get("/user")["username"] == "alice"


def test_create_answers_201_with_the_secret_once(api4, admin, alice):
    response = api4.as_(admin).post(f"/users/{alice.id}/personal_access_tokens", json={"name": "a", "scopes": ["api"]})
    assert response.status_code == 201
    body = response.json()
    # No expiry given: GitLab 17's longest, a year.
    assert body["expires_at"] == (TODAY + dt.timedelta(days=365)).isoformat()
    listed = api4.as_(alice).get("/personal_access_tokens").json()
    assert [row["id"] for row in listed] == [body["id"]]
    assert "token" not in listed[0]
    assert "token" not in api4.as_(alice).get(f"/personal_access_tokens/{body['id']}").json()
    assert body["token"] not in api4.as_(admin).get("/personal_access_tokens").text


def test_scopes_arrive_in_a_form_or_the_query_as_well(api4, admin, alice):
    form = api4.as_(admin).post(f"/users/{alice.id}/personal_access_tokens",
                                data={"name": "f", "scopes[]": ["api", "sudo"]})  # fmt: skip
    assert form.status_code == 201 and form.json()["scopes"] == ["api", "sudo"]
    query = api4.as_(admin).post(f"/users/{alice.id}/personal_access_tokens?name=q&scopes[]=read_user")
    assert query.status_code == 201 and query.json()["scopes"] == ["read_user"]


def test_only_admins_create_tokens(gl, gitlab, api4, users, alice):
    bob = users.create("bob")
    for target in (bob, alice):
        response = api4.as_(alice).post(f"/users/{target.id}/personal_access_tokens", json={"name": "x", "scopes": ["api"]})
        assert response.status_code == 403
    with pytest.raises(gitlab.exceptions.GitlabCreateError) as raised:
        gl(alice).users.get(bob.id, lazy=True).personal_access_tokens.create({"name": "x", "scopes": ["api"]})
    assert raised.value.response_code == 403
    assert api4.anonymous.post(f"/users/{bob.id}/personal_access_tokens", json={"name": "x", "scopes": ["api"]}).status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "scopes": ["api", "everything"]}, "scopes"),
        ({"name": "x", "scopes": "root"}, "scopes"),
        ({"name": "x", "scopes": ["api"], "expires_at": "2001-01-01"}, "expires_at"),
        ({"name": "x", "scopes": ["api"], "expires_at": (TODAY - dt.timedelta(days=1)).isoformat()}, "expires_at"),
        ({"name": "x", "scopes": ["api"], "expires_at": (TODAY + dt.timedelta(days=400)).isoformat()}, "expires_at"),
        ({"name": "x", "scopes": ["api"], "expires_at": "2030-02-30"}, "expires_at"),
        ({"name": "x", "scopes": ["api"], "expires_at": "tomorrow"}, "expires_at"),
        ({"name": "x" * 256, "scopes": ["api"]}, "name"),
        ({"name": "bad\x00name", "scopes": ["api"]}, "name"),
    ],
)
def test_bad_input_is_400_and_creates_nothing(api4, admin, alice, body, field):
    response = api4.as_(admin).post(f"/users/{alice.id}/personal_access_tokens", json=body)
    assert response.status_code == 400, response.text
    assert field in response.json()["message"]
    assert api4.as_(admin).get("/personal_access_tokens", params={"user_id": alice.id}).json() == []


@pytest.mark.parametrize("body", [{"scopes": ["api"]}, {"name": "x"}, {"name": "x", "scopes": []}])
def test_missing_name_or_scopes_is_400(api4, admin, alice, body):
    response = api4.as_(admin).post(f"/users/{alice.id}/personal_access_tokens", json=body)
    assert response.status_code == 400
    assert response.json() in ({"error": "name is missing"}, {"error": "scopes is missing"},
                               {"message": {"scopes": ["can't be blank"]}})  # fmt: skip


@pytest.mark.parametrize("user_id", ["999999", "99999999999999999999999", "alice", "-1"])
def test_create_for_a_missing_user_is_404(api4, admin, user_id):
    response = api4.as_(admin).post(f"/users/{user_id}/personal_access_tokens", json={"name": "x", "scopes": ["api"]})
    assert response.status_code == 404


def test_a_token_expiring_today_works_until_the_day_ends(api4, rt, alice):
    _id, secret = issue(rt, alice, expires_on=TODAY)
    assert api4.as_(secret).get("/user").status_code == 200
    assert api4.as_(alice).get("/personal_access_tokens").json()[0]["expires_at"] == TODAY.isoformat()


# --- authentication ------------------------------------------------------------------------------


def test_a_token_is_accepted_in_each_place(api4, api, rt, alice):
    _id, secret = issue(rt, alice)
    assert api4.anonymous.get("/user", headers={"PRIVATE-TOKEN": secret}).json()["username"] == "alice"
    assert api4.anonymous.get("/user", params={"private_token": secret}).json()["username"] == "alice"
    assert api4.anonymous.get("/user", headers=bearer(secret)).json()["username"] == "alice"
    assert api4.anonymous.get("/user", params={"access_token": secret}).json()["username"] == "alice"
    # v3 too; its /user shows no private token for a personal access token.
    body = api.anonymous.get("/user", headers={"PRIVATE-TOKEN": secret}).json()
    assert body["username"] == "alice" and "private_token" not in body


def test_the_private_token_and_oauth_still_work(api4, api, alice):
    assert api4.as_(alice).get("/user").status_code == 200
    assert api.as_(alice).get("/user").json()["private_token"] == alice.token
    oauth = api.client.post("/oauth/token", data={"grant_type": "password", "username": "alice", "password": alice.password})
    access = oauth.json()["access_token"]
    assert api4.anonymous.get("/user", headers=bearer(access)).json()["username"] == "alice"
    # A private token is not a bearer token, nor an OAuth token a private one, as before.
    assert api4.anonymous.get("/user", headers=bearer(alice.token)).status_code == 401
    assert api4.anonymous.get("/user", headers={"PRIVATE-TOKEN": access}).status_code == 401


def test_expired_token_is_401(api4, rt, alice):
    token_id, secret = issue(rt, alice)
    assert api4.as_(secret).get("/user").status_code == 200
    with rt.db.transaction() as session:
        session.execute(update(Token).where(Token.id == token_id).values(expires_at=utcnow() - dt.timedelta(seconds=1)))
    assert api4.as_(secret).get("/user").status_code == 401
    assert api4.anonymous.get("/user", headers=bearer(secret)).status_code == 401
    listed = api4.as_(alice).get("/personal_access_tokens").json()
    assert listed[0]["active"] is False and listed[0]["revoked"] is False


def test_a_blocked_users_token_is_401(api4, rt, users):
    carol = users.create("carol", state="blocked")
    _id, secret = issue(rt, carol)
    assert api4.as_(secret).get("/user").status_code == 401


def test_the_lookup_stays_one_statement(api4, rt, alice):
    _id, secret = issue(rt, alice, scopes=("read_api",))
    with QueryCounter(rt) as counter:
        assert api4.as_(secret).get("/user").status_code == 200
    assert counter.token_reads == 1
    assert counter.fast_reads == [] and counter.count == 0


# --- scopes ----------------------------------------------------------------------------------


def insufficient(response, scope: str) -> None:
    assert response.status_code == 403, response.text
    assert response.json() == {"error": "insufficient_scope", "error_description": INSUFFICIENT, "scope": scope}
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]


def test_read_api_reads_and_cannot_write(api4, api, rt, alice):
    token_id, secret = issue(rt, alice, scopes=("read_api",))
    assert api4.as_(secret).get("/personal_access_tokens").status_code == 200
    assert api4.as_(secret).get("/version").status_code == 200
    assert api.as_(secret).get("/projects").status_code == 200
    insufficient(api4.as_(secret).delete(f"/personal_access_tokens/{token_id}"), "api")
    insufficient(api4.as_(secret).post("/personal_access_tokens/self/rotate"), "api")
    insufficient(api.as_(secret).post("/projects", json={"name": "nope"}), "api")
    assert api.as_(alice).get("/projects").json() == []
    assert api4.as_(secret).get("/user").status_code == 200  # the refusals revoked nothing


def test_read_user_reads_the_user_endpoints_only(api4, api, rt, alice):
    _id, secret = issue(rt, alice, scopes=("read_user",))
    assert api4.as_(secret).get("/user").json()["username"] == "alice"
    assert api.as_(secret).get("/user").status_code == 200
    assert api.as_(secret).get("/users").status_code == 200
    assert api.as_(secret).get(f"/users/{alice.id}").status_code == 200
    insufficient(api4.as_(secret).get("/personal_access_tokens"), "api read_api")
    insufficient(api.as_(secret).get("/projects"), "api read_api")
    insufficient(api.as_(secret).put(f"/users/{alice.id}", json={"bio": "x"}), "api")


@pytest.mark.parametrize("scope", ["read_repository", "write_repository"])
def test_repository_scopes_are_for_git_only(api4, api, rt, alice, scope):
    _id, secret = issue(rt, alice, scopes=(scope,))
    insufficient(api4.as_(secret).get("/user"), "read_user api read_api")
    insufficient(api.as_(secret).get("/projects"), "api read_api")
    insufficient(api.as_(secret).post("/projects", json={"name": "nope"}), "api")


def test_api_scope_may_do_everything(api, rt, alice):
    _id, secret = issue(rt, alice, scopes=("api",))
    assert api.as_(secret).post("/projects", json={"name": "made"}).status_code == 201


def test_scopes_are_checked_before_the_route_is_found_to_refuse(api, rt, alice):
    _id, secret = issue(rt, alice, scopes=("read_user",))
    insufficient(api.as_(secret).get("/projects/99999"), "api read_api")


def test_sudo_with_a_token_needs_the_sudo_scope(api4, api, rt, admin, alice):
    _id, plain = issue(rt, admin, scopes=("api",))
    insufficient(api4.as_(plain).get("/user", params={"sudo": "alice"}), "sudo")
    _id, with_sudo = issue(rt, admin, scopes=("api", "sudo"))
    assert api4.as_(with_sudo).get("/user", params={"sudo": "alice"}).json()["username"] == "alice"
    assert api4.as_(with_sudo).get("/user", headers={"Sudo": str(alice.id)}).json()["username"] == "alice"
    # The private token keeps sudo for admins; a non-admin's token with the scope still may not.
    assert api4.as_(admin).get("/user", params={"sudo": "alice"}).json()["username"] == "alice"
    _id, alices = issue(rt, alice, scopes=("api", "sudo"))
    response = api4.as_(alices).get("/user", params={"sudo": "admin"})
    assert response.status_code == 403 and "Must be admin" in response.json()["message"]


def test_sudo_keeps_the_tokens_scopes(api, rt, admin, alice):
    _id, secret = issue(rt, admin, scopes=("read_api", "sudo"))
    assert api.as_(secret).get("/user", params={"sudo": "alice"}).json()["username"] == "alice"
    insufficient(api.as_(secret).post("/projects", params={"sudo": "alice"}, json={"name": "x"}), "api")


# --- the owner's list, read, revoke, rotate ---------------------------------------------------


def test_a_user_lists_reads_and_revokes_own_tokens_through_the_client(gl, gitlab, rt, alice):
    first, first_secret = issue(rt, alice, name="one")
    second, _secret = issue(rt, alice, name="two", scopes=("read_api",))
    client = gl(alice)
    listed = client.personal_access_tokens.list(get_all=True)
    assert [(t.id, t.name) for t in listed] == [(first, "one"), (second, "two")]
    assert all(not hasattr(t, "token") for t in listed)
    assert client.personal_access_tokens.get(second).scopes == ["read_api"]
    client.personal_access_tokens.delete(first)
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError):
        gl(first_secret).auth()
    again = client.personal_access_tokens.get(first)
    assert again.revoked is True and again.active is False


def test_revoked_token_is_401(api4, rt, alice):
    token_id, secret = issue(rt, alice)
    assert api4.as_(secret).get("/user").status_code == 200
    response = api4.as_(alice).delete(f"/personal_access_tokens/{token_id}")
    assert response.status_code == 204 and response.content == b""
    assert api4.as_(secret).get("/user").status_code == 401
    assert api4.anonymous.get("/user", headers=bearer(secret)).status_code == 401
    assert api4.as_(alice).delete(f"/personal_access_tokens/{token_id}").status_code == 204  # again: still revoked


def test_others_tokens_are_404_to_users_and_open_to_admins(api4, rt, users, admin, alice):
    bob = users.create("bob")
    token_id, secret = issue(rt, bob)
    for method in ("get", "delete"):
        assert getattr(api4.as_(alice), method)(f"/personal_access_tokens/{token_id}").status_code == 404
    assert api4.as_(alice).post(f"/personal_access_tokens/{token_id}/rotate").status_code == 404
    assert api4.as_(alice).get("/personal_access_tokens").json() == []
    assert api4.as_(alice).get("/personal_access_tokens", params={"user_id": bob.id}).json() == []
    assert api4.as_(secret).get("/user").status_code == 200
    assert api4.as_(admin).get(f"/personal_access_tokens/{token_id}").json()["user_id"] == bob.id
    assert [t["id"] for t in api4.as_(admin).get("/personal_access_tokens", params={"user_id": bob.id}).json()] == [token_id]
    assert api4.as_(admin).delete(f"/personal_access_tokens/{token_id}").status_code == 204
    assert api4.as_(secret).get("/user").status_code == 401


@pytest.mark.parametrize("token_id", ["0", "-1", "abc", "99999999999999999999", "9223372036854775808", "1%2F2"])
def test_bad_token_ids_are_404(api4, alice, token_id):
    assert api4.as_(alice).get(f"/personal_access_tokens/{token_id}").status_code == 404
    assert api4.as_(alice).delete(f"/personal_access_tokens/{token_id}").status_code == 404


def test_the_list_filters_and_pages(api4, rt, admin, alice):
    ids = [issue(rt, alice, name=f"t{n}")[0] for n in range(3)]
    api4.as_(alice).delete(f"/personal_access_tokens/{ids[0]}")
    with rt.db.transaction() as session:
        session.execute(update(Token).where(Token.id == ids[1]).values(expires_at=utcnow() - dt.timedelta(days=1)))
    get = api4.as_(alice).get

    def names(**params):
        return [t["name"] for t in get("/personal_access_tokens", params=params).json()]

    assert names() == ["t0", "t1", "t2"]
    assert names(state="active") == ["t2"]
    assert names(state="inactive") == ["t0", "t1"]
    assert names(revoked="true") == ["t0"]
    assert names(revoked="false") == ["t1", "t2"]
    page = get("/personal_access_tokens", params={"per_page": 2, "page": 2})
    assert [t["name"] for t in page.json()] == ["t2"]
    assert page.headers["x-total"] == "3" and page.headers["x-total-pages"] == "2"
    assert get("/personal_access_tokens", params={"state": "bogus"}).status_code == 400
    # Admins see everyone's; the private token of root made none.
    assert len(api4.as_(admin).get("/personal_access_tokens").json()) == 3


def test_self_reads_revokes_and_rotates_the_requests_token(api4, rt, alice):
    token_id, secret = issue(rt, alice, name="me")
    assert api4.as_(secret).get("/personal_access_tokens/self").json()["id"] == token_id
    assert api4.as_(alice).get("/personal_access_tokens/self").status_code == 404  # the private token is not one
    rotated = api4.as_(secret).post("/personal_access_tokens/self/rotate")
    assert rotated.status_code == 200
    body = rotated.json()
    assert body["name"] == "me" and body["id"] != token_id and body["token"].startswith("glpat-")
    assert body["expires_at"] == (TODAY + dt.timedelta(days=7)).isoformat()  # GitLab's default for a rotation
    assert api4.as_(secret).get("/user").status_code == 401
    assert api4.as_(body["token"]).delete("/personal_access_tokens/self").status_code == 204
    assert api4.as_(body["token"]).get("/user").status_code == 401


@pytest.mark.parametrize("scope", ["read_user", "read_repository", "write_repository", "sudo"])
def test_any_token_reads_and_revokes_itself(api4, rt, alice, scope):
    token_id, secret = issue(rt, alice, scopes=(scope,))
    assert api4.as_(secret).get("/personal_access_tokens/self").json()["scopes"] == [scope]
    insufficient(api4.as_(secret).get(f"/personal_access_tokens/{token_id}"), "api read_api")
    insufficient(api4.as_(secret).post("/personal_access_tokens/self/rotate"), "api")
    assert api4.as_(secret).delete("/personal_access_tokens/self").status_code == 204
    assert api4.as_(secret).get("/personal_access_tokens/self").status_code == 401


def test_self_through_the_client(gl, gitlab, rt, alice):
    token_id, secret = issue(rt, alice, name="mine")
    client = gl(secret)
    assert client.personal_access_tokens.get("self").id == token_id
    rotated = client.personal_access_tokens.get(token_id, lazy=True)
    rotated.rotate(self_rotate=True)
    assert rotated.token != secret and rotated.name == "mine"
    fresh = gl(rotated.token)
    fresh.personal_access_tokens.delete("self")
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError):
        fresh.auth()
    by_id = gl(alice).personal_access_tokens.rotate(issue(rt, alice)[0])
    assert by_id["token"].startswith("glpat-")


def test_read_repository_reads_files_through_the_api(api, rt, alice, projects, tmp_path):
    project = projects.create(alice, name="files")
    work = WorkingCopy(rt, project, tmp_path / "work")
    work.commit("first", {"a.txt": "hello\n"})
    work.push("master")
    _id, secret = issue(rt, alice, scopes=("read_repository",))
    found = api.as_(secret).get(f"/projects/{project.id}/repository/files", params={"file_path": "a.txt", "ref": "master"})
    assert found.status_code == 200, found.text
    insufficient(api.as_(secret).get(f"/projects/{project.id}/repository/tree"), "api read_api")
    insufficient(api.as_(secret).post(f"/projects/{project.id}/repository/files",
                                      json={"file_path": "b.txt", "branch_name": "master", "content": "x", "commit_message": "m"}), "api")  # fmt: skip


def test_rotate_through_the_client(gl, rt, alice):
    token_id, secret = issue(rt, alice, scopes=("api", "read_user"))
    token = gl(alice).personal_access_tokens.get(token_id)
    token.rotate(expires_at=NEXT_MONTH)
    assert token.token.startswith("glpat-") and token.token != secret
    assert token.scopes == ["api", "read_user"] and token.expires_at == NEXT_MONTH
    assert gl(token.token).http_get("/user")["username"] == "alice"
    old = gl(alice).personal_access_tokens.get(token_id)
    assert old.revoked is True


def test_a_revoked_token_is_not_rotated(api4, rt, alice):
    token_id, _secret = issue(rt, alice)
    api4.as_(alice).delete(f"/personal_access_tokens/{token_id}")
    response = api4.as_(alice).post(f"/personal_access_tokens/{token_id}/rotate")
    assert response.status_code == 400
    assert len(api4.as_(alice).get("/personal_access_tokens").json()) == 1


def test_the_secret_is_never_logged(api4, admin, alice, caplog, monkeypatch):
    monkeypatch.setattr(api4.client.app, "access_log", True)
    with caplog.at_level(logging.DEBUG):
        secret = api4.as_(admin).post(f"/users/{alice.id}/personal_access_tokens", json={"name": "x", "scopes": ["api"]}).json()["token"]
        api4.as_(secret).get("/user", params={"private_token": secret})
        api4.as_(secret).post("/personal_access_tokens/self/rotate")
    server = [record for record in caplog.records if record.name.startswith("codeyard")]  # not the test's client
    assert server
    assert not [record for record in server if secret in record.getMessage()]


def test_tokens_go_with_their_user_stored_as_digests(rt, alice):
    token_id, secret = issue(rt, alice)
    with rt.db.transaction() as session:
        row = session.get(Token, token_id)
        assert row.digest == credentials.digest(secret) and secret not in (row.digest, row.name)


# --- impersonation tokens ------------------------------------------------------------------------


def test_impersonation_tokens_through_the_client(gl, gitlab, admin, alice):
    manager = gl(admin).users.get(alice.id, lazy=True).impersonationtokens
    made = manager.create({"name": "support", "scopes": ["api"], "expires_at": NEXT_MONTH})
    assert made.impersonation is True and made.token.startswith("glpat-") and made.user_id == alice.id
    assert gl(made.token).http_get("/user")["username"] == "alice"
    listed = manager.list(state="active")
    assert [t.id for t in listed] == [made.id] and not hasattr(listed[0], "token")
    assert manager.get(made.id).name == "support"
    # Not among the user's personal access tokens.
    assert gl(alice).personal_access_tokens.list() == []
    manager.delete(made.id)
    assert manager.get(made.id).revoked is True
    assert [t.id for t in manager.list(state="inactive")] == [made.id]
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError):
        gl(made.token).auth()


def test_impersonation_tokens_are_for_admins(api4, rt, users, admin, alice):
    bob = users.create("bob")
    token_id, _secret = issue(rt, bob, kind=credentials.IMPERSONATION)
    base = f"/users/{bob.id}/impersonation_tokens"
    assert api4.as_(alice).get(base).status_code == 403
    assert api4.as_(alice).post(base, json={"name": "x", "scopes": ["api"]}).status_code == 403
    assert api4.as_(alice).get(f"{base}/{token_id}").status_code == 403
    assert api4.as_(alice).delete(f"{base}/{token_id}").status_code == 403
    assert api4.as_(bob).get(f"/personal_access_tokens/{token_id}").status_code == 404
    # Another user's number is not found under this user.
    assert api4.as_(admin).get(f"/users/{alice.id}/impersonation_tokens/{token_id}").status_code == 404
    assert api4.as_(admin).get(f"{base}/{token_id}").status_code == 200


def test_an_impersonation_token_keeps_its_scopes(api, rt, alice):
    _id, secret = issue(rt, alice, kind=credentials.IMPERSONATION, scopes=("read_api",))
    assert api.as_(secret).get("/user").json()["username"] == "alice"
    insufficient(api.as_(secret).post("/projects", json={"name": "x"}), "api")
