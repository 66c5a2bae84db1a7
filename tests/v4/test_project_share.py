"""Sharing a project with a group (v4): the group's members reach the project at their group level,
at most the link's, in every read (one project, lists, the policy's ORM path, git's loader) until the
link expires or goes; who may share, with whom, and bad input."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import update

from codeyard.db.models import Project, ProjectGroupLink, User
from codeyard.db.readers import SessionReader, now
from codeyard.policies.projects import ADMIN_PROJECT, PUSH_CODE, READ_PROJECT
from codeyard.services import access as access_service
from codeyard.services import loader, project_reads
from codeyard.services.projects import Filters

PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
GUEST, REPORTER, DEVELOPER, MASTER, OWNER = 10, 20, 30, 40, 50


@pytest.fixture
def world(users, projects):
    """alice owns a private project; group 'crew' (internal, owned by carol) has bob as a master and
    gus as a guest; dave is nobody."""
    alice, bob, carol, dave, gus = (users.create(n) for n in ("alice", "bob", "carol", "dave", "gus"))
    project = projects.create(alice, name="secret")
    crew = projects.group(carol, "crew", visibility=INTERNAL)
    projects.add_group_member(crew, bob, MASTER)
    projects.add_group_member(crew, gus, GUEST)
    return {"alice": alice, "bob": bob, "carol": carol, "dave": dave, "gus": gus, "project": project, "crew": crew}


def share(api4, who, project, group, level, **extra):
    return api4.as_(who).post(f"/projects/{project.id}/share", json={"group_id": group.id, "group_access": level, **extra})


def abilities(rt, user, project_id) -> frozenset:
    """What USER may do on the project, by the policy's ORM path and by the loader's row (they agree)."""
    with rt.db.session() as session:
        row_user = session.get(User, user.id)
        by_orm = access_service.access(session, row_user, session.get(Project, project_id)).abilities
        found = now(loader.project(SessionReader(session), str(project_id), row_user))
    assert found.access.abilities == by_orm
    return by_orm


def test_share_through_the_client_gives_the_group_its_level(gl, api4, rt, world):
    w = world
    gl(w["alice"]).projects.get(w["project"].id).share(w["crew"].id, DEVELOPER)
    body = api4.as_(w["bob"]).get(f"/projects/{w['project'].id}")
    assert body.status_code == 200 and body.json()["permissions"] == {"project_access": None, "group_access": None}
    assert body.json()["shared_with_groups"] == [{"group_id": w["crew"].id, "group_name": "Crew", "group_full_path": "crew",
                                                  "group_access_level": DEVELOPER, "expires_at": None}]  # fmt: skip
    bob, gus = abilities(rt, w["bob"], w["project"].id), abilities(rt, w["gus"], w["project"].id)
    assert PUSH_CODE in bob and ADMIN_PROJECT not in bob  # master of the group, developer here (the link's level)
    assert READ_PROJECT in gus and PUSH_CODE not in gus  # guest of the group: guest here
    assert abilities(rt, w["dave"], w["project"].id) == frozenset()
    assert api4.as_(w["bob"]).get(f"/projects/{w['project'].id}/hooks").status_code == 403
    assert api4.as_(w["dave"]).get(f"/projects/{w['project'].id}").status_code == 404


def test_lists_include_shared_projects(api4, rt, world):
    w = world
    assert share(api4, w["alice"], w["project"], w["crew"], REPORTER).status_code == 201
    pid = w["project"].id
    assert pid in [p["id"] for p in api4.as_(w["gus"]).get("/projects").json()]
    assert pid not in [p["id"] for p in api4.as_(w["dave"]).get("/projects").json()]
    assert [p["id"] for p in api4.as_(w["gus"]).get("/projects", params={"membership": "true"}).json()] == [pid]
    assert [p["id"] for p in api4.as_(w["bob"]).get("/projects", params={"min_access_level": REPORTER}).json()] == [pid]
    assert api4.as_(w["bob"]).get("/projects", params={"min_access_level": DEVELOPER}).json() == []
    assert [p["id"] for p in api4.as_(w["gus"]).get(f"/users/{w['alice'].id}/projects").json()] == [pid]
    for who in ("alice", "bob", "gus", "dave", "carol"):
        with rt.db.session() as session:
            user = session.get(User, w[who].id)
            listed = {row.id for row in project_reads.page(rt.db, project_reads.Query(project_reads.VISIBLE, user, Filters()), 0, 100)[1]}
            readable = access_service.access(session, user, session.get(Project, pid)).can(READ_PROJECT)
        assert (pid in listed) == readable, who


def test_a_master_reaches_master_through_a_master_link(api4, rt, world):
    w = world
    assert share(api4, w["alice"], w["project"], w["crew"], MASTER).status_code == 201
    assert api4.as_(w["bob"]).get(f"/projects/{w['project'].id}/hooks").status_code == 200
    assert api4.as_(w["gus"]).get(f"/projects/{w['project'].id}/hooks").status_code == 403


def test_unshare_and_expiry_take_it_away(api4, rt, world):
    w = world
    url = f"/projects/{w['project'].id}"
    tomorrow = (dt.date.today() + dt.timedelta(days=2)).isoformat()
    response = share(api4, w["alice"], w["project"], w["crew"], DEVELOPER, expires_at=tomorrow)
    assert response.status_code == 201 and response.json()["expires_at"] == tomorrow
    assert api4.as_(w["bob"]).get(url).status_code == 200
    with rt.db.transaction() as session:
        session.execute(update(ProjectGroupLink).values(expires_at=dt.date.today()))
    assert api4.as_(w["bob"]).get(url).status_code == 404
    assert w["project"].id not in [p["id"] for p in api4.as_(w["bob"]).get("/projects").json()]
    with rt.db.transaction() as session:
        session.execute(update(ProjectGroupLink).values(expires_at=None))
    assert api4.as_(w["bob"]).get(url).status_code == 200
    assert api4.as_(w["alice"]).delete(f"{url}/share/{w['crew'].id}").status_code == 204
    assert api4.as_(w["bob"]).get(url).status_code == 404
    assert api4.as_(w["alice"]).delete(f"{url}/share/{w['crew'].id}").status_code == 404


def test_who_may_share_and_with_whom(api4, world, users, projects):
    w = world
    projects.add_member(w["project"], w["dave"], DEVELOPER)
    assert share(api4, w["dave"], w["project"], w["crew"], GUEST).status_code == 403
    maintainer = users.create("maint")
    projects.add_member(w["project"], maintainer, MASTER)
    hidden = projects.group(w["carol"], "hidden")
    assert share(api4, maintainer, w["project"], hidden, GUEST).status_code == 404  # a private group they cannot see
    assert share(api4, w["alice"], w["project"], hidden, GUEST).status_code == 404  # nor may alice
    external = users.create("ext", external=True)
    projects.add_member(w["project"], external, MASTER)
    assert share(api4, external, w["project"], w["crew"], GUEST).status_code == 404  # internal: not for external users
    open_group = projects.group(w["carol"], "open", visibility=PUBLIC)
    assert share(api4, maintainer, w["project"], open_group, OWNER).status_code == 400  # above their own level
    assert share(api4, maintainer, w["project"], open_group, MASTER).status_code == 201
    assert share(api4, maintainer, w["project"], open_group, MASTER).status_code == 409
    grouped = projects.create(w["carol"], group=open_group, name="inside")
    assert share(api4, w["carol"], grouped, open_group, GUEST).status_code == 400  # its own group
    assert api4.as_(w["dave"]).delete(f"/projects/{w['project'].id}/share/{open_group.id}").status_code == 403


@pytest.mark.parametrize(
    "body",
    [
        {}, {"group_id": 1}, {"group_access": 30}, {"group_id": "x", "group_access": 30}, {"group_id": 1, "group_access": 35},
        {"group_id": 2**40, "group_access": 30}, {"group_id": 1, "group_access": 30, "expires_at": "soon"},
        {"group_id": 1, "group_access": 30, "expires_at": "2000-01-01"},
    ],
)
def test_bad_share_input_changes_nothing(api4, rt, world, body):
    response = api4.as_(world["alice"]).post(f"/projects/{world['project'].id}/share", json=body)
    assert response.status_code in (400, 404), response.text
    with rt.db.session() as session:
        assert session.query(ProjectGroupLink).count() == 0
