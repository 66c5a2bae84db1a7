"""Merge when build succeeds: the accept waits for the source head's builds; a successful pipeline
merges through a background job (the accept path and its checks); a failed one leaves it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import delete, select

from codeyard.db.models import Build, MergeRequest, Pipeline, Project, ProtectedBranch, User
from codeyard.jobs.worker import Worker
from codeyard.services import pushes
from codeyard.services.ci import builds

from ..support import WorkingCopy, make_team

CI = "rspec:\n  script: rspec\nlint:\n  script: lint\n"


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first", {"shared.txt": "one\n"})
    push(rt, team, work, "master", "0" * 40)
    with rt.db.transaction() as session:  # the first push protected master; developers merge here
        session.execute(delete(ProtectedBranch).where(ProtectedBranch.project_id == team.project.id))
    work.git("checkout", "-q", "-b", "feature")
    head = work.commit("feature work with ci", {"a.txt": "a\n", ".gitlab-ci.yml": CI})
    push(rt, team, work, "feature", "0" * 40)
    return SimpleNamespace(project=team.project, user=team.user, work=work, head=head)


def push(rt, team, work, branch, before):
    work.push(branch)
    with rt.db.transaction() as session:
        project, user = session.get(Project, team.project.id), session.get(User, team.user("developer").id)
        update = pushes.RefUpdate(f"refs/heads/{branch}", before, work.git("rev-parse", branch))
        pushes.post_push(session, rt, project, user, [update])


def open_request(api, team):
    body = {"source_branch": "feature", "target_branch": "master", "title": "Add a"}
    created = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/merge_requests", json=body)
    assert created.status_code == 200, created.text
    return created.json()


def accept(api, team, mr, who="developer", **fields):
    url = f"/projects/{team.project.id}/merge_requests/{mr['id']}/merge"
    return api.as_(team.user(who)).put(url, json={"merged_when_build_succeeds": True, **fields})


def finish_all(rt, team, sha, state):
    with rt.db.transaction() as session:
        pending = session.scalars(select(Build).where(Build.project_id == team.project.id, Build.sha == sha,
                                                      Build.status == "pending")).all()  # fmt: skip
        for build in pending:
            builds.finish(session, rt, build, state)


def request_state(rt, mr_id):
    with rt.db.transaction(write=False) as session:
        mr = session.get(MergeRequest, mr_id)
        return mr.state, mr.merge_when_build_succeeds, mr.merge_commit_sha


def test_waits_for_the_builds_then_merges_in_the_background(rt, api, team):
    mr = open_request(api, team)
    waiting = accept(api, team, mr, should_remove_source_branch=True, merge_commit_message="Merged by CI")
    assert waiting.status_code == 200
    assert waiting.json()["state"] == "opened" and waiting.json()["merge_when_build_succeeds"] is True
    assert Worker(rt, backoff=0).run_until_idle() == 0
    finish_all(rt, team, team.head, "success")
    assert Worker(rt, backoff=0).run_until_idle() == 1
    state, flagged, merge_sha = request_state(rt, mr["id"])
    assert (state, flagged) == ("merged", False)
    team.work.git("fetch", "-q", "origin")
    assert team.work.git("rev-parse", "origin/master") == merge_sha
    assert team.work.git("log", "-1", "--format=%B", merge_sha) == "Merged by CI"
    assert team.work.git("log", "-1", "--format=%an", merge_sha) == team.user("developer").name
    assert team.work.git("ls-remote", "origin", "refs/heads/feature") == ""  # removed as asked
    # The merge commit on master got its own pipeline, as any push does.
    with rt.db.transaction(write=False) as session:
        refs = set(session.scalars(select(Pipeline.ref).where(Pipeline.project_id == team.project.id)))
    assert refs == {"feature", "master"}


def test_a_failed_build_leaves_the_request_waiting(rt, api, team):
    mr = open_request(api, team)
    assert accept(api, team, mr).json()["merge_when_build_succeeds"] is True
    finish_all(rt, team, team.head, "failed")
    assert Worker(rt, backoff=0).run_until_idle() == 0
    assert request_state(rt, mr["id"])[:2] == ("opened", True)
    cancel = f"/projects/{team.project.id}/merge_requests/{mr['id']}/cancel_merge_when_build_succeeds"
    canceled = api.as_(team.user("developer")).put(cancel)
    assert canceled.status_code == 200 and canceled.json()["merge_when_build_succeeds"] is False


def test_a_newer_head_is_waited_for(rt, api, team):
    mr = open_request(api, team)
    accept(api, team, mr)
    old_head = team.head
    newer = team.work.commit("more work", {"b.txt": "b\n"})
    push(rt, team, team.work, "feature", old_head)
    finish_all(rt, team, old_head, "success")
    Worker(rt, backoff=0).run_until_idle()
    assert request_state(rt, mr["id"])[:2] == ("opened", True)
    finish_all(rt, team, newer, "success")
    Worker(rt, backoff=0).run_until_idle()
    assert request_state(rt, mr["id"])[0] == "merged"


def test_the_merge_job_rechecks_the_rights_of_the_user_who_asked(rt, api, team):
    mr = open_request(api, team)
    accept(api, team, mr)
    with rt.db.transaction() as session:
        session.add(ProtectedBranch(project_id=team.project.id, name="master", developers_can_push=False))
    finish_all(rt, team, team.head, "success")
    Worker(rt, backoff=0).run_until_idle()
    assert request_state(rt, mr["id"])[:2] == ("opened", True)


def test_without_unfinished_builds_it_merges_at_once(rt, api, team):
    finish_all(rt, team, team.head, "success")
    mr = open_request(api, team)
    merged = accept(api, team, mr)
    assert merged.status_code == 200 and merged.json()["state"] == "merged"


def test_the_usual_checks_come_first(rt, api, team):
    mr = open_request(api, team)
    assert accept(api, team, mr, who="reporter").status_code == 401
    assert accept(api, team, mr, sha="0" * 40).status_code == 409
    assert request_state(rt, mr["id"])[:2] == ("opened", False)


def test_an_external_status_is_waited_for(rt, api, team):
    """An external status (POST /statuses/:sha) counts in the commit status, as in 8.6: the request
    merges once it succeeds too."""
    mr = open_request(api, team)
    assert accept(api, team, mr).json()["merge_when_build_succeeds"] is True
    url = f"/projects/{team.project.id}/statuses/{team.head}"
    developer = api.as_(team.user("developer"))
    assert developer.post(url, json={"state": "running", "context": "ext", "ref": "feature"}).status_code == 201
    finish_all(rt, team, team.head, "success")  # the pending builds; the external status runs on
    assert Worker(rt, backoff=0).run_until_idle() == 0
    assert request_state(rt, mr["id"])[:2] == ("opened", True)
    assert developer.post(url, json={"state": "success", "context": "ext", "ref": "feature"}).status_code == 201
    assert Worker(rt, backoff=0).run_until_idle() == 1
    assert request_state(rt, mr["id"])[0] == "merged"
