"""Merge requests in v4: merging (sha, should_remove_source_branch, the statuses of each refusal),
merge when pipeline succeeds, rebase, and the request's changes, diffs, commits, pipelines and
participants."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from codeyard.db.models import Note, Project, ProtectedBranch, User
from codeyard.jobs.worker import Worker
from codeyard.services import pushes

from ..support import WorkingCopy, make_team

CI = "rspec:\n  script: rspec\n"


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    """A private project: master (a.txt "one"), feature (b.txt, then c.txt), conflict (a.txt
    "two" where master says "three"); one user per role."""
    made = make_team(users, projects, admin)
    work = WorkingCopy(rt, made.project, tmp_path / "work")
    work.commit("first", {"a.txt": "one\n"})
    work.git("checkout", "-q", "-b", "conflict")
    work.commit("two", {"a.txt": "two\n"})
    work.git("checkout", "-q", "-b", "feature", "master")
    work.commit("add b", {"b.txt": "b\n"})
    head = work.commit("add c", {"c.txt": "c\n"})
    work.git("checkout", "-q", "master")
    work.commit("three", {"a.txt": "three\n"})
    work.push("master", "feature", "conflict")
    return SimpleNamespace(project=made.project, user=made.user, work=work, head=head, rt=rt)


def _open(api4, team, source="feature", who="developer", **fields):
    body = {"source_branch": source, "target_branch": "master", "title": f"From {source}", **fields}
    created = api4.as_(team.user(who)).post(f"/projects/{team.project.id}/merge_requests", json=body)
    assert created.status_code == 201, created.text
    return created.json()


def _url(team, iid, suffix=""):
    return f"/projects/{team.project.id}/merge_requests/{iid}{suffix}"


def _push(rt, team, branch, before):
    """Push BRANCH of the working copy and record it as the transport does (pipelines, heads)."""
    team.work.push(branch)
    with rt.db.transaction() as session:
        project, user = session.get(Project, team.project.id), session.get(User, team.user("developer").id)
        update = pushes.RefUpdate(f"refs/heads/{branch}", before, team.work.git("rev-parse", branch))
        pushes.post_push(session, rt, project, user, [update])


def test_merge_through_the_client_with_sha_and_removal(gl, team):
    project = gl(team.user("master")).projects.get(team.project.id, lazy=True)
    mr = project.mergerequests.create({"source_branch": "feature", "target_branch": "master", "title": "Add b"})
    assert mr.detailed_merge_status == "mergeable" and mr.sha == team.head
    mr.merge(sha=mr.sha, should_remove_source_branch=True, merge_commit_message="Merge it")
    assert mr.state == "merged" and mr.detailed_merge_status == "not_open" and mr.merged_at is not None
    team.work.git("fetch", "-q", "--prune", "origin")
    assert team.work.git("rev-parse", "origin/master") == mr.merge_commit_sha
    assert team.work.git("log", "-1", "--format=%B", mr.merge_commit_sha) == "Merge it"
    assert team.work.git("ls-remote", "origin", "refs/heads/feature") == ""
    again = project.mergerequests.get(mr.iid)
    assert again.state == "merged" and again.sha == team.head and len(again.changes()["changes"]) == 2


def test_a_stale_sha_is_409_and_nothing_merges(api4, team):
    _open(api4, team)
    answer = api4.as_(team.user("master")).put(_url(team, 1, "/merge"), json={"sha": "0" * 40})
    assert answer.status_code == 409
    assert answer.json() == {"message": f"SHA does not match HEAD of source branch: {team.head}"}
    assert api4.as_(team.user("master")).get(_url(team, 1)).json()["state"] == "opened"


def test_remove_source_branch_asked_at_creation(api4, team):
    created = _open(api4, team, remove_source_branch=True)
    assert created["force_remove_source_branch"] is True
    merged = api4.as_(team.user("master")).put(_url(team, 1, "/merge"))
    assert merged.status_code == 200, merged.text
    assert team.work.git("ls-remote", "origin", "refs/heads/feature") == ""


@pytest.mark.parametrize(
    ("case", "status"),
    [("closed", 405), ("draft", 405), ("conflict", 405), ("merged", 405), ("reporter", 401), ("guest", 401),
     ("outsider", 404), ("protected", 401)],
)  # fmt: skip
def test_refusals_of_a_merge(api4, rt, team, case, status):
    """GitLab's statuses: 401 may not merge, 405 not open, draft or not mergeable."""
    mr = _open(api4, team, source="conflict" if case == "conflict" else "feature",
               title="Draft: x" if case == "draft" else "x")  # fmt: skip
    who = case if case in ("reporter", "guest", "outsider") else "developer"
    if case == "closed":
        api4.as_(team.user("master")).put(_url(team, 1), json={"state_event": "close"})
    if case == "merged":
        assert api4.as_(team.user("master")).put(_url(team, 1, "/merge")).status_code == 200
    if case == "protected":
        with rt.db.transaction() as session:
            session.add(ProtectedBranch(project_id=team.project.id, name="master"))
    if case == "conflict":
        assert mr["detailed_merge_status"] == "conflict" and mr["has_conflicts"] is True
    answer = api4.as_(team.user(who)).put(_url(team, 1, "/merge"))
    assert answer.status_code == status, answer.text
    if case != "merged":
        assert api4.as_(team.user("master")).get(_url(team, 1)).json()["state"] in ("opened", "closed")


