"""Review bypass through merge when build succeeds, and a fork's branch removed by its upstream.

A master sets the automatic merge of a reviewed head (PUT .../merge with merged_when_build_succeeds
and sha); a developer, or a fork's author, then pushes an unreviewed commit over git HTTP and its
pipeline passes. The protected target branch must not take that commit: a push to the source branch
by anyone but the user who set the automatic merge cancels it (with a system note), and a pinned sha
never merges anything else. Accepting a fork's request with should_remove_source_branch removes the
fork's branch only when the acceptor may delete it there."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import select, update

from codeyard.db.models import Build, MergeRequest, Note
from codeyard.git import storage
from codeyard.jobs.worker import Worker
from codeyard.services.ci import builds

from ..githttp.conftest import Git, repo_url, server_ref
from ..support import make_team
from .state import refs

CI = "rspec:\n  script: rspec\n"
CANCELED = "aborted the automatic merge because the source branch was updated"


@pytest.fixture
def git(tmp_path) -> Git:
    return Git(tmp_path)


def pass_builds(rt, project_id, sha) -> int:
    """The pending builds of SHA in PROJECT_ID succeed (what a runner reports); how many."""
    with rt.db.transaction() as session:
        pending = session.scalars(select(Build).where(Build.project_id == project_id, Build.sha == sha,
                                                      Build.status == "pending")).all()  # fmt: skip
        for build in pending:
            builds.finish(session, rt, build, "success")
        return len(pending)


def run_jobs(rt) -> None:
    Worker(rt, backoff=0).run_until_idle()


def request(rt, mr_id):
    with rt.db.transaction(write=False) as session:
        mr = session.get(MergeRequest, mr_id)
        notes = [(note.note, getattr(note, "system", None), note.author_id) for note in
                 session.scalars(select(Note).where(Note.merge_request_id == mr_id).order_by(Note.id))]  # fmt: skip
        return SimpleNamespace(state=mr.state, mwbs=mr.merge_when_build_succeeds, merge_user_id=mr.merge_user_id,
                               notes=notes)  # fmt: skip


@pytest.fixture
def scene(git, live, rt, api, users, projects, admin):
    """A private project whose master branch is protected (the default protection: developers do not
    push there); a developer's reviewed branch with a pipeline; the request, its automatic merge set
    by the master with the reviewed sha pinned while the builds run."""
    team = make_team(users, projects, admin)
    developer, master = team.user("developer"), team.user("master")
    work = git.new_work("work")
    git.commit(work, ".gitlab-ci.yml", CI, "ci")
    git.run("push", repo_url(live, team.project, master), "master", cwd=work)
    git.run("checkout", "-q", "-b", "feature", cwd=work)
    reviewed = git.commit(work, "feature.txt", "reviewed\n", "reviewed work")
    url = repo_url(live, team.project, developer)
    git.run("push", url, "feature", cwd=work)
    run_jobs(rt)
    body = {"source_branch": "feature", "target_branch": "master", "title": "Feature"}
    mr = api.as_(developer).post(f"/projects/{team.project.id}/merge_requests", json=body).json()
    accept = f"/projects/{team.project.id}/merge_requests/{mr['id']}/merge"
    waiting = api.as_(master).put(accept, json={"merged_when_build_succeeds": True, "sha": reviewed})
    assert waiting.status_code == 200 and waiting.json()["merge_when_build_succeeds"] is True, waiting.text
    bare = storage.repository_path(rt.config.repositories_dir, team.project.id)
    return SimpleNamespace(team=team, live=live, work=work, url=url, mr=mr, reviewed=reviewed, bare=bare,
                           master_tip=server_ref(rt, team.project, "refs/heads/master"))  # fmt: skip


def test_a_developer_push_after_approval_cancels_the_automatic_merge(git, rt, scene):
    project = scene.team.project
    unreviewed = git.commit(scene.work, "feature.txt", "unreviewed\n", "unreviewed work")
    git.run("push", scene.url, "feature", cwd=scene.work)
    run_jobs(rt)
    assert pass_builds(rt, project.id, unreviewed) == 1  # the new commit's pipeline passes
    run_jobs(rt)
    assert pass_builds(rt, project.id, scene.reviewed) == 1  # and the reviewed one's too
    run_jobs(rt)
    assert server_ref(rt, project, "refs/heads/master") == scene.master_tip  # nothing landed
    found = request(rt, scene.mr["id"])
    assert (found.state, found.mwbs, found.merge_user_id) == ("opened", False, None)
    assert found.notes == [(CANCELED, True, scene.team.user("developer").id)]


def test_the_pinned_sha_merges_when_nobody_else_pushed(rt, scene):
    project = scene.team.project
    assert pass_builds(rt, project.id, scene.reviewed) == 1
    run_jobs(rt)
    found = request(rt, scene.mr["id"])
    assert (found.state, found.mwbs) == ("merged", False)
    merged = server_ref(rt, project, "refs/heads/master")
    assert merged != scene.master_tip
    assert server_ref(rt, project, f"{merged}^2") == scene.reviewed


def test_a_pinned_sha_never_merges_another_head(git, rt, scene):
    """Even should the request still be waiting when another head's pipeline passes (the setter's
    own push, or any cancel missed), only the pinned sha may merge."""
    project = scene.team.project
    unreviewed = git.commit(scene.work, "feature.txt", "unreviewed\n", "unreviewed work")
    git.run("push", repo_url(scene.live, project, scene.team.user("master")), "feature", cwd=scene.work)
    run_jobs(rt)
    with rt.db.transaction() as session:  # waiting again, as though nothing had canceled it
        session.execute(update(MergeRequest).where(MergeRequest.id == scene.mr["id"])
                        .values(merge_when_build_succeeds=True, merge_user_id=scene.team.user("master").id,
                                merge_params={"sha": scene.reviewed}))  # fmt: skip
    before = refs(scene.bare)
    assert pass_builds(rt, project.id, unreviewed) == 1
    run_jobs(rt)
    assert server_ref(rt, project, "refs/heads/master") == scene.master_tip
    assert refs(scene.bare) == before
    assert request(rt, scene.mr["id"]).state == "opened"


def test_the_setter_s_own_push_cancels_a_pinned_merge(git, rt, scene):
    project, master = scene.team.project, scene.team.user("master")
    newer = git.commit(scene.work, "feature.txt", "master's fixup\n", "fixup")
    git.run("push", repo_url(scene.live, project, master), "feature", cwd=scene.work)
    run_jobs(rt)
    pass_builds(rt, project.id, newer)
    run_jobs(rt)
    assert server_ref(rt, project, "refs/heads/master") == scene.master_tip
    found = request(rt, scene.mr["id"])
    assert (found.state, found.mwbs) == ("opened", False)
    assert found.notes == [(CANCELED, True, master.id)]


def test_a_fork_push_after_approval_cancels_the_automatic_merge(git, live, rt, api, users, projects, admin):
    team = make_team(users, projects, admin)
    master, author = team.user("master"), users.create("forker")
    projects.add_member(team.project, author, 20)  # a reporter may fork
    work = git.new_work("work")
    git.commit(work, ".gitlab-ci.yml", CI, "ci")
    git.run("push", repo_url(live, team.project, master), "master", cwd=work)
    fork = api.as_(author).post(f"/projects/fork/{team.project.id}").json()
    fork_url = f"http://{author.username}:{author.token}@{live.base_url[7:]}/{fork['path_with_namespace']}.git"
    git.run("checkout", "-q", "-b", "from-fork", cwd=work)
    reviewed = git.commit(work, "fork.txt", "reviewed\n", "reviewed")
    git.run("push", fork_url, "from-fork", cwd=work)
    run_jobs(rt)
    body = {"source_branch": "from-fork", "target_branch": "master", "title": "From fork",
            "target_project_id": team.project.id}  # fmt: skip
    mr = api.as_(author).post(f"/projects/{fork['id']}/merge_requests", json=body).json()
    accept = f"/projects/{team.project.id}/merge_requests/{mr['id']}/merge"
    waiting = api.as_(master).put(accept, json={"merged_when_build_succeeds": True, "sha": reviewed})
    assert waiting.json()["merge_when_build_succeeds"] is True, waiting.text
    tip = server_ref(rt, team.project, "refs/heads/master")
    unreviewed = git.commit(work, "fork.txt", "unreviewed\n", "unreviewed")
    git.run("push", fork_url, "from-fork", cwd=work)
    run_jobs(rt)
    assert pass_builds(rt, fork["id"], unreviewed) == 1
    run_jobs(rt)
    assert server_ref(rt, team.project, "refs/heads/master") == tip
    found = request(rt, mr["id"])
    assert (found.state, found.mwbs) == ("opened", False)
    assert found.notes == [(CANCELED, True, author.id)]


# --- removing a fork's source branch --------------------------------------------------------------


def test_accepting_a_fork_request_keeps_a_branch_the_acceptor_may_not_delete(git, live, rt, api, users, projects, admin):
    team = make_team(users, projects, admin)
    master, author = team.user("master"), users.create("forker")
    projects.add_member(team.project, author, 20)
    work = git.new_work("work")
    git.commit(work, "README.md", "hello\n", "first")
    git.run("push", repo_url(live, team.project, master), "master", cwd=work)
    fork = api.as_(author).post(f"/projects/fork/{team.project.id}").json()
    fork_url = f"http://{author.username}:{author.token}@{live.base_url[7:]}/{fork['path_with_namespace']}.git"
    git.run("checkout", "-q", "-b", "from-fork", cwd=work)
    git.commit(work, "fork.txt", "fork\n", "fork work")
    git.run("push", fork_url, "from-fork", cwd=work)
    body = {"source_branch": "from-fork", "target_branch": "master", "title": "From fork",
            "target_project_id": team.project.id}  # fmt: skip
    mr = api.as_(author).post(f"/projects/{fork['id']}/merge_requests", json=body).json()
    fork_bare = storage.repository_path(rt.config.repositories_dir, fork["id"])
    before = refs(fork_bare)
    accept = f"/projects/{team.project.id}/merge_requests/{mr['id']}/merge"
    merged = api.as_(master).put(accept, json={"should_remove_source_branch": True})
    assert merged.status_code == 200 and merged.json()["state"] == "merged"
    assert refs(fork_bare) == before  # the fork's branch is still there
    found = request(rt, mr["id"])
    assert [(text.startswith("did not remove the source branch from-fork"), system) for text, system, _ in found.notes] == [
        (True, True)
    ]


def test_accepting_a_fork_request_removes_the_branch_when_the_acceptor_may(git, live, rt, api, users, projects, admin):
    """The fork's owner accepting upstream (a master there) may delete the fork's branch: removed."""
    team = make_team(users, projects, admin)
    master = team.user("master")
    work = git.new_work("work")
    git.commit(work, "README.md", "hello\n", "first")
    git.run("push", repo_url(live, team.project, master), "master", cwd=work)
    fork = api.as_(master).post(f"/projects/fork/{team.project.id}").json()
    fork_url = f"http://{master.username}:{master.token}@{live.base_url[7:]}/{fork['path_with_namespace']}.git"
    git.run("checkout", "-q", "-b", "from-fork", cwd=work)
    git.commit(work, "fork.txt", "fork\n", "fork work")
    git.run("push", fork_url, "from-fork", cwd=work)
    body = {"source_branch": "from-fork", "target_branch": "master", "title": "From fork",
            "target_project_id": team.project.id}  # fmt: skip
    mr = api.as_(master).post(f"/projects/{fork['id']}/merge_requests", json=body).json()
    accept = f"/projects/{team.project.id}/merge_requests/{mr['id']}/merge"
    merged = api.as_(master).put(accept, json={"should_remove_source_branch": True})
    assert merged.status_code == 200 and merged.json()["state"] == "merged"
    fork_bare = storage.repository_path(rt.config.repositories_dir, fork["id"])
    assert "refs/heads/from-fork" not in refs(fork_bare)
    assert request(rt, mr["id"]).notes == []
