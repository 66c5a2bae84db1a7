"""A merged or closed merge request keeps its commits and changes: what it showed when it stopped
being open, whatever became of its source branch (removed on merge, moved on, its fork deleted)
or of its target branch."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from codeyard.db.models import MergeRequest, Project, User
from codeyard.jobs.worker import Worker
from codeyard.services import pushes

from ..support import WorkingCopy, make_team


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    """A private project: master (one commit), feature (two more: a.txt, then b.txt)."""
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first", {"shared.txt": "one\n"})
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature work", {"a.txt": "a\n"})
    work.commit("more feature work", {"b.txt": "b\n"})
    work.push("master", "feature")
    return SimpleNamespace(project=team.project, user=team.user, work=work)


def _open(api, team, project=None, **fields):
    body = {"source_branch": "feature", "target_branch": "master", "title": "Add a and b", **fields}
    project = project or team.project
    created = api.as_(team.user("developer")).post(f"/projects/{project.id}/merge_requests", json=body)
    assert created.status_code == 200, created.text
    return created.json()


def _path(team, mr) -> str:
    return f"/projects/{team.project.id}/merge_request/{mr['id']}"


def _accept(api, team, mr, **fields):
    accepted = api.as_(team.user("developer")).put(_path(team, mr) + "/merge", json=fields)
    assert accepted.status_code == 200 and accepted.json()["state"] == "merged", accepted.text
    return accepted.json()


def _close(api, team, mr):
    closed = api.as_(team.user("developer")).put(_path(team, mr), json={"state_event": "close"})
    assert closed.status_code == 200 and closed.json()["state"] == "closed", closed.text


def _commits(api, team, mr, who="developer") -> list[str]:
    answer = api.as_(team.user(who)).get(_path(team, mr) + "/commits")
    assert answer.status_code == 200, answer.text
    return [commit["title"] for commit in answer.json()]


def _changed(api, team, mr, who="developer") -> list[str]:
    answer = api.as_(team.user(who)).get(_path(team, mr) + "/changes")
    assert answer.status_code == 200, answer.text
    return sorted(change["new_path"] for change in answer.json()["changes"])


SHOWN = (["more feature work", "feature work"], ["a.txt", "b.txt"])


def _push(rt, team, work, *refspecs):
    """Push REFSPECS (`local:branch`) straight to the bare repository, then the post-push steps and
    their jobs, as the transport runs them."""
    updates = []
    for refspec in refspecs:
        local, _, branch = refspec.partition(":")
        branch = branch or local
        before = work.git("ls-remote", "origin", f"refs/heads/{branch}").split()
        work.git("push", "-q", "-f", "origin", f"{local}:refs/heads/{branch}")
        after = work.git("ls-remote", "origin", f"refs/heads/{branch}").split()
        updates.append(pushes.RefUpdate(f"refs/heads/{branch}", before[0] if before else "0" * 40, after[0]))
    with rt.db.transaction() as session:
        project, user = session.get(Project, team.project.id), session.get(User, team.user("developer").id)
        pushes.post_push(session, rt, project, user, updates)
    Worker(rt, backoff=0).run_until_idle()


def test_merged_with_its_source_branch_removed(api, rt, team):
    mr = _open(api, team)
    assert (_commits(api, team, mr), _changed(api, team, mr)) == SHOWN
    _accept(api, team, mr, should_remove_source_branch=True)
    assert team.work.git("ls-remote", "origin", "refs/heads/feature") == ""
    assert (_commits(api, team, mr), _changed(api, team, mr)) == SHOWN
    changes = api.as_(team.user("developer")).get(_path(team, mr) + "/changes").json()
    assert changes["state"] == "merged" and "+b" in next(c["diff"] for c in changes["changes"] if c["new_path"] == "b.txt")
    with rt.db.transaction() as session:
        row = session.get(MergeRequest, mr["id"])
        master = team.work.git("rev-parse", "master")
        assert (row.diff_base_sha, row.diff_head_sha) == (master, team.work.git("rev-parse", "feature"))
    # The request's head ref keeps what it merged: the target rewritten and the repository collected.
    _push(rt, team, team.work, "master")
    subprocess.run(["git", "--git-dir", str(team.work.bare), "gc", "-q", "--prune=now"], check=True)
    assert (_commits(api, team, mr), _changed(api, team, mr)) == SHOWN


def test_merged_then_the_source_branch_moved_on(api, rt, team):
    mr = _open(api, team)
    _accept(api, team, mr)
    work = team.work
    work.git("checkout", "-q", "feature")
    work.commit("after the merge", {"c.txt": "c\n"})
    _push(rt, team, work, "feature")
    work.git("fetch", "-q", "origin")
    work.git("checkout", "-q", "-B", "master", "origin/master")
    work.commit("master moves on", {"d.txt": "d\n"})
    _push(rt, team, work, "master")
    assert (_commits(api, team, mr), _changed(api, team, mr)) == SHOWN
    # A new request from the same branch shows only what is new, and does not move the old one's head.
    newer = _open(api, team, title="More")
    assert _commits(api, team, newer) == ["after the merge"]
    assert (_commits(api, team, mr), _changed(api, team, mr)) == SHOWN


def test_merged_from_a_fork_that_was_deleted(api, rt, team, tmp_path):
    upstream, dev = team.project, team.user("developer")
    fork = SimpleNamespace(id=api.as_(dev).post(f"/projects/fork/{upstream.id}").json()["id"])
    work = WorkingCopy(rt, fork, tmp_path / "fork")
    work.git("fetch", "-q", "origin", "master:base")
    work.git("checkout", "-q", "base")
    work.commit("fork change", {"f.txt": "f\n"})
    work.push("HEAD:from-fork")
    mr = _open(api, team, project=fork, source_branch="from-fork", target_project_id=upstream.id)
    _accept(api, team, mr, should_remove_source_branch=True)
    assert work.git("ls-remote", "origin", "refs/heads/from-fork") == ""
    assert api.as_(dev).delete(f"/projects/{fork.id}").status_code == 200
    assert (_commits(api, team, mr), _changed(api, team, mr)) == (["fork change"], ["f.txt"])


def test_closed_by_its_fork_s_deletion(api, rt, team, tmp_path):
    upstream, dev = team.project, team.user("developer")
    fork = SimpleNamespace(id=api.as_(dev).post(f"/projects/fork/{upstream.id}").json()["id"])
    work = WorkingCopy(rt, fork, tmp_path / "fork")
    work.git("fetch", "-q", "origin", "master:base")
    work.git("checkout", "-q", "base")
    work.commit("fork change", {"f.txt": "f\n"})
    work.push("HEAD:from-fork")
    mr = _open(api, team, project=fork, source_branch="from-fork", target_project_id=upstream.id)
    assert api.as_(dev).delete(f"/projects/{fork.id}").status_code == 200
    assert api.as_(dev).get(_path(team, mr)).json()["state"] == "closed"
    team.work.git("fetch", "-q", "origin", "refs/merge-requests/1/head")  # the upstream's first request
    _push(rt, team, team.work, "FETCH_HEAD:master")  # someone merged its head by hand
    assert (_commits(api, team, mr), _changed(api, team, mr)) == (["fork change"], ["f.txt"])


def test_closed_then_its_source_branch_deleted_and_merged_elsewhere(api, rt, team):
    """The closed request keeps what it showed when it closed: its commits reaching the target
    another way (here a push of the same commits) or its branch going do not empty it."""
    mr = _open(api, team)
    _close(api, team, mr)
    deleted = api.as_(team.user("master")).delete(f"/projects/{team.project.id}/repository/branches/feature")
    assert deleted.status_code == 200, deleted.text
    _push(rt, team, team.work, "feature:master")
    assert (_commits(api, team, mr), _changed(api, team, mr)) == SHOWN


def test_reopened_shows_the_branch_again(api, rt, team):
    mr = _open(api, team)
    _close(api, team, mr)
    work = team.work
    work.git("checkout", "-q", "feature")
    work.commit("while closed", {"c.txt": "c\n"})
    _push(rt, team, work, "feature")
    assert (_commits(api, team, mr), _changed(api, team, mr)) == SHOWN
    reopened = api.as_(team.user("developer")).put(_path(team, mr), json={"state_event": "reopen"})
    assert reopened.json()["state"] == "reopened"
    assert _commits(api, team, mr) == ["while closed", *SHOWN[0]]
    assert _changed(api, team, mr) == ["a.txt", "b.txt", "c.txt"]
    with rt.db.transaction() as session:
        row = session.get(MergeRequest, mr["id"])
        assert (row.diff_base_sha, row.diff_head_sha) == (None, None)
    _close(api, team, mr)
    _push(rt, team, work, "feature:master")
    assert _commits(api, team, mr) == ["while closed", *SHOWN[0]]


def test_a_merged_request_recorded_before_its_comparison_was_kept(api, rt, team):
    """A request merged before the kept comparison existed (its shas null) is compared as before:
    its target branch to its head."""
    mr = _open(api, team)
    _accept(api, team, mr)
    with rt.db.transaction() as session:
        row = session.get(MergeRequest, mr["id"])
        row.diff_base_sha = row.diff_head_sha = None
    assert (_commits(api, team, mr), _changed(api, team, mr)) == ([], [])


@pytest.mark.parametrize("role, status", [("outsider", 404), ("guest", 403), ("reporter", 200), ("developer", 200)])
def test_a_merged_request_s_code_needs_download_code(api, team, role, status):
    mr = _open(api, team)
    _accept(api, team, mr, should_remove_source_branch=True)
    for part in ("commits", "changes"):
        answer = api.as_(team.user(role)).get(f"{_path(team, mr)}/{part}")
        assert answer.status_code == status, (part, answer.text)
    if status == 200:
        assert (_commits(api, team, mr, role), _changed(api, team, mr, role)) == SHOWN