def test_merge_when_pipeline_succeeds_and_its_cancel(api4, rt, team):
    team.work.git("checkout", "-q", "feature")
    before = team.work.git("rev-parse", "feature")
    team.work.commit("ci", {".gitlab-ci.yml": CI})
    _push(rt, team, "feature", before)
    _open(api4, team, remove_source_branch=True)
    waiting = api4.as_(team.user("master")).put(_url(team, 1, "/merge"), json={"merge_when_pipeline_succeeds": True})
    assert waiting.status_code == 200, waiting.text
    assert waiting.json()["state"] == "opened" and waiting.json()["merge_when_pipeline_succeeds"] is True
    assert waiting.json()["merge_user"]["username"] == "master" and waiting.json()["should_remove_source_branch"] is False
    cancelled = api4.as_(team.user("master")).post(_url(team, 1, "/cancel_merge_when_pipeline_succeeds"))
    assert cancelled.status_code == 201 and cancelled.json()["merge_when_pipeline_succeeds"] is False
    assert cancelled.json()["force_remove_source_branch"] is True  # asked at creation, kept
    assert cancelled.json()["merge_user"] is None
    again = api4.as_(team.user("master")).post(_url(team, 1, "/cancel_merge_when_pipeline_succeeds"))
    assert again.status_code == 406
    pipelines = api4.as_(team.user("developer")).get(_url(team, 1, "/pipelines"))
    assert pipelines.status_code == 200
    (pipeline,) = pipelines.json()
    assert (pipeline["ref"], pipeline["sha"], pipeline["status"]) == ("feature", team.work.git("rev-parse", "feature"), "pending")
    assert pipeline["web_url"].endswith(f"/pipelines/{pipeline['id']}")


def test_changes_diffs_commits_participants_pipelines_through_the_client(gl, api4, rt, team):
    client = gl(team.user("developer"))
    mr = client.projects.get(team.project.id, lazy=True).mergerequests.create(
        {"source_branch": "feature", "target_branch": "master", "title": "Add b", "assignee_id": team.user("master").id}
    )
    changes = mr.changes()
    assert [change["new_path"] for change in changes["changes"]] == ["b.txt", "c.txt"]
    assert changes["changes_count"] == "2" and changes["changes"][0]["new_file"] is True
    assert set(changes["changes"][0]) == {"old_path", "new_path", "a_mode", "b_mode", "diff", "new_file", "renamed_file",
                                          "deleted_file", "generated_file", "too_large", "collapsed"}  # fmt: skip
    assert [commit.title for commit in mr.commits()] == ["add c", "add b"]
    diffs = api4.as_(team.user("developer")).get(_url(team, 1, "/diffs"), params={"per_page": 1})
    assert [each["new_path"] for each in diffs.json()] == ["b.txt"] and diffs.headers["x-total"] == "2"
    with rt.db.transaction() as session:
        session.add(Note(project_id=team.project.id, merge_request_id=mr.id, author_id=team.user("guest").id, note="hm"))
        session.add(Note(project_id=team.project.id, merge_request_id=mr.id, author_id=team.user("owner").id, note="x",
                         system=True))  # fmt: skip
    participants = mr.participants()  # by id: the author, the assignee, commenters (not system notes)
    assert [user["id"] for user in participants] == sorted(user["id"] for user in participants)
    assert {user["username"] for user in participants} == {"developer", "guest", "master"}
    assert list(mr.pipelines.list()) == []  # nothing recorded a pipeline for these pushes


def test_code_reads_need_the_code(api4, team):
    _open(api4, team)
    # A guest of a private project reads the request, not its code (as in v3).
    assert api4.as_(team.user("guest")).get(_url(team, 1)).status_code == 200
    for suffix in ("/changes", "/diffs", "/commits"):
        assert api4.as_(team.user("guest")).get(_url(team, 1, suffix)).status_code == 403
        assert api4.as_(team.user("reporter")).get(_url(team, 1, suffix)).status_code == 200


