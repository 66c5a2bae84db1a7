"""v4 protected branches: levels stored and shown, managed by maintainers, and enforced where refs
move: real `git push` over HTTP (level 0 refuses the owner, 30 takes a developer, 60 admins only;
force pushes per allow_force_push), merge request acceptance (merge level), and v3's answers
derived from the levels."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import select

from codeyard.db.models import Project, ProtectedBranch

from ..githttp.conftest import Git, repo_url, server_ref
from ..support import WorkingCopy, make_team


@pytest.fixture
def team(rt, users, projects, admin, tmp_path):
    """A private project with a team and master, feature pushed straight to its repository."""
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first", {"shared.txt": "one\n"})
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature work", {"a.txt": "a\n"})
    work.push("master", "feature")
    with rt.db.transaction() as session:
        session.get(Project, team.project.id).default_branch = "master"
    return SimpleNamespace(project=team.project, user=team.user, work=work,
                           base=f"/projects/{team.project.id}/protected_branches")  # fmt: skip


def protect(api4, team, who="master", **fields):
    response = api4.as_(team.user(who)).post(team.base, json=fields)
    assert response.status_code == 201, response.text
    return response.json()


def test_protect_through_the_client(gl, team):
    project = gl(team.user("master")).projects.get(team.project.id, lazy=True)
    created = project.protectedbranches.create({"name": "master", "push_access_level": 0, "merge_access_level": 40})
    assert created.name == "master" and created.allow_force_push is False
    assert created.code_owner_approval_required is False
    push, merge, unprotect = created.push_access_levels, created.merge_access_levels, created.unprotect_access_levels
    assert [(level["access_level"], level["access_level_description"]) for level in push] == [(0, "No one")]
    assert [(level["access_level"], level["access_level_description"]) for level in merge] == [(40, "Maintainers")]
    assert [level["access_level"] for level in unprotect] == [40]
    assert push[0]["user_id"] is None and push[0]["group_id"] is None
    assert [p.name for p in project.protectedbranches.list()] == ["master"]
    assert project.protectedbranches.get("master").push_access_levels[0]["access_level"] == 0
    project.protectedbranches.delete("master")
    assert project.protectedbranches.list() == []


def test_query_string_post_patch_and_statuses(api4, team):
    master = api4.as_(team.user("master"))
    # gitbeaker's ProtectedBranches.protect sends its parameters in the query string.
    created = master.post(f"{team.base}?name=feature&push_access_level=30&merge_access_level=40")
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["push_access_levels"][0]["access_level_description"], body["merge_access_levels"][0]["access_level"]) == (
        "Developers + Maintainers", 40)  # fmt: skip
    again = master.post(team.base, json={"name": "feature"})
    assert (again.status_code, again.json()) == (409, {"message": "Protected branch 'feature' already exists"})
    patched = master.request("PATCH", f"{team.base}/feature", json={"allow_force_push": True})
    assert patched.status_code == 200 and patched.json()["allow_force_push"] is True
    assert patched.json()["push_access_levels"][0]["access_level"] == 30  # unchanged
    assert master.get(f"{team.base}/nope").json() == {"message": "404 Protected branch Not Found"}
    assert master.request("PATCH", f"{team.base}/nope", json={"allow_force_push": True}).status_code == 404
    assert master.delete(f"{team.base}/nope").status_code == 404
    assert master.delete(f"{team.base}/feature").status_code == 204
    assert master.get(f"{team.base}/feature").status_code == 404
    # A name with slashes, encoded or not; the list is paged and searched.
    protect(api4, team, name="release/1.0")
    protect(api4, team, name="release/2.0")
    assert master.get(f"{team.base}/release%2F1.0").json()["name"] == "release/1.0"
    assert master.get(f"{team.base}/release/2.0").json()["name"] == "release/2.0"
    page = master.get(team.base, params={"per_page": 1, "search": "release"})
    assert [p["name"] for p in page.json()] == ["release/1.0"] and page.headers["x-total"] == "2"


@pytest.mark.parametrize("fields", [
    {"name": "release/**.lock"}, {"name": "-*"}, {"name": ".."}, {"name": "-x"}, {"name": "a\x01b"}, {"name": "a" * 300}, {"name": ""},
    {"name": "x", "push_access_level": 50}, {"name": "x", "merge_access_level": -1},
    {"name": "x", "push_access_level": "maintainer"}, {"name": "x", "unprotect_access_level": 0},
    {"name": "x", "allow_force_push": "perhaps"}, {"name": "x", "push_access_level": 10**30},
])  # fmt: skip
def test_bad_input_is_refused_and_nothing_is_protected(api4, team, fields):
    response = api4.as_(team.user("master")).post(team.base, json=fields)
    assert response.status_code == 400, (fields, response.text)
    assert api4.as_(team.user("master")).get(team.base).json() == []


@pytest.mark.parametrize("role, read, write", [("outsider", 404, 404), ("guest", 403, 403), ("reporter", 200, 403),
                                               ("developer", 200, 403), ("master", 200, 201), ("owner", 200, 201),
                                               ("admin", 200, 201)])  # fmt: skip
def test_who_reads_and_who_manages(api4, team, role, read, write):
    who = api4.as_(team.user(role))
    assert who.get(team.base).status_code == read
    assert who.post(team.base, json={"name": f"by-{role}"}).status_code == write
    protect(api4, team, name="kept")
    assert who.request("PATCH", f"{team.base}/kept", json={"allow_force_push": True}).status_code == (200 if write == 201 else write)
    assert who.delete(f"{team.base}/kept").status_code == (204 if write == 201 else write)


def test_unprotect_level_admins_leaves_it_to_admins(api4, team):
    protect(api4, team, name="master", unprotect_access_level=60)
    refused = api4.as_(team.user("owner")).delete(f"{team.base}/master")
    assert refused.status_code == 403
    assert api4.as_(team.user("admin")).delete(f"{team.base}/master").status_code == 204


def test_v3_answers_follow_the_levels(api, api4, team):
    v3 = f"/projects/{team.project.id}/repository/branches"
    protect(api4, team, name="master", push_access_level=30)
    assert api.as_(team.user("master")).get(f"{v3}/master").json()["developers_can_push"] is True
    api4.as_(team.user("master")).request("PATCH", f"{team.base}/master", json={"push_access_level": 0})
    branch = api.as_(team.user("master")).get(f"{v3}/master").json()
    assert (branch["protected"], branch["developers_can_push"]) == (True, False)
    # v3's protect with developers_can_push sets push and merge levels together.
    api.as_(team.user("master")).put(f"{v3}/feature/protect", json={"developers_can_push": True})
    levels = api4.as_(team.user("master")).get(f"{team.base}/feature").json()
    assert (levels["push_access_levels"][0]["access_level"], levels["merge_access_levels"][0]["access_level"]) == (30, 30)
    v4_branch = api4.as_(team.user("developer")).get(f"/projects/{team.project.id}/repository/branches/feature").json()
    assert (v4_branch["developers_can_push"], v4_branch["developers_can_merge"], v4_branch["can_push"]) == (True, True, True)


def test_v3_rows_become_levels(rt, team):
    """What migration 0019 does to v3's rows, the model does to a row written the v3 way."""
    with rt.db.transaction() as session:
        session.add(ProtectedBranch(project_id=team.project.id, name="master", developers_can_push=True))
        session.add(ProtectedBranch(project_id=team.project.id, name="feature", developers_can_push=False))
    with rt.db.session() as session:
        rows = {row.name: row for row in session.scalars(select(ProtectedBranch))}
        assert (rows["master"].push_access_level, rows["master"].merge_access_level) == (30, 30)
        assert (rows["feature"].push_access_level, rows["feature"].merge_access_level) == (40, 40)
        assert rows["master"].developers_can_push is True and rows["feature"].allow_force_push is False


