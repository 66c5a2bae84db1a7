"""The conventions every endpoint shares: error shapes, unknown routes, verbs, bodies, pagination."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from codeyard.app import CodeyardApp
from codeyard.errors import Conflict
from codeyard.http.params import Int, Str
from codeyard.http.routing import Router, Routes


def test_unknown_route_is_404_json(api, users):
    alice = users.create("alice")
    for path in ("/nope", "/users/1/nothing-here"):
        response = api.as_(alice).get(path)
        assert response.status_code == 404
        assert response.json() == {"message": "404 Not Found"}
    assert api.anonymous.get("/", headers={}).status_code == 404


def test_wrong_verb_on_known_path_is_405_with_allow(api, users):
    alice = users.create("alice")
    response = api.as_(alice).delete("/user")
    assert response.status_code == 405
    assert response.json() == {"message": "405 Method Not Allowed"}
    assert response.headers["allow"] == "GET, HEAD"
    response = api.as_(alice).request("PATCH", "/users")
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == {"GET", "HEAD", "POST"}


def test_head_and_options(api, users):
    alice = users.create("alice")
    head = api.as_(alice).request("HEAD", "/user")
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) > 0
    options = api.as_(alice).request("OPTIONS", "/user")
    assert options.status_code == 204
    assert options.headers["allow"] == "GET, HEAD"


def test_json_suffix_is_accepted(api, users):
    alice = users.create("alice")
    assert api.as_(alice).get("/user.json").json()["username"] == "alice"


def test_invalid_json_body_is_400(api, admin):
    response = api.as_(admin).post("/users", content=b"{not json", headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert "JSON" in response.json()["message"]
    response = api.as_(admin).post("/users", content=b"[1, 2]", headers={"Content-Type": "application/json"})
    assert response.status_code == 400


def test_unsupported_body_type_is_415(api, admin):
    response = api.as_(admin).post("/users", content=b"<x/>", headers={"Content-Type": "application/xml"})
    assert response.status_code == 415
    assert "message" in response.json()


def test_params_from_query_form_and_json_are_merged(api, admin):
    base = {"password": "password123", "name": "Query Name"}
    response = api.as_(admin).post(
        "/users", params={**base, "email": "q@example.com", "username": "fromquery"}, data={"username": "fromform"}
    )
    assert response.status_code == 201
    assert response.json()["username"] == "fromform"  # the body beats the query string
    response = api.as_(admin).post("/users", params=base, json={"email": "j@example.com", "username": "fromjson"})
    assert response.status_code == 201
    assert response.json()["name"] == "Query Name"


def test_missing_required_parameter_message(api, admin):
    response = api.as_(admin).post("/users", json={"email": "x@example.com", "password": "password123", "name": "X"})
    assert response.status_code == 400
    assert response.json() == {"message": '400 (Bad request) "username" not given'}


def _app_with(rt, routes: Routes) -> TestClient:
    app = CodeyardApp(rt, Router(routes.routes), owns_runtime=False)
    return TestClient(app, raise_server_exceptions=False)


def test_unexpected_exception_is_500_without_traceback(rt, caplog):
    routes = Routes()

    @routes.get("/boom", auth="none")
    def boom(ctx):
        raise RuntimeError("secret internals")

    response = _app_with(rt, routes).get("/boom")
    assert response.status_code == 500
    assert response.json() == {"message": "500 Internal Server Error"}
    assert "secret" not in response.text
    assert "secret internals" in caplog.text  # the traceback goes to the log


def test_lost_uniqueness_race_is_409(rt):
    routes = Routes()

    @routes.post("/dup", auth="none")
    def dup(ctx):
        from codeyard.db.models import Namespace

        for _ in range(2):
            ctx.session.add(Namespace(path="same", name="same", kind="group"))
        ctx.session.flush()

    response = _app_with(rt, routes).post("/dup")
    assert response.status_code == 409
    assert response.json() == {"message": "409 Conflict"}


def test_domain_error_rolls_back_the_transaction(rt):
    from codeyard.db.models import Namespace

    routes = Routes()

    @routes.post("/half", auth="none")
    def half(ctx):
        ctx.session.add(Namespace(path="halfway", name="halfway", kind="group"))
        ctx.session.flush()
        raise Conflict("nope")

    assert _app_with(rt, routes).post("/half").status_code == 409
    with rt.db.session() as session:
        assert session.query(Namespace).filter_by(path="halfway").count() == 0


def test_validation_errors_are_collected_per_field(rt):
    routes = Routes()

    @routes.post("/check", auth="none", params=(Int("count", minimum=0), Str("word", max_length=3)))
    def check(ctx):
        return ctx.args

    client = _app_with(rt, routes)
    response = client.post("/check", json={"count": "many", "word": "toolong"})
    assert response.status_code == 400
    assert response.json() == {
        "message": {"count": ["is not a number"], "word": ["is too long (maximum is 3 characters)"]}
    }
    assert client.post("/check", data={"count": "3", "word": "ok"}).json() == {"count": 3, "word": "ok"}


def test_body_over_the_limit_is_413(rt):
    routes = Routes()

    @routes.post("/small", auth="none", max_body=10)
    def small(ctx):
        return ctx.body

    client = _app_with(rt, routes)
    response = client.post("/small", content=b'{"a": "0123456789"}', headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json() == {"message": "413 Request Entity Too Large"}
    assert client.post("/small", json={"a": 1}).status_code == 201


def test_timestamps_are_iso8601_with_milliseconds_and_z(api, users):
    alice = users.create("alice")
    created = api.as_(alice).get("/user").json()["created_at"]
    assert len(created) == 24 and created[10] == "T" and created[19] == "." and created.endswith("Z")


@pytest.fixture
def many_users(users):
    return [users.create(f"member{i:02d}") for i in range(7)]


def test_pagination_headers_and_links(api, admin, many_users):
    response = api.as_(admin).get("/users", params={"per_page": 3, "page": 2, "search": "member"})
    assert response.status_code == 200
    assert [u["username"] for u in response.json()] == ["member03", "member04", "member05"]
    headers = response.headers
    assert headers["x-total"] == "7"
    assert headers["x-total-pages"] == "3"
    assert headers["x-per-page"] == "3"
    assert headers["x-page"] == "2"
    assert headers["x-next-page"] == "3"
    assert headers["x-prev-page"] == "1"
    links = {}
    for part in headers["link"].split(", "):
        url, rel = part.split("; ")
        links[rel.split('"')[1]] = url.strip("<>")
    assert set(links) == {"prev", "next", "first", "last"}
    for rel, page in {"prev": "1", "next": "3", "first": "1", "last": "3"}.items():
        url = urlsplit(links[rel])
        assert url.scheme == "http" and url.netloc == "testserver" and url.path == "/api/v3/users"
        query = parse_qs(url.query)
        assert query == {"page": [page], "per_page": ["3"], "search": ["member"]}


def test_pagination_edges(api, admin, many_users):
    first = api.as_(admin).get("/users", params={"per_page": 5})
    assert first.headers["x-prev-page"] == "" and first.headers["x-next-page"] == "2"
    assert 'rel="prev"' not in first.headers["link"]
    last = api.as_(admin).get("/users", params={"per_page": 5, "page": 2})
    assert last.headers["x-next-page"] == "" and 'rel="next"' not in last.headers["link"]
    beyond = api.as_(admin).get("/users", params={"per_page": 5, "page": 9})
    assert beyond.json() == [] and beyond.headers["x-page"] == "9"
    clamped = api.as_(admin).get("/users", params={"per_page": 1000, "page": "junk"})
    assert clamped.headers["x-per-page"] == "100" and clamped.headers["x-page"] == "1"
    default = api.as_(admin).get("/users", params={"per_page": 0})
    assert default.headers["x-per-page"] == "20"
    empty = api.as_(admin).get("/users", params={"username": "nobody"})
    assert empty.json() == [] and empty.headers["x-total"] == "0" and empty.headers["x-total-pages"] == "0"
    for huge in ("9223372036854775807", "99999999999999999999"):  # the offset must not overflow
        response = api.as_(admin).get("/users", params={"per_page": 5, "page": huge})
        assert response.status_code == 200 and response.json() == []
        assert response.headers["x-page"] in ("2147483647", "1")


def test_numbers_beyond_an_integer_column(api, users, admin):
    """Ids no row can have name nothing (404); numeric parameters beyond a column are 400; never a 500."""
    alice = users.create("alice")
    for path in ("/users/3000000000", "/projects/3000000000", "/groups/3000000000", "/users/99999999999999999999"):
        assert api.as_(admin).get(path).status_code == 404, path
    assert api.as_(admin).delete("/users/3000000000").status_code == 404
    assert api.as_(admin).put("/users/3000000000/block").status_code == 404
    for limit in (3000000000, 10**20, "3000000000"):
        response = api.as_(admin).put(f"/users/{alice.id}", json={"projects_limit": limit})
        assert response.status_code == 400, limit
        assert response.json() == {"message": {"projects_limit": ["must be less than or equal to 2147483647"]}}
    response = api.as_(admin).put("/application/settings", json={"default_projects_limit": 3000000000})
    assert response.status_code == 400 and "default_projects_limit" in response.json()["message"]
    assert api.as_(admin).get(f"/users/{alice.id}").json()["projects_limit"] != 3000000000
