"""v4 namespaces: the caller's list, one namespace by id or path, and whether a path is taken."""

from __future__ import annotations

from ..support import QueryCounter

NAMESPACE_KEYS = {"id", "name", "path", "kind", "full_path", "parent_id", "avatar_url", "web_url"}


def test_list_through_the_client(gl, alice, projects, users):
    owned = projects.group(alice, "alices")
    other = users.create("bob")
    member_of = projects.group(other, "bobs")
    projects.add_group_member(member_of, alice, 30)
    projects.group(other, "hidden")
    listed = gl(alice).namespaces.list(get_all=True)
    assert [(n.path, n.kind) for n in listed] == [("alice", "user"), ("alices", "group"), ("bobs", "group")]
    owned_only = gl(alice).namespaces.list(owned_only=True, get_all=True)
    assert [n.path for n in owned_only] == ["alice", "alices"]
    assert [n.path for n in gl(alice).namespaces.list(search="BOB")] == ["bobs"]
    assert owned.id in [n.id for n in listed]


def test_shape_and_paging(api4, alice, admin, users):
    for n in range(3):
        users.create(f"someone{n}")
    response = api4.as_(admin).get("/namespaces", params={"per_page": 2})
    assert response.status_code == 200
    assert response.headers["x-total"] == "5" and response.headers["x-next-page"] == "2"
    first = api4.as_(alice).get("/namespaces").json()[0]
    assert set(first) == NAMESPACE_KEYS
    assert first["full_path"] == "alice" and first["parent_id"] is None and first["web_url"].endswith("/u/alice")


def test_one_namespace(gl, api4, alice, users, projects, admin):
    group = projects.group(alice, "mine")
    bob = users.create("bob")
    assert gl(alice).namespaces.get(group.id).path == "mine"
    found = api4.as_(alice).get("/namespaces/MINE").json()
    assert found["id"] == group.id and found["web_url"].endswith("/groups/mine")
    hidden = api4.as_(bob).get(f"/namespaces/{group.id}")
    assert (hidden.status_code, hidden.json()) == (404, {"message": "404 Namespace Not Found"})
    assert api4.as_(bob).get("/namespaces/alice").status_code == 404
    assert api4.as_(admin).get("/namespaces/alice").json()["kind"] == "user"
    for bad in ("0", "99999999999999999999", "no-such", "%2E%2E"):
        assert api4.as_(alice).get(f"/namespaces/{bad}").status_code == 404, bad


def test_exists(gl, api4, alice, projects, users):
    projects.group(alice, "team")
    users.create("team1")
    answer = gl(alice).namespaces.exists("team")
    assert answer.exists is True and answer.suggests == ["team2"]
    assert api4.as_(alice).get("/namespaces/TEAM/exists").json()["exists"] is True
    assert api4.as_(alice).get("/namespaces/free/exists").json() == {"exists": False, "suggests": []}
    assert api4.as_(alice).get("/namespaces/team/exists", params={"parent_id": 5}).json() == {"exists": False, "suggests": []}
    assert api4.as_(alice).get("/namespaces/" + "x" * 5000 + "/exists").json() == {"exists": False, "suggests": []}
    assert api4.as_(alice).get("/namespaces/bad%20path/exists").json() == {"exists": False, "suggests": []}
    assert api4.anonymous.get("/namespaces/team/exists").status_code == 401


def test_list_is_one_statement(api4, rt, alice, projects):
    for path in ("n1", "n2", "n3"):
        projects.group(alice, path)
    for params in ({}, {"owned_only": True}, {"search": "n"}):
        with QueryCounter(rt) as counter:
            response = api4.as_(alice).get("/namespaces", params=params)
        assert response.status_code == 200
        assert counter.count == 0 and len(counter.fast_reads) == 1, (params, counter.statements, counter.fast_reads)
