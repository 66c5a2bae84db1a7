"""Project lists: /projects, /owned, /starred, /all, /search/:query — scopes, filters, order, queries."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from sqlalchemy import select

from codeyard.db.models import Project, User
from codeyard.services import project_reads

from ..support import QueryCounter

GUEST, DEVELOPER, MASTER, OWNER = 10, 30, 40, 50


def ids(response) -> list[int]:
    assert response.status_code == 200, response.text
    return [p["id"] for p in response.json()]


@pytest.fixture
def world(users, projects):
    """alice owns a private, an internal and a public project; bob is a developer of the private one;
    carol owns group 'team' with a project; bob is a master of the group."""
    alice, bob, carol, dave = (users.create(n) for n in ("alice", "bob", "carol", "dave"))
    private = projects.create(alice, name="alpha private", description="first")
    internal = projects.create(alice, name="beta internal", visibility=10)
    public = projects.create(alice, name="gamma public", visibility=20)
    projects.add_member(private, bob, DEVELOPER)
    team = projects.group(carol, "team", visibility=20)
    grouped = projects.create(carol, group=team, name="delta grouped", visibility=20)
    projects.add_group_member(team, bob, MASTER)
    return {"alice": alice, "bob": bob, "carol": carol, "dave": dave, "private": private, "internal": internal,
            "public": public, "team": team, "grouped": grouped}  # fmt: skip


def test_projects_lists_memberships_only(api, world):
    w = world
    assert sorted(ids(api.as_(w["alice"]).get("/projects"))) == sorted([w["private"].id, w["internal"].id, w["public"].id])
    assert sorted(ids(api.as_(w["bob"]).get("/projects"))) == sorted([w["private"].id, w["grouped"].id])
    assert ids(api.as_(w["dave"]).get("/projects")) == []  # public projects are not memberships
    assert api.anonymous.get("/projects").status_code == 401


def test_permissions_in_lists(api, world):
    w = world
    listed = {p["id"]: p for p in api.as_(w["bob"]).get("/projects").json()}
    assert listed[w["private"].id]["permissions"] == {
        "project_access": {"access_level": DEVELOPER, "notification_level": 3}, "group_access": None
    }
    assert listed[w["grouped"].id]["permissions"] == {
        "project_access": None, "group_access": {"access_level": MASTER, "notification_level": 3}
    }
    carol = api.as_(w["carol"]).get("/projects").json()[0]
    assert carol["permissions"]["group_access"]["access_level"] == OWNER
    assert all("public_builds" in p for p in listed.values())
    assert listed[w["private"].id]["runners_token"] == ""  # a developer may not administer it
    assert len(listed[w["grouped"].id]["runners_token"]) == 20  # a group master may


def test_a_project_reached_several_ways_is_listed_once(api, world, projects):
    """Owner, direct member and group member at once: one row, counted once in X-Total."""
    w = world
    projects.add_member(w["grouped"], w["carol"], MASTER)
    projects.add_member(w["grouped"], w["bob"], DEVELOPER)
    for who, expected in (("carol", [w["grouped"].id]), ("bob", sorted([w["private"].id, w["grouped"].id]))):
        response = api.as_(w[who]).get("/projects")
        assert sorted(ids(response)) == expected and response.headers["x-total"] == str(len(expected))


def test_pages_carry_fork_and_star_counts(api, world, admin):
    w = world
    for who in ("bob", "carol"):
        assert api.as_(w[who]).post(f"/projects/fork/{w['public'].id}").status_code == 201
    assert api.as_(w["bob"]).post(f"/projects/{w['internal'].id}/star").status_code == 201
    for client, path in ((api.as_(w["alice"]), "/projects"), (api.as_(admin), "/projects/all")):
        listed = {p["id"]: p for p in client.get(path, params={"per_page": 100}).json()}
        assert [listed[w[name].id]["forks_count"] for name in ("private", "internal", "public")] == [0, 0, 2], path
        assert [listed[w[name].id]["star_count"] for name in ("private", "internal", "public")] == [0, 1, 0], path
    forks = [p for p in api.as_(admin).get("/projects/all").json() if p.get("forked_from_project")]
    assert len(forks) == 2 and {p["forked_from_project"]["id"] for p in forks} == {w["public"].id}
    assert all(p["forks_count"] == 0 for p in forks)


def test_owned(api, world):
    w = world
    assert sorted(ids(api.as_(w["alice"]).get("/projects/owned"))) == sorted([w["private"].id, w["internal"].id, w["public"].id])
    assert ids(api.as_(w["carol"]).get("/projects/owned")) == [w["grouped"].id]
    assert ids(api.as_(w["bob"]).get("/projects/owned")) == []  # a group master does not own it


def test_all_is_for_admins(api, world, admin):
    w = world
    assert api.as_(w["alice"]).get("/projects/all").status_code == 403
    everything = api.as_(admin).get("/projects/all")
    assert len(ids(everything)) == 4
    assert all("permissions" in p for p in everything.json())


def test_filters_and_order(api, world):
    w = world
    as_alice = api.as_(w["alice"])
    assert ids(as_alice.get("/projects", params={"search": "BETA"})) == [w["internal"].id]
    assert ids(as_alice.get("/projects", params={"search": "first"})) == [w["private"].id]  # description
    assert ids(as_alice.get("/projects", params={"visibility": "public"})) == [w["public"].id]
    assert ids(as_alice.get("/projects", params={"visibility": "internal"})) == [w["internal"].id]
    newest_first = ids(as_alice.get("/projects"))
    assert newest_first == [w["public"].id, w["internal"].id, w["private"].id]
    assert ids(as_alice.get("/projects", params={"order_by": "id", "sort": "asc"})) == newest_first[::-1]
    assert ids(as_alice.get("/projects", params={"order_by": "name", "sort": "asc"}))[0] == w["private"].id
    for bad in ({"order_by": "stars"}, {"sort": "sideways"}, {"visibility": "secret"}, {"archived": "perhaps"}):
        response = as_alice.get("/projects", params=bad)
        assert response.status_code == 400, bad
        assert list(response.json()["message"]) == list(bad)


def test_pagination(api, users, projects):
    alice = users.create("alice")
    made = [projects.create(alice, name=f"p{i}") for i in range(5)]
    page = api.as_(alice).get("/projects", params={"per_page": 2, "page": 2, "order_by": "name", "sort": "asc"})
    assert [p["name"] for p in page.json()] == ["p2", "p3"]
    assert page.headers["x-total"] == "5" and page.headers["x-total-pages"] == "3"
    beyond = api.as_(alice).get("/projects", params={"per_page": 2, "page": 4})
    assert beyond.status_code == 200 and beyond.json() == [] and beyond.headers["x-total"] == "5"
    last = api.as_(alice).get("/projects", params={"per_page": 2, "page": 3, "search": "p"})
    assert len(last.json()) == 1 and last.headers["x-total"] == "5" and last.headers["x-total-pages"] == "3"
    filtered = api.as_(alice).get("/projects", params={"per_page": 1, "search": "p3"})
    assert ids(filtered) == [made[3].id] and filtered.headers["x-total"] == "1"
    assert api.as_(alice).get("/projects", params={"page": 2, "search": "p3"}).headers["x-total"] == "1"


@pytest.mark.parametrize("first_rows, walk_rows", [(project_reads.FIRST_ROWS, project_reads.WALK_ROWS), (0, 0), (0, 10**6)])
@pytest.mark.parametrize("order", [("created_at", "desc"), ("name", "asc"), ("id", "asc")])
def test_member_pages_walk_both_ways_of_membership(api, users, projects, monkeypatch, order, first_rows, walk_rows):
    """The caller's projects come from their namespaces and from direct memberships, some reached
    both ways, between projects of others: every page, at every offset, is the next slice of one
    order, each project once, whichever way the page is cut: SQLite from each branch's first rows
    or (FIRST_ROWS 0) from the whole list; PostgreSQL by a walk along the order (as far as
    WALK_ROWS lets it: a million, always) or by gathering (WALK_ROWS 0)."""
    monkeypatch.setattr(project_reads, "FIRST_ROWS", first_rows)
    monkeypatch.setattr(project_reads, "WALK_ROWS", walk_rows)
    alice, bob = users.create("alice", projects_limit=100), users.create("bob", projects_limit=100)
    carol = users.create("carol", projects_limit=100)
    team = projects.group(bob, "team")
    projects.add_group_member(team, alice, DEVELOPER)
    made = []
    for i in range(9):  # interleaved: her own, her group's, bob's with her as a member
        owner, group = ((alice, None), (bob, team), (bob, None))[i % 3]
        made.append(project := projects.create(owner, group=group, name=f"p{(7 * i) % 9}"))
        if i in (1, 4):
            projects.add_member(project, alice, DEVELOPER)  # a group project she is also a member of
        elif owner is bob and group is None:
            projects.add_member(project, alice, DEVELOPER)
        if i % 4 == 0:  # others' projects between hers, in every order: a walk reads past them
            projects.create(carol, name=f"p{i}{'z' if i else ''}", visibility=20)
    for params in ({"order_by": order[0], "sort": order[1]}, {"order_by": order[0], "sort": order[1], "search": "p"}):
        whole = ids(api.as_(alice).get("/projects", params={**params, "per_page": 100}))
        assert sorted(whole) == sorted(p.id for p in made)
        for per_page in (1, 2, 4):
            walked = []
            for number in range(1, 10 // per_page + 2):
                response = api.as_(alice).get("/projects", params={**params, "per_page": per_page, "page": number})
                assert response.headers["x-total"] == "9"
                walked += ids(response)
            assert walked == whole, (params, per_page)


def test_pages_count_in_the_page_statement(api, users, projects, rt):
    """The page's rows carry the total; a count runs only past the end."""
    alice, nobody, admin = users.create("alice"), users.create("nobody"), users.create("root", admin=True)
    for i in range(3):
        projects.create(alice, name=f"p{i}")
    projects.create(nobody, name="q", visibility=20)
    for path in ("/projects", "/projects/owned"):
        for who, params, total, reads in ((alice, {"per_page": 2}, "3", 1), (alice, {"per_page": 2, "page": 5}, "3", 2),
                                          (alice, {"search": "p1"}, "1", 1), (admin, {}, "0", 1), (admin, {"page": 2}, "0", 2)):  # fmt: skip
            with QueryCounter(rt) as counter:
                response = api.as_(who).get(path, params=params)
            assert response.status_code == 200 and response.headers["x-total"] == total, (path, params)
            assert len(counter.fast_reads) == reads, counter.fast_reads
    for path in ("/projects", "/projects/owned", "/projects/all", "/projects/starred", "/projects/search/p"):
        # An offset past PostgreSQL's integer (the largest page times 100) is an empty page.
        far = api.as_(admin if path == "/projects/all" else alice).get(path, params={"page": 2**31 - 1, "per_page": 100})
        assert far.status_code == 200 and far.json() == [], (path, far.text)
    for params, total in (({"per_page": 1}, "4"), ({"search": "p"}, "3"), ({"visibility": "public"}, "1")):
        response = api.as_(admin).get("/projects/all", params=params)
        assert response.headers["x-total"] == total and len(response.json()) == min(int(total), params.get("per_page", 20))


