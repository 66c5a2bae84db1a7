"""Team members of a project: list, get, add, edit, remove; events; permissions; python-gitlab."""

from __future__ import annotations

import gitlab
import pytest
from sqlalchemy import delete, func, select

from codeyard.db.models import Event, ProjectMember
from codeyard.services import events
from codeyard.services import members as member_service

from ..support import ROLES, QueryCounter, make_team

GUEST, REPORTER, DEVELOPER, MASTER, OWNER = 10, 20, 30, 40, 50
PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
MEMBER_FIELDS = {"id", "username", "email", "name", "state", "created_at", "access_level", "avatar_url", "web_url"}


def levels(rt, project) -> dict[int, int]:
    """{user id: access level} of the project's direct members, read from the database."""
    with rt.db.session() as session:
        rows = session.execute(
            select(ProjectMember.user_id, ProjectMember.access_level).where(ProjectMember.project_id == project.id)
        )
        return dict(rows.all())


def event_log(rt, project) -> list[tuple[str, int]]:
    """(action name, author id) of the project's joined/left events, oldest first."""
    with rt.db.session() as session:
        rows = session.scalars(
            select(Event).where(Event.project_id == project.id, Event.action.in_((events.JOINED, events.LEFT))).order_by(Event.id)
        ).all()
        return [(events.action_name(row), row.author_id) for row in rows]


def event_count(rt) -> int:
    with rt.db.session() as session:
        return session.scalar(select(func.count()).select_from(Event))


# --- list and get ---------------------------------------------------------------------------------


def test_list_shows_direct_members_with_their_level(api, users, projects):
    owner = users.create("owner")
    alice = users.create("alice", name="Alice Liddell")
    project = projects.create(owner)
    projects.add_member(project, alice, DEVELOPER)
    response = api.as_(owner).get(f"/projects/{project.id}/members")
    assert response.status_code == 200
    body = response.json()
    assert [(m["username"], m["access_level"]) for m in body] == [("owner", MASTER), ("alice", DEVELOPER)]
    assert set(body[1]) == MEMBER_FIELDS
    assert body[1]["id"] == alice.id and body[1]["email"] == "alice@example.com" and body[1]["name"] == "Alice Liddell"
    assert body[1]["state"] == "active" and body[1]["web_url"] == "http://testserver/u/alice"
    assert body[1]["created_at"].endswith("Z")
    assert response.headers["x-total"] == "2"


def test_group_members_are_not_listed(api, users, projects):
    owner, dev = users.create("owner"), users.create("dev")
    group = projects.group(owner, "team")
    projects.add_group_member(group, dev, DEVELOPER)
    project = projects.create(owner, group=group)
    assert api.as_(dev).get(f"/projects/{project.id}/members").json() == []
    direct = users.create("direct")
    projects.add_member(project, direct, REPORTER)
    assert [m["username"] for m in api.as_(dev).get(f"/projects/{project.ref}/members").json()] == ["direct"]


def test_list_query_filters_username_and_name(api, users, projects):
    owner = users.create("owner")
    project = projects.create(owner)
    for username, name in (("alice", "Alice Liddell"), ("bob", "Bob Builder"), ("carol", "Carol 100%")):
        projects.add_member(project, users.create(username, name=name), GUEST)

    def names(query):
        response = api.as_(owner).get(f"/projects/{project.id}/members", params={"query": query})
        assert response.status_code == 200
        return [m["username"] for m in response.json()]

    assert names("ALI") == ["alice"]
    assert names("builder") == ["bob"]
    assert names("100%") == ["carol"]
    assert names("%") == ["carol"]
    assert names("nobody") == []
    assert names("") == ["owner", "alice", "bob", "carol"]
    response = api.as_(owner).get(f"/projects/{project.id}/members", params={"query": "x" * 256})
    assert response.status_code == 400
    assert response.json() == {"message": {"query": ["is too long (maximum is 255 characters)"]}}


