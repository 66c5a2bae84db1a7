"""/namespaces: the caller's own namespace; every namespace for admins."""

from __future__ import annotations


def test_user_sees_own_namespace(api, users):
    alice = users.create("alice")
    users.create("bob")
    body = api.as_(alice).get("/namespaces").json()
    assert [(n["path"], n["kind"]) for n in body] == [("alice", "user")]
    assert set(body[0]) >= {"id", "path", "kind"}


def test_admin_sees_all_and_can_search(api, users, admin):
    users.create("alice")
    users.create("bob")
    assert {n["path"] for n in api.as_(admin).get("/namespaces").json()} == {"sysadmin", "alice", "bob"}
    assert [n["path"] for n in api.as_(admin).get("/namespaces", params={"search": "BO"}).json()] == ["bob"]
    assert api.anonymous.get("/namespaces").status_code == 401
