"""The project policy's shortcuts agree with the whole ability ladder."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from codeyard.policies import projects as policy
from codeyard.services import project_reads

LEVELS = (None, *policy.ACCESS_LEVELS)


def test_administers_is_project_access_admin_project():
    """Every standing a list can meet: who the caller is, whose namespace, their levels, the
    project's visibility, archiving and features."""
    users = [
        SimpleNamespace(id=1, is_admin=admin, external=external, state=state)
        for admin, external, state in itertools.product((False, True), (False, True), ("active", "blocked"))
    ]
    namespaces = [SimpleNamespace(kind=kind, owner_id=owner) for kind, owner in (("user", 1), ("user", 2), ("group", None))]
    features = list(itertools.product((False, True), repeat=len(policy.FEATURE_ABILITIES)))
    checked = granted = 0
    for user, namespace, project_level, group_level in itertools.product([None, *users], namespaces, LEVELS, LEVELS):
        for visibility, archived, enabled in itertools.product(policy.VISIBILITY_LEVELS, (False, True), features[::7]):
            project = SimpleNamespace(visibility_level=visibility, archived=archived, public_builds=True,
                                      **dict(zip(policy.FEATURE_ABILITIES, enabled, strict=True)))  # fmt: skip
            expected = policy.project_access(user, project, namespace, project_level, group_level).can(policy.ADMIN_PROJECT)
            assert policy.administers(user, namespace, project_level, group_level) == expected, (
                user, namespace, project_level, group_level, project
            )
            checked, granted = checked + 1, granted + expected
    assert granted and granted < checked  # both answers were met


def test_lists_ask_administers_once_per_standing():
    """`project_reads.administered` (what a list asks of each row) answers as `administers` for
    every standing, the rows in any order, and `administers_every` only for active admins."""
    users = [
        SimpleNamespace(id=1, is_admin=admin, external=False, state=state)
        for admin, state in itertools.product((False, True), ("active", "blocked"))
    ]
    rows = [
        SimpleNamespace(ns_kind=kind, ns_owner_id=owner, member_level=project_level, group_level=group_level, shared_level=shared)
        for (kind, owner), project_level, group_level, shared in itertools.product(
            (("user", 1), ("user", 2), ("group", None)), LEVELS, LEVELS, LEVELS
        )
    ]
    for user in [None, *users]:
        assert policy.administers_every(user) == (user is not None and user.is_admin and user.state == "active")
        expected = [project_reads.administers(user, row) for row in rows]
        for ordered in (rows, rows[::-1], rows + rows):
            administers = project_reads.administered(user)
            answers = [administers(row) for row in ordered]
            assert answers == [project_reads.administers(user, row) for row in ordered], user
        assert any(expected) == (user is not None and user.state == "active"), user


def test_lowest_open_level():
    assert policy.lowest_open_level(None) == policy.PUBLIC
    assert policy.lowest_open_level(SimpleNamespace(external=True)) == policy.PUBLIC
    assert policy.lowest_open_level(SimpleNamespace(external=False)) == policy.INTERNAL