def test_wildcards_as_python_gitlab_tests_them(gl, api4, team):
    """python-gitlab's functional test of protected branches, then what the wildcard covers."""
    project = gl(team.user("master")).projects.get(team.project.id, lazy=True)
    p_b = project.protectedbranches.create({"name": "*-stable", "allow_force_push": False})
    assert p_b.name == "*-stable" and not p_b.allow_force_push
    assert p_b in project.protectedbranches.list()
    p_b.allow_force_push = True
    p_b.save()
    p_b = project.protectedbranches.get("*-stable")
    assert p_b.allow_force_push
    branches = f"/projects/{team.project.id}/repository/branches"
    refused = api4.as_(team.user("developer")).post(branches, json={"branch": "1-stable", "ref": "master"})
    assert refused.status_code == 403
    created = api4.as_(team.user("master")).post(branches, json={"branch": "1-stable", "ref": "master"})
    assert created.status_code == 201 and created.json()["protected"] is True
    assert api4.as_(team.user("master")).get(f"{branches}/feature").json()["protected"] is False
    assert api4.as_(team.user("developer")).delete(f"{branches}/1-stable").status_code == 403
    p_b.delete()
    assert project.protectedbranches.list() == []


def test_the_most_permissive_covering_row_decides(api4, team):
    protect(api4, team, name="release/*", push_access_level=40, allow_force_push=True)
    protect(api4, team, name="release/1", push_access_level=30)
    branches = f"/projects/{team.project.id}/repository/branches"
    body = api4.as_(team.user("developer")).post(branches, json={"branch": "release/1", "ref": "master"}).json()
    assert (body["protected"], body["developers_can_push"], body["can_push"]) == (True, True, True)
    assert api4.as_(team.user("developer")).post(branches, json={"branch": "release/2", "ref": "master"}).status_code == 403