def test_list_is_paginated(api, users, projects):
    owner = users.create("owner")
    project = projects.create(owner)
    for i in range(4):
        projects.add_member(project, users.create(f"m{i}"), GUEST)
    response = api.as_(owner).get(f"/projects/{project.id}/members", params={"per_page": 2, "page": 2})
    assert [m["username"] for m in response.json()] == ["m1", "m2"]
    assert response.headers["x-total"] == "5" and response.headers["x-total-pages"] == "3"
    assert 'rel="next"' in response.headers["link"]


def test_members_are_read_without_a_session(api, users, projects, rt):
    """The read path: the project guard's statement and the page's, whose rows carry the total,
    whatever the page size or filter; a count only past the last page. No ORM session."""
    owner = users.create("owner")
    project = projects.create(owner)
    for i in range(6):
        projects.add_member(project, users.create(f"m{i}"), GUEST)
    cases = (({"per_page": 1}, 2, "7", 1), ({"per_page": 7}, 2, "7", 7), ({"query": "M1"}, 2, "1", 1),
             ({"page": 3, "per_page": 5}, 3, "7", 0), ({"page": 2**31 - 1, "per_page": 100}, 3, "7", 0),
             ({"query": "nobody"}, 2, "0", 0))  # fmt: skip
    for params, reads, total, listed in cases:
        with QueryCounter(rt) as counter:
            response = api.as_(owner).get(f"/projects/{project.id}/members", params=params)
        assert response.status_code == 200 and response.headers["x-total"] == total, (params, response.text)
        assert len(response.json()) == listed, params
        assert counter.count == 0 and len(counter.fast_reads) == reads, (params, counter.statements, counter.fast_reads)
    with QueryCounter(rt) as counter:
        assert api.as_(owner).get(f"/projects/{project.id}/members/{owner.id}").json()["access_level"] == 40
    assert counter.count == 0 and len(counter.fast_reads) == 2


def test_get_member(api, users, projects):
    owner, alice, stranger = users.create("owner"), users.create("alice"), users.create("stranger")
    project = projects.create(owner)
    projects.add_member(project, alice, REPORTER)
    response = api.as_(alice).get(f"/projects/{project.ref}/members/{alice.id}")
    assert response.status_code == 200
    assert set(response.json()) == MEMBER_FIELDS and response.json()["access_level"] == REPORTER
    for missing in (stranger.id, 999999, 99999999999, "abc", "-1"):
        response = api.as_(owner).get(f"/projects/{project.id}/members/{missing}")
        assert response.status_code == 404
        assert response.json() == {"message": "404 Not found"}
    response = api.as_(owner).get("/projects/424242/members")
    assert response.status_code == 404 and response.json() == {"message": "404 Project Not Found"}


# --- add ------------------------------------------------------------------------------------------


def test_add_member(api, users, projects, rt):
    owner, alice = users.create("owner"), users.create("alice")
    project = projects.create(owner)
    response = api.as_(owner).post(f"/projects/{project.id}/members", json={"user_id": alice.id, "access_level": DEVELOPER})
    assert response.status_code == 201
    body = response.json()
    assert set(body) == MEMBER_FIELDS
    assert body["username"] == "alice" and body["access_level"] == DEVELOPER and body["id"] == alice.id
    assert levels(rt, project) == {owner.id: MASTER, alice.id: DEVELOPER}
    assert event_log(rt, project) == [("joined", alice.id)]
    # The joined event is listed with the new member as its author.
    listed = api.as_(alice).get(f"/projects/{project.id}/events").json()
    assert listed[0]["action_name"] == "joined" and listed[0]["author_username"] == "alice"
    assert listed[0]["author"]["name"] == "User alice"


def test_add_member_with_form_encoding_and_every_level(api, users, projects, rt):
    owner = users.create("owner")
    project = projects.create(owner)
    for level in (GUEST, REPORTER, DEVELOPER, MASTER, OWNER):
        user = users.create(f"level{level}")
        response = api.as_(owner).post(f"/projects/{project.id}/members", data={"user_id": str(user.id), "access_level": str(level)})
        assert response.status_code == 201, response.text
        assert response.json()["access_level"] == level
        assert levels(rt, project)[user.id] == level


