"""/namespaces: the caller's own namespace; every namespace for admins."""

from __future__ import annotations

from ..support import QueryCounter


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


def test_groups_count_and_the_read_path(api, users, projects, rt):
    """A member sees their groups too; each page is one statement carrying the total, no session."""
    alice, bob = users.create("alice"), users.create("bob")
    team = projects.group(bob, "team")
    projects.add_group_member(team, alice, 30)
    projects.group(bob, "other")
    for params, total, listed, reads in (({}, "2", ["alice", "team"], 1), ({"search": "TE"}, "1", ["team"], 1),
                                         ({"page": 2, "per_page": 2}, "2", [], 2), ({"search": "100%"}, "0", [], 1)):  # fmt: skip
        with QueryCounter(rt) as counter:
            response = api.as_(alice).get("/namespaces", params=params)
        assert [n["path"] for n in response.json()] == listed and response.headers["x-total"] == total, params
        assert counter.count == 0 and len(counter.fast_reads) == reads, (params, counter.statements, counter.fast_reads)