def test_search_and_filters_take_wildcards_literally(api, users, projects):
    alice = users.create("alice")
    for name in ("100% done", "1000 done", "a_b", "axb", "back/slash"):
        projects.create(alice, name=name.replace("%", "").replace("/", "-"), description=name)
    assert [p["description"] for p in api.as_(alice).get("/projects", params={"search": "0%"}).json()] == ["100% done"]
    assert [p["description"] for p in api.as_(alice).get("/projects", params={"search": "a_"}).json()] == ["a_b"]
    assert [p["description"] for p in api.as_(alice).get("/projects", params={"search": "k/s"}).json()] == ["back/slash"]
    assert [p["name"] for p in api.as_(alice).get("/projects/search/a_").json()] == ["a_b"]


def test_starred_only_lists_readable_projects(api, world, projects):
    w = world
    api.as_(w["dave"]).post(f"/projects/{w['public'].id}/star")
    assert ids(api.as_(w["dave"]).get("/projects/starred")) == [w["public"].id]


def test_search_endpoint(api, world, users, admin):
    w = world
    # GitLab searched memberships plus internal and public projects, for admins too.
    assert sorted(ids(api.as_(admin).get("/projects/search/a"))) == sorted([w["internal"].id, w["public"].id, w["grouped"].id])
    external = users.create("ext", external=True)
    assert sorted(ids(api.as_(w["dave"]).get("/projects/search/a"))) == sorted(
        [w["internal"].id, w["public"].id, w["grouped"].id]
    )
    assert sorted(ids(api.as_(w["alice"]).get("/projects/search/A"))) == sorted(
        [w["private"].id, w["internal"].id, w["public"].id, w["grouped"].id]
    )
    assert sorted(ids(api.as_(external).get("/projects/search/a"))) == sorted([w["public"].id, w["grouped"].id])
    assert ids(api.as_(w["alice"]).get("/projects/search/gamma")) == [w["public"].id]
    ordered = ids(api.as_(w["alice"]).get("/projects/search/a", params={"order_by": "name", "sort": "desc"}))
    assert ordered[0] == w["public"].id
    assert "permissions" not in api.as_(w["alice"]).get("/projects/search/gamma").json()[0]
    assert api.anonymous.get("/projects/search/a").status_code == 401
    assert api.as_(w["alice"]).get("/projects/search/a", params={"order_by": "path"}).status_code == 400