def test_add_existing_member_changes_nothing(api, users, projects, rt):
    owner, alice = users.create("owner"), users.create("alice")
    project = projects.create(owner)
    first = api.as_(owner).post(f"/projects/{project.id}/members", json={"user_id": alice.id, "access_level": GUEST})
    assert first.status_code == 201
    again = api.as_(owner).post(f"/projects/{project.id}/members", json={"user_id": alice.id, "access_level": MASTER})
    assert again.status_code == 201
    assert again.json()["access_level"] == GUEST
    assert levels(rt, project) == {owner.id: MASTER, alice.id: GUEST}
    assert event_log(rt, project) == [("joined", alice.id)]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"access_level": 30}, 400, '400 (Bad request) "user_id" not given'),
        ({"user_id": "", "access_level": 30}, 400, '400 (Bad request) "user_id" not given'),
        ({"user_id": "ALICE"}, 400, '400 (Bad request) "access_level" not given'),
        ({"user_id": "ALICE", "access_level": 1234}, 400, {"access_level": ["is not included in the list"]}),
        ({"user_id": "ALICE", "access_level": 0}, 400, {"access_level": ["is not included in the list"]}),
        ({"user_id": "ALICE", "access_level": "master"}, 400, {"access_level": ["is not included in the list"]}),
        ({"user_id": "ALICE", "access_level": True}, 400, {"access_level": ["is not included in the list"]}),
        ({"user_id": "abc", "access_level": 30}, 400, {"user_id": ["is not a number"]}),
        ({"user_id": [1], "access_level": 30}, 400, {"user_id": ["is not a number"]}),
        ({"user_id": 999999, "access_level": 30}, 404, "404 User Not Found"),
        ({"user_id": 10**30, "access_level": 30}, 404, "404 User Not Found"),
        ({"user_id": 2**40, "access_level": 30}, 404, "404 User Not Found"),
        ({"user_id": -3, "access_level": 30}, 404, "404 User Not Found"),
    ],
)
def test_add_member_bad_input_changes_nothing(api, users, projects, rt, body, status, message):
    owner, alice = users.create("owner"), users.create("alice")
    project = projects.create(owner)
    body = {key: alice.id if value == "ALICE" else value for key, value in body.items()}
    before = event_count(rt)
    response = api.as_(owner).post(f"/projects/{project.id}/members", json=body)
    assert response.status_code == status
    assert response.json() == {"message": message}
    assert levels(rt, project) == {owner.id: MASTER}
    assert event_count(rt) == before


def test_namespace_owner_rejoining_gets_no_joined_event(api, users, projects, rt):
    owner, admin = users.create("owner"), users.create("root", admin=True)
    project = projects.create(owner)
    with rt.db.transaction() as session:
        session.execute(delete(ProjectMember).where(ProjectMember.project_id == project.id))
    response = api.as_(admin).post(f"/projects/{project.id}/members", json={"user_id": owner.id, "access_level": MASTER})
    assert response.status_code == 201
    assert event_log(rt, project) == []
    # ... and cannot come back below master either.
    with rt.db.transaction() as session:
        session.execute(delete(ProjectMember).where(ProjectMember.project_id == project.id))
    response = api.as_(admin).post(f"/projects/{project.id}/members", json={"user_id": owner.id, "access_level": GUEST})
    assert response.status_code == 403
    assert levels(rt, project) == {}


def test_group_project_members_get_joined_events(api, users, projects, rt):
    owner, alice = users.create("owner"), users.create("alice")
    group = projects.group(owner, "team")
    project = projects.create(owner, group=group)
    response = api.as_(owner).post(f"/projects/{project.id}/members", json={"user_id": owner.id, "access_level": MASTER})
    assert response.status_code == 201
    response = api.as_(owner).post(f"/projects/{project.id}/members", json={"user_id": alice.id, "access_level": GUEST})
    assert response.status_code == 201
    # The group owner does not own the namespace the way a user owns a personal one: both joined.
    assert event_log(rt, project) == [("joined", owner.id), ("joined", alice.id)]


