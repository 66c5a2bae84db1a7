"""v4 commits: list (filters), one, create with several actions, diff, refs, cherry-pick, revert,
comments, statuses."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from codeyard.db.models import Event, Job, ProjectHook

from ..support import WorkingCopy, make_team

DEVELOPER, REPORTER = 30, 20


@pytest.fixture
def hosted(rt, projects, alice, tmp_path):
    """alice's project: master (first, second, third), feature (one more from second), a tag v1 on first."""
    project = projects.create(alice, name="demo")
    work = WorkingCopy(rt, project, tmp_path / "work")
    work.commit("first", {"a.txt": "one\n", "docs/readme.md": "r\n"})
    work.commit("second", {"a.txt": "one\ntwo\n"})
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature work", {"f.txt": "f\n"})
    work.git("checkout", "-q", "master")
    work.commit("third", {"docs/readme.md": "r\nmore\n"})
    work.git("tag", "v1", "master~2")
    work.push("master", "feature", "v1")
    with rt.db.transaction() as session:
        from codeyard.db.models import Project

        session.get(Project, project.id).default_branch = "master"
    return project, work


def sha(work, name):
    return work.git("rev-parse", name)


def test_list_and_filters(gl, api4, alice, hosted):
    project, work = hosted
    commits = gl(alice).projects.get(project.id, lazy=True).commits
    listed = commits.list(get_all=True)
    assert [c.title for c in listed] == ["third", "second", "first"]
    assert listed[0].id == sha(work, "master") and listed[0].short_id == sha(work, "master")[:8]
    assert listed[0].parent_ids == [sha(work, "master^")]
    assert listed[0].web_url.endswith(f"/alice/demo/commit/{sha(work, 'master')}")
    assert [c.title for c in commits.list(ref_name="feature", get_all=True)] == ["feature work", "second", "first"]
    assert [c.title for c in commits.list(query_parameters={"path": "docs"}, get_all=True)] == ["third", "first"]
    assert [c.title for c in commits.list(query_parameters={"all": True}, get_all=True)] == ["third", "feature work", "second", "first"]
    url = f"/projects/{project.id}/repository/commits"
    assert len(api4.as_(alice).get(url, params={"since": "2000-01-01T00:00:00Z", "until": "2100-01-01T00:00:00+00:00"}).json()) == 3
    assert api4.as_(alice).get(url, params={"since": "2100-01-01T00:00:00Z"}).json() == []
    assert api4.as_(alice).get(url, params={"until": "2000-01-01T00:00:00"}).json() == []
    assert api4.as_(alice).get(url, params={"author": "Nobody"}).json() == []
    assert len(api4.as_(alice).get(url, params={"author": "Ada"}).json()) == 3
    stats = api4.as_(alice).get(url, params={"with_stats": True, "per_page": 1}).json()
    assert stats[0]["stats"] == {"additions": 1, "deletions": 0, "total": 1}
    paged = api4.as_(alice).get(url, params={"per_page": 2, "page": 2})
    assert [c["title"] for c in paged.json()] == ["first"] and paged.headers["x-total"] == "3"
    assert api4.as_(alice).get(url, params={"since": "yesterday"}).status_code == 400
    assert api4.as_(alice).get(url, params={"ref_name": "--all"}).status_code == 404
    assert api4.as_(alice).get(url, params={"ref_name": "nope"}).status_code == 404


def test_one_commit_diff_refs(gl, alice, hosted):
    project, work = hosted
    commit = gl(alice).projects.get(project.id, lazy=True).commits.get(sha(work, "master"))
    assert commit.title == "third" and commit.stats == {"additions": 1, "deletions": 0, "total": 1}
    assert commit.status is None and commit.project_id == project.id
    diff = commit.diff(get_all=True)
    assert [d["new_path"] for d in diff] == ["docs/readme.md"] and "+more" in diff[0]["diff"]
    first = gl(alice).projects.get(project.id, lazy=True).commits.get("v1")
    refs = {(ref["type"], ref["name"]) for ref in first.refs(get_all=True)}
    assert refs == {("branch", "master"), ("branch", "feature"), ("tag", "v1")}
    assert first.refs(type="tag", get_all=True) == [{"type": "tag", "name": "v1"}]


def test_one_commit_missing(api4, alice, hosted):
    project, _work = hosted
    missing = api4.as_(alice).get(f"/projects/{project.id}/repository/commits/{'f' * 40}")
    assert missing.status_code == 404 and missing.json() == {"message": "404 Commit Not Found"}


