"""Refs named by callers must exist: a merge request's target branch (create and update) and an
external commit status's ref are refused with 400 when they are not a valid, existing branch (or,
for a status, tag); nothing is stored. The status's commit must exist too (404)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from codeyard.db.models import MergeRequest
from codeyard.git import storage

from ..support import WorkingCopy, make_team
from .state import Unchanged

BAD_TARGETS = ("nope", "-x", "a..b", "refs/heads/master", "master.lock", "HEAD")


@pytest.fixture
def scene(users, projects, admin, rt, tmp_path):
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first")
    work.git("checkout", "-q", "-b", "feature")
    head = work.commit("feature work", {"a.txt": "a\n"})
    work.push("master", "feature")
    work.git("tag", "v1", "master")
    work.push("v1")
    bare = storage.repository_path(rt.config.repositories_dir, team.project.id)
    return team, bare, head


@pytest.mark.parametrize("target", BAD_TARGETS)
def test_a_request_into_a_branch_that_does_not_exist_is_refused(api, rt, scene, target):
    team, bare, _head = scene
    state = Unchanged(rt, bare)
    body = {"source_branch": "feature", "target_branch": target, "title": "Into nowhere"}
    created = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/merge_requests", json=body)
    assert created.status_code == 400, created.text
    assert "target_branch" in created.text
    state.check()


@pytest.mark.parametrize("target", BAD_TARGETS)
def test_a_request_cannot_be_retargeted_to_a_branch_that_does_not_exist(api, rt, scene, target):
    team, bare, _head = scene
    body = {"source_branch": "feature", "target_branch": "master", "title": "Fine"}
    mr = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/merge_requests", json=body).json()
    state = Unchanged(rt, bare)
    changed = api.as_(team.user("developer")).put(f"/projects/{team.project.id}/merge_requests/{mr['id']}",
                                                  json={"target_branch": target, "title": "Changed"})  # fmt: skip
    assert changed.status_code == 400, changed.text
    assert "target_branch" in changed.text
    state.check()
    with rt.db.transaction(write=False) as session:
        found = session.scalars(select(MergeRequest)).one()
        assert (found.target_branch, found.title) == ("master", "Fine")


@pytest.mark.parametrize("ref", ("nope", "v2", "feature/none"))
def test_an_external_status_on_a_ref_that_does_not_exist_is_refused(api, rt, scene, ref):
    team, bare, head = scene
    state = Unchanged(rt, bare)
    posted = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/statuses/{head}",
                                                  json={"state": "success", "ref": ref})  # fmt: skip
    assert posted.status_code == 400, posted.text
    assert posted.json() == {"message": {"ref": ["does not exist"]}}
    state.check()


def test_an_external_status_of_a_commit_that_does_not_exist_is_refused(api, rt, scene):
    team, bare, _head = scene
    state = Unchanged(rt, bare)
    posted = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/statuses/{'b' * 40}",
                                                  json={"state": "success", "ref": "master"})  # fmt: skip
    assert posted.status_code == 404
    state.check()


@pytest.mark.parametrize("ref", ("feature", "master", "v1"))
def test_existing_refs_are_taken(api, rt, scene, ref):
    team, _bare, head = scene
    posted = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/statuses/{head}",
                                                  json={"state": "success", "ref": ref})  # fmt: skip
    assert posted.status_code == 201, posted.text
    assert posted.json()["ref"] == ref
