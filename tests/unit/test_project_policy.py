"""The project policy's shortcuts agree with the whole ability ladder."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from codeyard.policies import projects as policy

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