# --- enforced on real pushes over HTTP ------------------------------------------------------------


@pytest.fixture
def pushing(team, live, tmp_path):
    (tmp_path / "clients").mkdir()
    git = Git(tmp_path / "clients")
    git.clone(repo_url(live, team.project, team.user("owner")), "work")
    work = git.root / "work"
    git.run("checkout", "-q", "master", cwd=work)

    def push(who, *refspecs):
        return git.run("push", repo_url(live, team.project, team.user(who)), *refspecs, cwd=work, check=False)

    return SimpleNamespace(git=git, work=work, push=push)


def test_level_zero_refuses_even_the_owner_and_admins(api4, rt, team, pushing):
    protect(api4, team, name="master", push_access_level=0)
    before = server_ref(rt, team.project, "refs/heads/master")
    pushing.git.commit(pushing.work, "b.txt", "b\n", "more")
    for who in ("owner", "master", "admin", "developer"):
        refused = pushing.push(who, "master")
        assert refused.returncode != 0 and "not allowed to push code to protected branches" in refused.stderr, who
    assert server_ref(rt, team.project, "refs/heads/master") == before


def test_level_thirty_takes_a_developers_push_forty_does_not(api4, rt, team, pushing):
    protect(api4, team, name="master", push_access_level=40)
    sha = pushing.git.commit(pushing.work, "b.txt", "b\n", "more")
    assert pushing.push("developer", "master").returncode != 0
    api4.as_(team.user("master")).request("PATCH", f"{team.base}/master", json={"push_access_level": 30})
    accepted = pushing.push("developer", "master")
    assert accepted.returncode == 0, accepted.stderr
    assert server_ref(rt, team.project, "refs/heads/master") == sha
    assert pushing.push("reporter", "master").returncode != 0