def test_create_with_actions(gl, rt, alice, hosted):
    project, work = hosted
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://hooks.example.com/", push_events=True))
    made = gl(alice).projects.get(project.id, lazy=True).commits.create({
        "branch": "master", "commit_message": "several",
        "actions": [
            {"action": "create", "file_path": "new/n.txt", "content": "n\n"},
            {"action": "update", "file_path": "a.txt", "content": "ONE\n"},
            {"action": "move", "file_path": "docs/moved.md", "previous_path": "docs/readme.md"},
            {"action": "chmod", "file_path": "new/n.txt", "execute_filemode": True},
            {"action": "create", "file_path": "b64.bin", "content": "AAE=", "encoding": "base64"},
        ],
        "author_name": "Ann Author", "author_email": "ann@example.com",
    })  # fmt: skip
    assert made.title == "several" and made.author_name == "Ann Author" and made.committer_name == "User alice"
    assert made.stats["additions"] >= 2
    work.git("fetch", "-q", "origin")
    assert work.git("rev-parse", "origin/master") == made.id
    tree = work.git("ls-tree", "-r", "origin/master")
    assert "100755 blob" in next(line for line in tree.splitlines() if line.endswith("new/n.txt"))
    assert "docs/moved.md" in tree and "docs/readme.md" not in tree
    assert work.git("show", "origin/master:a.txt") == "ONE"
    with rt.db.transaction() as session:  # recorded as a push: an event and the hook's delivery
        assert session.scalar(select(func.count()).select_from(Event).where(Event.project_id == project.id)) >= 1
        assert session.scalar(select(func.count()).select_from(Job)) >= 1


def test_create_is_all_or_nothing(api4, alice, hosted):
    project, work = hosted
    before = work.git("ls-remote", "origin", "master")
    url = f"/projects/{project.id}/repository/commits"
    answer = api4.as_(alice).post(url, json={"branch": "master", "commit_message": "m", "actions": [
        {"action": "create", "file_path": "ok.txt", "content": "x"},
        {"action": "delete", "file_path": "missing.txt"},
    ]})  # fmt: skip
    assert answer.status_code == 400 and answer.json() == {"message": "A file with this name doesn't exist"}
    assert work.git("ls-remote", "origin", "master") == before
    for actions in ([], [{"action": "explode", "file_path": "x"}], [{"action": "create", "file_path": "../x"}],
                    [{"action": "move", "file_path": "x"}], "text", [{"action": "create", "file_path": ".git/config"}],
                    [{"action": "create", "file_path": "/abs"}], [{"action": "create", "file_path": "x", "encoding": "hex"}],
                    [{"action": "create", "file_path": "x", "content": "%%", "encoding": "base64"}],
                    [{"action": "chmod", "file_path": "a.txt"}], [{"action": "create", "file_path": "a.txt/x"}],
                    [{"action": "create", "file_path": "docs"}], [{"action": "create", "file_path": "a\x00b"}]):  # fmt: skip
        bad = api4.as_(alice).post(url, json={"branch": "master", "commit_message": "m", "actions": actions})
        assert bad.status_code == 400, (actions, bad.text)
    assert work.git("ls-remote", "origin", "master") == before


def test_create_new_branch_from_start_sha(api4, alice, hosted):
    project, work = hosted
    answer = api4.as_(alice).post(f"/projects/{project.id}/repository/commits", json={
        "branch": "from-first", "start_sha": sha(work, "v1"), "commit_message": "m",
        "actions": [{"action": "create", "file_path": "x.txt", "content": "x"}],
    })  # fmt: skip
    assert answer.status_code == 201 and answer.json()["parent_ids"] == [sha(work, "v1")]


def test_cherry_pick_and_revert(gl, api4, alice, hosted):
    project, work = hosted
    commits = gl(alice).projects.get(project.id, lazy=True).commits
    feature = commits.get(sha(work, "feature"))
    assert feature.cherry_pick(branch="master", dry_run=True) == {"dry_run": "success"}
    assert work.git("ls-remote", "origin", "refs/heads/master").split()[0] == sha(work, "master")  # nothing moved
    picked = feature.cherry_pick(branch="master")
    assert picked["parent_ids"] == [sha(work, "master")] and picked["author_name"] == "Ada Author"
    assert f"(cherry picked from commit {sha(work, 'feature')})" in picked["message"]
    again = api4.as_(alice).post(f"/projects/{project.id}/repository/commits/{sha(work, 'feature')}/cherry_pick",
                                 json={"branch": "master"})  # fmt: skip
    assert again.status_code == 400 and "cannot cherry-pick this commit automatically" in again.json()["message"]
    dry = api4.as_(alice).post(f"/projects/{project.id}/repository/commits/{sha(work, 'feature')}/cherry_pick",
                               json={"branch": "master", "dry_run": True})  # fmt: skip
    assert dry.status_code == 400
    third = commits.get(sha(work, "master"))
    reverted = third.revert(branch="master")
    assert reverted["title"] == 'Revert "third"' and reverted["parent_ids"] == [picked["id"]]
    work.git("fetch", "-q", "origin")
    assert work.git("show", "origin/master:docs/readme.md") == "r"
    assert work.git("show", "origin/master:f.txt") == "f"
    conflict = api4.as_(alice).post(f"/projects/{project.id}/repository/commits/{sha(work, 'master')}/revert",
                                    json={"branch": "feature"})  # fmt: skip
    assert conflict.status_code == 400
    missing = api4.as_(alice).post(f"/projects/{project.id}/repository/commits/{'a' * 40}/revert", json={"branch": "master"})
    assert missing.status_code == 404
    nobranch = api4.as_(alice).post(f"/projects/{project.id}/repository/commits/{sha(work, 'feature')}/cherry_pick",
                                    json={"branch": "--nope"})  # fmt: skip
    assert nobranch.status_code == 400


