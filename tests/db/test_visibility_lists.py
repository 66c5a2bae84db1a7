"""Every list of projects that filters by visibility (`services.visibility.readable`) lists exactly
the projects `policies.projects.project_access` lets the caller read: every role × visibility × list.
(A blocked user reads nothing by the policy and reaches no list: signing in refuses them first.)"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from codeyard.db.models import OWNER, PRIVATE, PUBLIC, Project, Star, User
from codeyard.policies.projects import INTERNAL, READ_PROJECT
from codeyard.services import access as access_service
from codeyard.services import groups, project_reads, visibility
from codeyard.services.projects import Filters
from codeyard.web import home

from ..support import ROLE_LEVELS

LEVELS = (PRIVATE, INTERNAL, PUBLIC)


@pytest.fixture
def world(users, projects, admin, rt):
    """A public group and a personal namespace (its owner's) with a project of each visibility; a
    user per role, a member of all six; everybody has starred every project."""
    owner = users.create("carol")
    group = projects.group(owner, "open", visibility=PUBLIC)
    made = [projects.create(owner, group=group, visibility=level, name=f"g{level}") for level in LEVELS]
    made += [projects.create(owner, visibility=level, name=f"p{level}") for level in LEVELS]
    people = {"owner": owner, "admin": admin, "outsider": users.create("outsider"),
              "external": users.create("external", external=True), "group owner": users.create("gowner")}  # fmt: skip
    projects.add_group_member(group, people["group owner"], OWNER)
    for role, level in ROLE_LEVELS.items():
        people[role] = users.create(role)
        for project in made:
            projects.add_member(project, people[role], level)
    with rt.db.transaction() as session:
        session.add_all(Star(user_id=person.id, project_id=project.id) for person in people.values() for project in made)
    with rt.db.session() as session:
        rows = {role: session.get(User, person.id) for role, person in people.items()}
    return SimpleNamespace(group=group, owner=owner, rows={"anonymous": None, **rows}, ids={p.id for p in made})


def _readable(rt, user, ids) -> set[int]:
    """The projects of IDS that the policy lets USER (a row or None) read."""
    with rt.db.session() as session:
        return {pid for pid in ids if access_service.access(session, user, session.get(Project, pid)).can(READ_PROJECT)}


def _as_anybody(user):
    """USER as the name search sees an admin: like anybody else (GitLab's rule)."""
    if user is None:
        return None
    return SimpleNamespace(id=user.id, is_admin=False, external=user.external, state=user.state)


def _api(rt, scope: str, user, group_id=None) -> set[int]:
    query = project_reads.Query(scope, user, Filters(), group_id=group_id, name="" if scope == project_reads.SEARCH else None)
    return {row.id for row in project_reads.page(rt.db, query, 0, 100)[1]}


def _web(rt, scope: str, user, **params) -> set[int]:
    statement = home._list_statement(scope, visibility.viewer(user))
    return {row.id for row in rt.db.fast_all(statement, {**visibility.params(user), **params})}


def _lists(rt, world) -> dict:
    """{list: (rows of USER, whether anonymous callers reach it, the policy's view of USER)}."""
    gid = world.group.id
    same = lambda user: user  # noqa: E731
    return {
        "api /projects/search": (lambda user: _api(rt, project_reads.SEARCH, user), False, _as_anybody),
        "api /projects/starred": (lambda user: _api(rt, project_reads.STARRED, user), False, same),
        "api v4 /projects": (lambda user: _api(rt, project_reads.VISIBLE, user), True, same),
        "api group's projects (page)": (lambda user: _api(rt, project_reads.GROUP, user, gid), False, same),
        "api /groups/:id projects": (lambda user: {r.id for r in project_reads.group_rows(rt.db, user, gid)}, False, same),
        "web explore": (lambda user: _web(rt, home.VISIBLE, user), True, same),
        "web user page": (lambda user: _web(rt, home.PERSONAL, user, owner_id=world.owner.id), True, same),
        "web group page": (lambda user: _web(rt, home.GROUP, user, group_id=gid), True, same),
    }


def test_every_list_shows_what_the_policy_lets_read(rt, world):
    checked = 0
    for name, (listed, anonymous_too, seen_as) in _lists(rt, world).items():
        for role, user in world.rows.items():
            if user is None and not anonymous_too:
                continue
            shown = listed(user) & world.ids
            if name == "api /projects/starred":
                scope = world.ids  # every project is starred by everybody
            elif name in ("api group's projects (page)", "api /groups/:id projects", "web group page"):
                scope = {pid for pid in world.ids if _in_group(rt, pid, world.group.id)}
            elif name == "web user page":
                scope = world.ids - {pid for pid in world.ids if _in_group(rt, pid, world.group.id)}
            else:
                scope = world.ids
            expected = _readable(rt, seen_as(user), scope)
            assert shown == expected, (name, role)
            checked += 1
    assert checked == 8 * 9 + 4  # every list × every signed-in role, and v4's and the web's lists anonymously


def test_the_group_shows_when_a_project_of_it_is_readable(rt, world):
    for role, user in world.rows.items():
        if user is None or user.is_admin:
            continue
        params = {"group_id": world.group.id, **visibility.params(user)}
        sees = rt.db.fast_first(groups._SEES_A_PROJECT, params) is not None
        in_group = {pid for pid in world.ids if _in_group(rt, pid, world.group.id)}
        assert sees == bool(_readable(rt, user, in_group)), role


def _in_group(rt, project_id: int, group_id: int) -> bool:
    with rt.db.session() as session:
        return session.get(Project, project_id).namespace_id == group_id
