"""A real `git push` over smart HTTP reaches a project's hook: one push and one tag push delivery."""

from __future__ import annotations

import pytest

from codeyard.jobs.worker import Worker
from codeyard.services import settings as settings_service

from ..receiver import Receiver
from .conftest import repo_url

pytestmark = pytest.mark.both_backends


def test_git_push_and_tag_push_are_each_delivered_once(git, live, rt, users, projects, api):
    alice = users.create("alice")
    project = projects.create(alice, name="demo")
    with rt.db.transaction() as session:
        settings_service.update(session, {"allow_local_requests_from_hooks": True})
    with Receiver() as receiver:
        hook = {"url": receiver.url(credentials="ci:secret"), "tag_push_events": True}
        assert api.as_(alice).post(f"/projects/{project.id}/hooks", json=hook).status_code == 201
        work = git.new_work("work")
        sha = git.commit(work, "README.md", "hello\n", "first commit")
        git.run("tag", "v1.0", cwd=work)
        git.run("push", repo_url(live, project, alice), "master", "v1.0", cwd=work)
        assert Worker(rt, backoff=0).run_until_idle() == 2
    push, tag = sorted(receiver.requests, key=lambda got: got.json["object_kind"])
    assert len(receiver.requests) == 2
    assert push.headers["x-gitlab-event"] == "Push Hook" and tag.headers["x-gitlab-event"] == "Tag Push Hook"
    assert push.json["after"] == sha and push.json["ref"] == "refs/heads/master"
    assert [commit["id"] for commit in push.json["commits"]] == [sha] and push.json["user_name"] == alice.name
    assert tag.json["ref"] == "refs/tags/v1.0" and tag.json["checkout_sha"] == sha
    assert push.headers["authorization"] == "Basic Y2k6c2VjcmV0"