def test_comments(gl, api4, alice, hosted):
    project, work = hosted
    commit = gl(alice).projects.get(project.id, lazy=True).commits.get(sha(work, "master"))
    made = commit.comments.create({"note": "nice", "path": "docs/readme.md", "line": 2, "line_type": "new"})
    assert made.note == "nice" and made.line == 2 and made.author["username"] == "alice"
    listed = commit.comments.list(get_all=True)
    assert [(c.note, c.path, c.line, c.line_type) for c in listed] == [("nice", "docs/readme.md", 2, "new")]
    assert listed[0].author["locked"] is False


def test_statuses(gl, api4, users, projects, alice, hosted):
    project, work = hosted
    commit = gl(alice).projects.get(project.id, lazy=True).commits.get(sha(work, "master"))
    posted = commit.statuses.create({"state": "running", "name": "lint", "target_url": "https://ci.example.com/1"})
    assert posted.status == "running" and posted.name == "lint" and posted.ref == "master"
    assert posted.author["username"] == "alice" and posted.pipeline_id is not None
    listed = commit.statuses.list(get_all=True)
    assert [(s.name, s.status, s.coverage) for s in listed] == [("lint", "running", None)]
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/commits/{sha(work, 'master')}").json()["status"] == "running"
    reporter = users.create("rep")
    projects.add_member(project, reporter, REPORTER)
    refused = api4.as_(reporter).post(f"/projects/{project.id}/statuses/{sha(work, 'master')}", json={"state": "success"})
    assert refused.status_code == 403
    bad = api4.as_(alice).post(f"/projects/{project.id}/statuses/{sha(work, 'master')}", json={"state": "exploded"})
    assert bad.status_code == 400


def test_permissions(api4, users, projects, admin, tmp_path, rt):
    team = make_team(users, projects, admin, visibility=10)
    project = team.project
    made = api4.as_(team.user("owner")).post(f"/projects/{project.id}/repository/commits", json={
        "branch": "master", "commit_message": "init", "actions": [{"action": "create", "file_path": "a", "content": "a"}]})  # fmt: skip
    assert made.status_code == 201
    head = made.json()["id"]
    for role in ("outsider", "guest", "reporter"):
        assert api4.as_(team.user(role)).get(f"/projects/{project.id}/repository/commits/{head}").status_code == 200
        denied = api4.as_(team.user(role)).post(f"/projects/{project.id}/repository/commits", json={
            "branch": "x", "start_branch": "master", "commit_message": "m",
            "actions": [{"action": "create", "file_path": "b", "content": "b"}]})  # fmt: skip
        assert denied.status_code == 403, role
    dev = api4.as_(team.user("developer")).post(f"/projects/{project.id}/repository/commits", json={
        "branch": "x", "start_branch": "master", "commit_message": "m",
        "actions": [{"action": "create", "file_path": "b", "content": "b"}]})  # fmt: skip
    assert dev.status_code == 201
    protected = api4.as_(team.user("developer")).post(f"/projects/{project.id}/repository/commits/{dev.json()['id']}/cherry_pick",
                                                      json={"branch": "master"})  # fmt: skip
    assert protected.status_code == 403
    private = make_team(users, projects, admin, visibility=0, prefix="p")
    assert api4.as_(private.user("outsider")).get(f"/projects/{private.project.id}/repository/commits").status_code == 404


def test_action_rules(api4, alice, hosted):
    project, work = hosted
    url = f"/projects/{project.id}/repository/commits"

    def commit(*actions):
        return api4.as_(alice).post(url, json={"branch": "master", "commit_message": "m", "actions": list(actions)})

    onto = commit({"action": "move", "file_path": "a.txt", "previous_path": "docs/readme.md"})
    assert onto.status_code == 400 and onto.json() == {"message": "A file with this name already exists"}
    stale = commit({"action": "update", "file_path": "a.txt", "content": "x", "last_commit_id": sha(work, "master~2")})
    assert stale.status_code == 400 and "changed since you started editing" in stale.json()["message"]
    made = commit({"action": "create", "file_path": "s.sh", "content": "#!/bin/sh\n", "execute_filemode": True},
                  {"action": "move", "file_path": "t/s.sh", "previous_path": "s.sh", "content": "#!/bin/sh\nexit\n"},
                  {"action": "update", "file_path": "a.txt", "content": "x\n", "last_commit_id": sha(work, "master~1")})  # fmt: skip
    assert made.status_code == 201, made.text
    work.git("fetch", "-q", "origin")
    assert work.git("ls-tree", "origin/master", "t/s.sh").startswith("100755 blob")  # the move keeps the mode
    assert work.git("show", "origin/master:t/s.sh") == "#!/bin/sh\nexit"
    off = commit({"action": "chmod", "file_path": "t/s.sh", "execute_filemode": False})
    assert off.status_code == 201
    work.git("fetch", "-q", "origin")
    assert work.git("ls-tree", "origin/master", "t/s.sh").startswith("100644 blob")