# --- edit -----------------------------------------------------------------------------------------


def test_edit_member(api, users, projects, rt):
    owner, alice = users.create("owner"), users.create("alice")
    project = projects.create(owner)
    projects.add_member(project, alice, GUEST)
    before = event_count(rt)
    response = api.as_(owner).put(f"/projects/{project.id}/members/{alice.id}", json={"access_level": MASTER})
    assert response.status_code == 200
    assert response.json()["access_level"] == MASTER and set(response.json()) == MEMBER_FIELDS
    assert levels(rt, project)[alice.id] == MASTER
    assert event_count(rt) == before
    # The same level again is fine.
    assert api.as_(owner).put(f"/projects/{project.id}/members/{alice.id}", data={"access_level": "40"}).status_code == 200


@pytest.mark.parametrize(
    ("target", "body", "status", "message"),
    [
        ("alice", {}, 400, '400 (Bad request) "access_level" not given'),
        ("alice", {"access_level": 123}, 400, {"access_level": ["is not included in the list"]}),
        ("alice", {"access_level": "x"}, 400, {"access_level": ["is not included in the list"]}),
        ("stranger", {"access_level": 30}, 404, "404 Not found"),
        ("999999", {"access_level": 30}, 404, "404 Not found"),
        ("99999999999", {"access_level": 30}, 404, "404 Not found"),
        ("abc", {"access_level": 30}, 404, "404 Not found"),
        ("owner", {"access_level": 30}, 403, "403 Forbidden - the owner of a personal project must keep at least master access"),
    ],
)
def test_edit_member_refusals_change_nothing(api, users, projects, rt, target, body, status, message):
    owner, alice, stranger = users.create("owner"), users.create("alice"), users.create("stranger")
    project = projects.create(owner)
    projects.add_member(project, alice, GUEST)
    ids = {"alice": alice.id, "stranger": stranger.id, "owner": owner.id}
    response = api.as_(owner).put(f"/projects/{project.id}/members/{ids.get(target, target)}", json=body)
    assert response.status_code == status
    assert response.json() == {"message": message}
    assert levels(rt, project) == {owner.id: MASTER, alice.id: GUEST}


def test_personal_owner_may_be_raised_to_owner_level(api, users, projects, rt):
    owner = users.create("owner")
    project = projects.create(owner)
    response = api.as_(owner).put(f"/projects/{project.id}/members/{owner.id}", json={"access_level": OWNER})
    assert response.status_code == 200
    assert levels(rt, project) == {owner.id: OWNER}


# --- remove ---------------------------------------------------------------------------------------


def test_remove_member(api, users, projects, rt):
    owner, alice = users.create("owner"), users.create("alice")
    project = projects.create(owner)
    projects.add_member(project, alice, DEVELOPER)
    response = api.as_(owner).delete(f"/projects/{project.id}/members/{alice.id}")
    assert response.status_code == 200
    assert response.json()["username"] == "alice" and response.json()["access_level"] == DEVELOPER
    assert set(response.json()) == MEMBER_FIELDS
    assert levels(rt, project) == {owner.id: MASTER}
    assert event_log(rt, project) == [("left", alice.id)]
    listed = api.as_(owner).get(f"/projects/{project.id}/events").json()
    assert listed[0]["action_name"] == "left" and listed[0]["author_username"] == "alice"
    # Gone: the project is now invisible to alice.
    assert api.as_(alice).get(f"/projects/{project.id}").status_code == 404
    # Idempotent.
    again = api.as_(owner).delete(f"/projects/{project.id}/members/{alice.id}")
    assert again.status_code == 200
    assert again.json() == {"message": "Access revoked", "id": alice.id}
    assert event_log(rt, project) == [("left", alice.id)]