def test_level_sixty_takes_admins_only(api4, rt, team, pushing):
    protect(api4, team, name="master", push_access_level=60)
    sha = pushing.git.commit(pushing.work, "b.txt", "b\n", "more")
    assert pushing.push("owner", "master").returncode != 0
    assert pushing.push("admin", "master").returncode == 0
    assert server_ref(rt, team.project, "refs/heads/master") == sha


def test_force_push_follows_allow_force_push(api4, rt, team, pushing):
    protect(api4, team, name="master", push_access_level=30)
    pushing.git.run("commit", "-q", "--amend", "-m", "rewritten", cwd=pushing.work)
    rewritten = pushing.git.run("rev-parse", "HEAD", cwd=pushing.work).stdout.strip()
    for who in ("developer", "owner"):
        refused = pushing.push(who, "+master")
        assert refused.returncode != 0 and "force push code to a protected branch" in refused.stderr
    api4.as_(team.user("master")).request("PATCH", f"{team.base}/master", json={"allow_force_push": True})
    accepted = pushing.push("developer", "+master")
    assert accepted.returncode == 0, accepted.stderr
    assert server_ref(rt, team.project, "refs/heads/master") == rewritten
    # Still nobody deletes it by a push, and those below the push level do not force-push either.
    deleted = pushing.push("owner", ":master")
    assert deleted.returncode != 0 and "delete protected branches" in deleted.stderr
    api4.as_(team.user("master")).request("PATCH", f"{team.base}/master", json={"push_access_level": 40})
    pushing.git.run("commit", "-q", "--amend", "-m", "again", cwd=pushing.work)
    assert pushing.push("developer", "+master").returncode != 0
    assert pushing.push("master", "+master").returncode == 0


def test_a_wildcard_protects_pushed_branches(api4, rt, team, pushing):
    protect(api4, team, name="release/*", push_access_level=40)
    refused = pushing.push("developer", "master:release/deep/1")
    assert refused.returncode != 0 and "protected branches" in refused.stderr
    assert server_ref(rt, team.project, "refs/heads/release/deep/1") is None
    assert pushing.push("developer", "master:releases").returncode == 0  # not covered
    assert pushing.push("master", "master:release/deep/1").returncode == 0
    pushing.git.run("commit", "-q", "--amend", "-m", "rewritten", cwd=pushing.work)
    forced = pushing.push("master", "+master:release/deep/1")
    assert forced.returncode != 0 and "force push" in forced.stderr
    deleted = pushing.push("master", ":release/deep/1")
    assert deleted.returncode != 0 and "delete protected branches" in deleted.stderr


def test_creating_a_protected_branch_by_push_needs_its_level(api4, rt, team, pushing):
    protect(api4, team, name="release", push_access_level=40)
    assert pushing.push("developer", "master:release").returncode != 0
    assert server_ref(rt, team.project, "refs/heads/release") is None
    assert pushing.push("master", "master:release").returncode == 0


# --- enforced on merge request acceptance (v3's accept: the one accept) ----------------------------


def accept(api, team, who):
    body = {"source_branch": "feature", "target_branch": "master", "title": "Add a"}
    mr = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/merge_requests", json=body).json()
    return api.as_(team.user(who)).put(f"/projects/{team.project.id}/merge_request/{mr['id']}/merge", json={})


def test_merge_level_thirty_lets_developers_merge_where_they_may_not_push(api, api4, team):
    protect(api4, team, name="master", push_access_level=40, merge_access_level=30)
    accepted = accept(api, team, "developer")
    assert accepted.status_code == 200 and accepted.json()["state"] == "merged", accepted.text


@pytest.mark.parametrize("level, who, merges", [(0, "owner", False), (0, "admin", False), (40, "developer", False),
                                                (40, "master", True), (60, "owner", False), (60, "admin", True)])  # fmt: skip
def test_merge_levels(api, api4, team, level, who, merges):
    protect(api4, team, name="master", push_access_level=30, merge_access_level=level)
    accepted = accept(api, team, who)
    assert (accepted.status_code == 200) is merges, accepted.text