@pytest.mark.parametrize(
    "path", ["/projects", "/projects/all", "/projects/owned", "/projects/starred", "/projects/search/p", "/groups/team/projects"]
)
def test_lists_run_a_fixed_number_of_queries(api, users, projects, rt, path):
    admin = users.create("boss", admin=True, projects_limit=100)
    team = projects.group(admin, "team", visibility=20)
    for i in range(12):
        project = projects.create(admin, name=f"p{i}", visibility=20 if i % 2 else 0)
        projects.add_member(project, users.create(f"member{i}"), DEVELOPER)
    forker = users.create("forker")
    for i in range(3):
        source = projects.create(admin, group=team, name=f"g{i}", visibility=20)
        api.as_(admin).post(f"/projects/{source.id}/star")
        assert api.as_(forker).post(f"/projects/fork/{source.id}").status_code == 201
    for i in range(3):
        # Forks of personal projects: their sources' owners must not be loaded one by one.
        source = projects.create(forker, name=f"personal{i}", visibility=20)
        assert api.as_(admin).post(f"/projects/fork/{source.id}").status_code == 201
    for per_page in (2, 100):
        with QueryCounter(rt) as counter:
            response = api.as_(admin).get(path, params={"per_page": per_page})
        assert response.status_code == 200
        assert len(response.json()) == min(per_page, int(response.headers["x-total"])) >= 2
        # The read path: besides the caller's lookup, one statement for the page's rows with
        # their owners, fork sources, counts and the caller's memberships (and the group's guard
        # one for the group with the caller's membership in it); no session at all. The page's
        # rows carry the total: no count of their own.
        assert counter.count == 0, counter.statements
        # Every project's number is kept between requests: /projects/all counts them only when
        # projects changed since (or PostgreSQL's change feed is not listening yet).
        reads = [s for s in counter.fast_reads if path != "/projects/all" or not s.startswith("SELECT count(*)")]
        assert len(reads) == (2 if path.startswith("/groups") else 1), counter.fast_reads