def test_remove_unknown_user_is_a_success(api, users, projects, rt):
    owner = users.create("owner")
    project = projects.create(owner)
    response = api.as_(owner).delete(f"/projects/{project.id}/members/1000000")
    assert response.status_code == 200
    assert response.json() == {"message": "Access revoked", "id": 1000000}
    assert api.as_(owner).delete(f"/projects/{project.id}/members/99999999999").json()["id"] == 99999999999
    assert api.as_(owner).delete(f"/projects/{project.id}/members/abc").status_code == 404
    assert levels(rt, project) == {owner.id: MASTER}


def test_personal_owner_cannot_be_removed(api, users, projects, rt):
    owner, admin = users.create("owner"), users.create("root", admin=True)
    project = projects.create(owner)
    for who in (owner, admin):
        response = api.as_(who).delete(f"/projects/{project.id}/members/{owner.id}")
        assert response.status_code == 403
        assert response.json() == {"message": "403 Forbidden - the owner of a personal project cannot be removed"}
    assert levels(rt, project) == {owner.id: MASTER}
    assert event_log(rt, project) == []


def test_masters_may_remove_each_other_and_themselves(api, users, projects, rt):
    owner, one, two = users.create("owner"), users.create("one"), users.create("two")
    project = projects.create(owner)
    projects.add_member(project, one, MASTER)
    projects.add_member(project, two, MASTER)
    assert api.as_(one).delete(f"/projects/{project.id}/members/{two.id}").status_code == 200
    assert api.as_(one).delete(f"/projects/{project.id}/members/{one.id}").status_code == 200
    assert levels(rt, project) == {owner.id: MASTER}
    # No longer a member of a private project: it is invisible now.
    assert api.as_(one).get(f"/projects/{project.id}/members").status_code == 404


# --- permissions ----------------------------------------------------------------------------------


def read_status(role: str, visibility: int) -> int:
    if role == "anonymous":
        return 401
    if role == "outsider" and visibility == PRIVATE:
        return 404
    return 200


def write_status(role: str, visibility: int, success: int) -> int:
    if role == "anonymous":
        return 401
    if role == "outsider":
        return 404 if visibility == PRIVATE else 403
    if role in ("guest", "reporter", "developer"):
        return 403
    return success


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
def test_permissions(api, users, projects, admin, rt, visibility):
    team = make_team(users, projects, admin, visibility)
    project = team.project
    targets = {role: users.create(f"target-{role}") for role in ROLES}
    for role in ROLES:
        caller = api.as_(team.user(role))
        target = targets[role]
        base = f"/projects/{project.id}/members"
        assert caller.get(base).status_code == read_status(role, visibility), role
        assert caller.get(f"{base}/{team.user('guest').id}").status_code == read_status(role, visibility), role
        added = caller.post(base, json={"user_id": target.id, "access_level": GUEST})
        assert added.status_code == write_status(role, visibility, 201), role
        assert (target.id in levels(rt, project)) == (added.status_code == 201), role
        projects_level = levels(rt, project).get(target.id)
        edited = caller.put(f"{base}/{target.id}", json={"access_level": REPORTER})
        assert edited.status_code == write_status(role, visibility, 200), role
        if edited.status_code != 200:
            assert levels(rt, project).get(target.id) == projects_level
        removed = caller.delete(f"{base}/{target.id}")
        assert removed.status_code == write_status(role, visibility, 200), role
    # Refused calls changed nothing: only the members of make_team remain.
    assert len(levels(rt, project)) == 5
    if visibility != PRIVATE:
        # An external user is an outsider of internal projects too.
        external = users.create("external", external=True)
        expected = 404 if visibility == INTERNAL else 200
        assert api.as_(external).get(f"/projects/{project.id}/members").status_code == expected


