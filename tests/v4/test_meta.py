"""v4's first calls: `/version`, `/metadata`, `/user`, and v4's error shapes."""

from __future__ import annotations


def test_version_and_metadata_through_the_client(gl, alice):
    client = gl(alice)
    assert client.version()[0] == "17.0.0"
    metadata = client.http_get("/metadata")
    assert metadata["kas"]["enabled"] is False
    assert metadata["enterprise"] is False


def test_auth_reads_the_caller(gl, gitlab, alice, admin):
    client = gl(alice)
    client.auth()
    assert client.user.username == "alice"
    assert client.user.is_admin is False
    assert gl(admin).http_get("/user")["is_admin"] is True


def test_unknown_token_is_401_as_the_client_reads_it(gl, gitlab):
    client = gl("not-a-token")
    try:
        client.auth()
    except gitlab.exceptions.GitlabAuthenticationError as error:
        assert error.response_code == 401
    else:
        raise AssertionError("an unknown token authenticated")


def test_user_shape(api4, alice):
    body = api4.as_(alice).get("/user").json()
    assert body["username"] == "alice"
    assert body["created_at"].endswith("Z")
    assert isinstance(body["locked"], bool) and isinstance(body["can_create_project"], bool)
    assert "private_token" not in body


def test_v3_is_unchanged(api, alice):
    body = api.as_(alice).get("/user").json()
    assert body["private_token"] == alice.token
    assert "locked" not in body


def test_version_needs_a_caller(api4):
    assert api4.anonymous.get("/version").status_code == 401


def test_unknown_v4_path_is_a_json_404(api4, alice):
    response = api4.as_(alice).get("/no/such/thing")
    assert response.status_code == 404
    assert response.json() == {"message": "404 Not Found"}


def test_openapi_documents_per_version(api4, api):
    v4 = api4.anonymous.get("/openapi.json").json()
    v3 = api.anonymous.get("/openapi.json").json()
    assert v4["info"]["version"] == "v4" and v3["info"]["version"] == "v3"
    assert "/api/v4/user" in v4["paths"] and "/api/v3/user" not in v4["paths"]
    assert "/api/v4/user" not in v3["paths"]