def test_every_project_s_number_is_kept_until_projects_come_or_go(api, users, projects, admin, rt):
    """/projects/all without filters takes (on PostgreSQL) the number of projects kept since they
    last changed: a project created or deleted is counted again, other writes leave it."""
    alice = users.create("alice")
    made = [projects.create(alice, name=f"p{i}") for i in range(3)]

    def total(**params) -> int:
        response = api.as_(admin).get("/projects/all", params={"per_page": 1, **params})
        assert response.status_code == 200 and len(response.json()) == 1
        return int(response.headers["x-total"])

    assert total() == total() == 3
    projects.create(alice, name="p3")
    assert total() == 4 and total(search="p1") == 1
    assert api.as_(admin).delete(f"/projects/{made[0].id}").status_code == 200
    assert total() == 3
    with rt.db.transaction() as session:  # a write that is no project's: the number stays right
        session.get(Project, made[1].id).description = "changed"
    assert total() == 3
    if rt.db.is_sqlite:
        return  # SQLite counts in the page's statement
    deadline = time.monotonic() + 10
    while True:  # once PostgreSQL's feed listens and this process's notifications came, it is kept
        with QueryCounter(rt) as counter:
            assert total() == 3
        if not [s for s in counter.fast_reads if s.startswith("SELECT count(*)")]:
            break
        assert time.monotonic() < deadline, "every project's number is never kept"
        time.sleep(0.01)
    projects.create(alice, name="p4")  # this process's commit moves the generation at once
    assert total() == 4