def test_group_roles(api, users, projects, rt):
    owner, group_master, group_dev = users.create("owner"), users.create("gmaster"), users.create("gdev")
    group = projects.group(owner, "team")
    projects.add_group_member(group, group_master, MASTER)
    projects.add_group_member(group, group_dev, DEVELOPER)
    project = projects.create(owner, group=group)
    target = users.create("target")
    base = f"/projects/{project.id}/members"
    assert api.as_(group_dev).post(base, json={"user_id": target.id, "access_level": GUEST}).status_code == 403
    assert api.as_(group_master).post(base, json={"user_id": target.id, "access_level": GUEST}).status_code == 201
    assert api.as_(owner).put(f"{base}/{target.id}", json={"access_level": DEVELOPER}).status_code == 200
    assert levels(rt, project) == {target.id: DEVELOPER}


def test_sudo_acts_as_the_target(api, users, projects, admin, rt):
    owner, guest, target = users.create("owner"), users.create("guest"), users.create("target")
    project = projects.create(owner)
    projects.add_member(project, guest, GUEST)
    base = f"/projects/{project.id}/members"
    body = {"user_id": target.id, "access_level": GUEST}
    assert api.as_(admin).post(base, json=body, headers={"SUDO": "guest"}).status_code == 403
    assert api.as_(admin).post(base, json=body, headers={"SUDO": "owner"}).status_code == 201
    assert event_log(rt, project) == [("joined", target.id)]


# --- python-gitlab 1.4.0 against a real server ---------------------------------------------------


def test_python_gitlab_members(live, users, projects, rt):
    owner, alice = users.create("owner"), users.create("alice")
    project = projects.create(owner)
    gl = gitlab.Gitlab(live.base_url, private_token=owner.token, api_version="3")
    remote = gl.projects.get(project.id)
    created = remote.members.create({"user_id": alice.id, "access_level": DEVELOPER})
    assert created.username == "alice" and created.access_level == DEVELOPER
    assert sorted(m.username for m in remote.members.list()) == ["alice", "owner"]
    member = remote.members.get(alice.id)
    assert member.email == "alice@example.com"
    member.access_level = MASTER
    member.save()
    assert remote.members.get(alice.id).access_level == MASTER
    assert levels(rt, project)[alice.id] == MASTER
    with pytest.raises(gitlab.GitlabCreateError) as caught:
        remote.members.create({"user_id": alice.id, "access_level": 7})
    assert caught.value.response_code == 400
    member.delete()
    assert [m.username for m in remote.members.list()] == ["owner"]
    with pytest.raises(gitlab.GitlabGetError) as caught:
        remote.members.get(alice.id)
    assert caught.value.response_code == 404
    by_path = gl.projects.get(project.path_with_namespace)
    assert [m.username for m in by_path.members.list(query="own")] == ["owner"]
    assert event_log(rt, project) == [("joined", alice.id), ("left", alice.id)]


def test_concurrent_add_of_the_same_member_returns_the_winner(api, users, projects, rt, monkeypatch):
    """The request that loses the race on the unique (project, user) pair answers like a repeated add."""
    if rt.db.is_sqlite:
        pytest.skip("SQLite serialises writers (BEGIN IMMEDIATE): this race cannot happen there")
    owner, alice = users.create("owner"), users.create("alice")
    project = projects.create(owner)
    real_find = member_service.find
    calls = []

    def find_after_a_rival_commits(session, target, user_id):
        calls.append(user_id)
        if len(calls) == 1:
            # Between our lookup and our insert, another request adds alice as a guest.
            projects.add_member(project, alice, GUEST)
            return None
        return real_find(session, target, user_id)

    monkeypatch.setattr(member_service, "find", find_after_a_rival_commits)
    response = api.as_(owner).post(f"/projects/{project.id}/members", json={"user_id": alice.id, "access_level": MASTER})
    assert response.status_code == 201
    assert response.json()["access_level"] == GUEST
    assert levels(rt, project) == {owner.id: MASTER, alice.id: GUEST}
    assert event_log(rt, project) == []