def test_rebase_replays_the_source_branch(gl, api4, rt, team):
    project = gl(team.user("developer")).projects.get(team.project.id, lazy=True)
    mr = project.mergerequests.create({"source_branch": "feature", "target_branch": "master", "title": "Add b"})
    assert mr.diff_refs["start_sha"] != mr.diff_refs["base_sha"]  # master moved on
    assert mr.rebase() == {"rebase_in_progress": True}
    assert project.mergerequests.get(mr.iid, include_rebase_in_progress=True).rebase_in_progress is True
    assert api4.as_(team.user("developer")).put(_url(team, 1, "/rebase")).status_code == 409  # under way
    assert Worker(rt, backoff=0).run_until_idle() >= 1
    team.work.git("fetch", "-q", "origin")
    master, feature = team.work.git("rev-parse", "origin/master"), team.work.git("rev-parse", "origin/feature")
    assert team.work.git("rev-list", "--parents", "-n", "1", f"{feature}~1").split()[1] == master
    assert team.work.git("log", "--format=%s", f"{master}..{feature}").splitlines() == ["add c", "add b"]
    Worker(rt, backoff=0).run_until_idle()
    got = project.mergerequests.get(mr.iid, include_rebase_in_progress=True)
    assert got.rebase_in_progress is False and got.merge_error is None
    assert got.sha == feature and got.diff_refs["base_sha"] == master == got.diff_refs["start_sha"]


def test_a_rebase_with_conflicts_says_why(api4, rt, team):
    _open(api4, team, source="conflict")
    assert api4.as_(team.user("developer")).put(_url(team, 1, "/rebase")).status_code == 202
    before = team.work.git("ls-remote", "origin", "refs/heads/conflict")
    Worker(rt, backoff=0).run_until_idle()
    got = api4.as_(team.user("developer")).get(_url(team, 1), params={"include_rebase_in_progress": True}).json()
    assert got["rebase_in_progress"] is False and got["merge_error"].startswith("Rebase failed")
    assert team.work.git("ls-remote", "origin", "refs/heads/conflict") == before


@pytest.mark.parametrize(("who", "status"), [("reporter", 403), ("guest", 403), ("outsider", 404), ("developer", 202),
                                              ("master", 202), ("admin", 202)])  # fmt: skip
def test_who_may_rebase(api4, team, who, status):
    _open(api4, team)
    assert api4.as_(team.user(who)).put(_url(team, 1, "/rebase")).status_code == status


def test_a_protected_source_branch_is_not_rebased(api4, rt, team):
    _open(api4, team)
    with rt.db.transaction() as session:
        session.add(ProtectedBranch(project_id=team.project.id, name="feature", developers_can_push=True))
    assert api4.as_(team.user("master")).put(_url(team, 1, "/rebase")).status_code == 403
    api4.as_(team.user("master")).put(_url(team, 1), json={"state_event": "close"})
    assert api4.as_(team.user("master")).put(_url(team, 1, "/rebase")).status_code == 405


@pytest.mark.parametrize(("who", "developers_can_push", "status"),
                         [("developer", False, 401), ("developer", True, 200), ("master", False, 200), ("owner", False, 200)])  # fmt: skip
def test_a_protected_target_is_merged_by_who_may_push_to_it(api4, rt, team, who, developers_can_push, status):
    _open(api4, team)
    with rt.db.transaction() as session:
        session.add(ProtectedBranch(project_id=team.project.id, name="master", developers_can_push=developers_can_push))
    assert api4.as_(team.user(who)).get(_url(team, 1)).json()["user"] == {"can_merge": status == 200}
    assert api4.as_(team.user(who)).put(_url(team, 1, "/merge")).status_code == status


def test_a_fork_request_is_created_rebased_and_merged(api, api4, rt, team, tmp_path):
    dev = team.user("developer")
    made = api.as_(dev).post(f"/projects/fork/{team.project.id}")
    assert made.status_code == 201, made.text
    fork = SimpleNamespace(id=made.json()["id"])
    work = WorkingCopy(rt, fork, tmp_path / "fork")
    work.git("fetch", "-q", "origin", "master")
    work.git("checkout", "-q", "-b", "from-fork", "origin/master~1")  # behind upstream's master
    work.commit("fork work", {"f.txt": "f\n"})
    work.push("from-fork")
    body = {"source_branch": "from-fork", "target_branch": "master", "title": "From the fork", "target_project_id": team.project.id}
    created = api4.as_(dev).post(f"/projects/{fork.id}/merge_requests", json=body)
    assert created.status_code == 201, created.text
    mr = created.json()
    assert (mr["project_id"], mr["source_project_id"], mr["iid"]) == (team.project.id, fork.id, 1)
    assert api4.as_(dev).put(_url(team, 1, "/rebase")).status_code == 202
    Worker(rt, backoff=0).run_until_idle()
    work.git("fetch", "-q", "origin")
    upstream_master = team.work.git("rev-parse", "master")
    assert work.git("rev-parse", "origin/from-fork~1") == upstream_master
    assert work.git("ls-remote", "origin", "refs/codeyard/*") == ""  # the fetched tip is not kept in the fork
    Worker(rt, backoff=0).run_until_idle()
    got = api4.as_(dev).get(_url(team, 1), params={"include_rebase_in_progress": True}).json()
    assert got["rebase_in_progress"] is False and got["sha"] == work.git("rev-parse", "origin/from-fork")
    merged = api4.as_(team.user("master")).put(_url(team, 1, "/merge"), json={"sha": got["sha"]})
    assert merged.status_code == 200, merged.text
    assert merged.json()["state"] == "merged"