def test_list_entities_equal_the_single_project_reads(api, world, admin):
    """A page shares each namespace's part among its projects: every entity is still the one
    GET /projects/:id gives (alice's three projects in one namespace, carol's in a group)."""
    as_admin = api.as_(admin)
    listed = as_admin.get("/projects/all").json()
    assert len({p["namespace"]["id"] for p in listed}) == 2 and len(listed) == 4
    for entity in listed:
        entity.pop("public_builds")  # lists only
        assert entity == as_admin.get(f"/projects/{entity['id']}").json()


def test_a_page_is_read_in_the_database_s_reader_threads(api, rt, world, monkeypatch):
    """The database's work on a page runs in `Database.readers` (two threads), not on the loop."""
    real, threads = project_reads.page, []
    monkeypatch.setattr(project_reads, "page", lambda *args: threads.append(threading.current_thread().name) or real(*args))
    for path in ("/projects", "/projects/starred", "/projects/search/alpha"):
        assert api.as_(world["bob"]).get(path).status_code == 200
    assert len(threads) == 3
    assert all(name.startswith("codeyard-reader") for name in threads), threads


@pytest.mark.parametrize("scope", [project_reads.ALL, project_reads.MEMBER])
def test_the_page_size_is_written_into_the_page_statement(rt, users, projects, scope):
    """Not bound: PostgreSQL then keeps one generic plan for the prepared statement. With the size a
    parameter, a generic plan assumed a tenth of the rows, and on 10,000 projects PostgreSQL planned
    every page of /projects/all afresh (a millisecond of its two or three)."""
    admin = users.create("boss", admin=True)
    for i in range(3):
        projects.create(admin, name=f"p{i}")
    with rt.db.session() as session:
        caller = session.get(User, admin.id)
    query = project_reads.Query(scope, caller, project_reads.project_service.Filters())
    for size in (2, 3):
        with QueryCounter(rt) as counter:
            total, rows = project_reads.page(rt.db, query, 0, size)
        assert total == 3 and len(rows) == size
        (page,) = [s for s in counter.fast_reads if not s.startswith("SELECT count(*)")]  # the kept number aside
        assert f"LIMIT {size} OFFSET " in page, page


@pytest.mark.parametrize("path", ["/projects", "/projects/all", "/projects/owned", "/projects/starred", "/groups/team/projects"])
def test_every_list_sorts_by_every_orderable_column(api, rt, users, projects, path):
    admin = users.create("boss", admin=True, projects_limit=100)
    team = projects.group(admin, "team", visibility=20)
    made = [projects.create(admin, group=team if i % 2 else None, name=f"p{(5 * i) % 7}") for i in range(7)]
    for project in made:
        api.as_(admin).post(f"/projects/{project.id}/star")
    with rt.db.transaction() as session:  # sort keys that disagree with the ids' order
        for number, project in enumerate(made):
            row = session.get(Project, project.id)
            row.updated_at = row.updated_at + dt.timedelta(minutes=(3 * number) % 7)
            row.last_activity_at = row.last_activity_at - dt.timedelta(minutes=(2 * number) % 7)
    for column in project_reads.ORDERABLE:
        for sort in ("asc", "desc"):
            listed = ids(api.as_(admin).get(path, params={"order_by": column, "sort": sort, "per_page": 100}))
            key = getattr(Project, column)
            with rt.db.session() as session:
                expected = session.scalars(
                    select(Project.id).where(Project.id.in_(listed)).order_by(*((key, Project.id) if sort == "asc" else (key.desc(), Project.id.desc())))
                ).all()
            assert listed == expected and len(listed) == (3 if path.startswith("/groups") else 7), (column, sort)
