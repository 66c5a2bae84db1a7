"""v4 branches: list (search, pages), one (names with slashes, encoded or not), create (query string
or body; protection applies to a branch yet to exist), delete (default 400, protected by maintainers
only), merged branches removed; every change recorded as a push."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sqlalchemy import select

from codeyard.db.models import Event, Project

from ..support import WorkingCopy, make_team


@pytest.fixture
def repo(rt, users, projects, admin, tmp_path):
    """A private project with a team: master (2 commits), feature/x (one more), merged (at master's
    parent: the default branch contains it); the default branch is master."""
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    first = work.commit("first")
    work.commit("second")
    work.git("checkout", "-q", "-b", "feature/x")
    work.commit("feature work")
    work.git("branch", "merged", first)
    work.push("master", "feature/x", "merged")
    with rt.db.transaction() as session:
        session.get(Project, team.project.id).default_branch = "master"
    return SimpleNamespace(team=team, project=team.project, work=work, user=team.user,
                           base=f"/projects/{team.project.id}/repository/branches")  # fmt: skip


def names(api4, repo, who="developer", **params) -> list[str]:
    response = api4.as_(repo.user(who)).get(repo.base, params=params)
    assert response.status_code == 200, response.text
    return [branch["name"] for branch in response.json()]


def test_list_through_the_client(gl, repo):
    project = gl(repo.user("developer")).projects.get(repo.project.id, lazy=True)
    found = {branch.name: branch for branch in project.branches.list(get_all=True)}
    assert list(found) == ["feature/x", "master", "merged"]
    master, feature, merged = found["master"], found["feature/x"], found["merged"]
    assert (master.default, master.merged, master.protected) == (True, False, False)
    assert (feature.default, feature.merged) == (False, False)
    assert merged.merged is True
    assert master.commit["id"] == repo.work.git("rev-parse", "master")
    assert master.commit["parent_ids"] == [repo.work.git("rev-parse", "master^")]
    assert master.commit["title"] == "second" and master.commit["short_id"] == master.commit["id"][:8]
    assert feature.can_push is True and feature.developers_can_push is False and feature.developers_can_merge is False
    assert feature.web_url.endswith(f"/{repo.project.path_with_namespace}/-/tree/feature/x")


def test_pages_and_search(api4, repo):
    page = api4.as_(repo.user("reporter")).get(repo.base, params={"per_page": 1, "page": 2, "search": "e"})
    assert [b["name"] for b in page.json()] == ["master"]
    assert (page.headers["x-total"], page.headers["x-total-pages"], page.headers["x-page"]) == ("3", "3", "2")
    assert "search=e" in page.headers["link"] and 'rel="next"' in page.headers["link"]
    assert names(api4, repo, search="FEAT") == ["feature/x"]
    assert names(api4, repo, search="^m") == ["master", "merged"]
    assert names(api4, repo, search="d$") == ["merged"]
    assert names(api4, repo, search="nothing") == []
    assert api4.as_(repo.user("developer")).get(repo.base, params={"search": "a\x01"}).status_code == 400


def test_get_with_slashes_encoded_or_not(api4, repo):
    for name in ("feature/x", "feature%2Fx"):
        body = api4.as_(repo.user("developer")).get(f"{repo.base}/{name}").json()
        assert body["name"] == "feature/x" and body["commit"]["id"] == repo.work.git("rev-parse", "feature/x")
    for missing in ("nope", "feature", "%2E%2E", "-x", "feature%2F%2E%2E%2Fx", "a" * 300, "a%01b"):
        response = api4.as_(repo.user("developer")).get(f"{repo.base}/{missing}")
        assert response.status_code == 404, missing
        assert response.json() == {"message": "404 Branch Not Found"}, missing


@pytest.mark.parametrize("role, status", [("outsider", 404), ("guest", 403), ("reporter", 200), ("developer", 200),
                                          ("master", 200), ("owner", 200), ("admin", 200)])  # fmt: skip
def test_who_reads(api4, repo, role, status):
    assert api4.as_(repo.user(role)).get(repo.base).status_code == status
    assert api4.as_(repo.user(role)).get(f"{repo.base}/master").status_code == status


def test_anonymous_reads_public_branches_only(api4, rt, repo):
    assert api4.get(repo.base).status_code == 404
    with rt.db.transaction() as session:
        session.get(Project, repo.project.id).visibility_level = 20
    body = api4.get(repo.base).json()
    assert [b["name"] for b in body] == ["feature/x", "master", "merged"]
    assert not any(b["can_push"] for b in body)


def pushed_refs(rt, project_id) -> set[str]:
    with rt.db.session() as session:
        events = session.scalars(select(Event).where(Event.project_id == project_id, Event.action == 5)).all()
        return {event.data["ref"] for event in events}


def test_create_through_the_client_and_the_query_string(gl, api4, rt, repo):
    project = gl(repo.user("developer")).projects.get(repo.project.id, lazy=True)
    created = project.branches.create({"branch": "topic", "ref": "master"})
    assert created.name == "topic" and created.commit["id"] == repo.work.git("rev-parse", "master")
    assert created.merged is True and created.can_push is True
    # gitbeaker and python-gitlab may send the parameters in the query string of a POST.
    raw = api4.as_(repo.user("developer")).post(f"{repo.base}?branch=release%2F1&ref=feature%2Fx")
    assert raw.status_code == 201, raw.text
    assert raw.json()["name"] == "release/1" and raw.json()["merged"] is False
    # Recorded as pushes: a push event each, as for `git push`.
    assert {"refs/heads/topic", "refs/heads/release/1"} <= pushed_refs(rt, repo.project.id)


@pytest.mark.parametrize("role, status", [("outsider", 404), ("guest", 403), ("reporter", 403), ("developer", 201),
                                          ("master", 201), ("owner", 201), ("admin", 201)])  # fmt: skip
def test_who_creates(api4, repo, role, status):
    response = api4.as_(repo.user(role)).post(repo.base, json={"branch": f"by-{role}", "ref": "master"})
    assert response.status_code == status, response.text


@pytest.mark.parametrize("name", ["..", "a..b", "-x", "--upload-pack=x", "a\x01b", "a b", "x.lock", "HEAD",
                                  "a" * 256, "feature/", "/x", "a//b", "@", "x@{1}", "tab\tname"])  # fmt: skip
def test_hostile_names_are_refused_and_nothing_changes(api4, repo, name):
    before = names(api4, repo)
    response = api4.as_(repo.user("master")).post(repo.base, json={"branch": name, "ref": "master"})
    assert response.status_code == 400, (name, response.text)
    assert names(api4, repo) == before


@pytest.mark.parametrize("ref", ["--output=/tmp/x", "nope", "master..feature/x", "master:x", "@{-1}", "a" * 300])
def test_bad_refs_are_refused(api4, repo, ref):
    response = api4.as_(repo.user("master")).post(repo.base, json={"branch": "fine", "ref": ref})
    assert response.status_code == 400, (ref, response.text)
    assert "fine" not in names(api4, repo)


def test_existing_branch_and_missing_parameters(api4, repo):
    who = api4.as_(repo.user("developer"))
    assert who.post(repo.base, json={"branch": "master", "ref": "master"}).json() == {"message": "Branch already exists"}
    assert who.post(repo.base, json={"ref": "master"}).json() == {"error": "branch is missing"}
    assert who.post(repo.base, json={"branch": "x"}).json() == {"error": "ref is missing"}


def test_a_protection_applies_to_a_branch_yet_to_exist(api4, repo):
    protect = api4.as_(repo.user("master")).post(f"/projects/{repo.project.id}/protected_branches",
                                                 json={"name": "release", "push_access_level": 40})  # fmt: skip
    assert protect.status_code == 201, protect.text
    refused = api4.as_(repo.user("developer")).post(repo.base, json={"branch": "release", "ref": "master"})
    assert refused.status_code == 403 and "protected branches" in refused.json()["message"]
    assert api4.as_(repo.user("master")).post(repo.base, json={"branch": "release", "ref": "master"}).status_code == 201
    nobody = api4.as_(repo.user("master")).post(f"/projects/{repo.project.id}/protected_branches",
                                                json={"name": "frozen", "push_access_level": 0})  # fmt: skip
    assert nobody.status_code == 201
    for role in ("master", "owner", "admin"):
        assert api4.as_(repo.user(role)).post(repo.base, json={"branch": "frozen", "ref": "master"}).status_code == 403


def test_delete(gl, api4, rt, repo):
    developer = api4.as_(repo.user("developer"))
    assert developer.delete(f"{repo.base}/feature%2Fx").status_code == 204
    assert "feature/x" not in names(api4, repo)
    assert "refs/heads/feature/x" in pushed_refs(rt, repo.project.id)
    assert developer.delete(f"{repo.base}/feature/x").json() == {"message": "404 Branch Not Found"}
    default = developer.delete(f"{repo.base}/master")
    assert default.status_code == 400
    assert default.json() == {"message": "The default branch of a project cannot be deleted."}
    gl(repo.user("master")).projects.get(repo.project.id, lazy=True).branches.delete("merged")
    assert names(api4, repo) == ["master"]


def test_a_protected_branch_is_deleted_by_maintainers_only(api4, repo):
    protect = api4.as_(repo.user("master")).post(f"/projects/{repo.project.id}/protected_branches?name=feature%2Fx")
    assert protect.status_code == 201
    refused = api4.as_(repo.user("developer")).delete(f"{repo.base}/feature/x")
    assert refused.status_code == 403
    assert refused.json() == {"message": "403 Forbidden - You are not allowed to delete protected branches from this project."}
    assert "feature/x" in names(api4, repo)
    assert api4.as_(repo.user("master")).delete(f"{repo.base}/feature/x").status_code == 204


@pytest.mark.parametrize("role, status", [("outsider", 404), ("guest", 403), ("reporter", 403), ("developer", 204)])
def test_who_deletes(api4, repo, role, status):
    assert api4.as_(repo.user(role)).delete(f"{repo.base}/merged").status_code == status


def test_delete_merged_branches(api4, rt, repo):
    work = repo.work
    work.git("branch", "merged-protected", "master")
    work.git("branch", "merged-too", "master~1")
    work.push("merged-protected", "merged-too")
    project = f"/projects/{repo.project.id}"
    api4.as_(repo.user("master")).post(f"{project}/protected_branches", json={"name": "merged-protected"})
    assert api4.as_(repo.user("reporter")).delete(f"{project}/repository/merged_branches").status_code == 403
    response = api4.as_(repo.user("developer")).delete(f"{project}/repository/merged_branches")
    assert (response.status_code, response.json()) == (202, {"message": "202 Accepted"})
    assert names(api4, repo) == ["feature/x", "master", "merged-protected"]
    assert {"refs/heads/merged", "refs/heads/merged-too"} <= pushed_refs(rt, repo.project.id)


def test_a_name_with_periods_round_trips_through_the_client(gl, repo):
    """python-gitlab's own functional test: create, get and delete `my.branch.name`."""
    project = gl(repo.user("developer")).projects.get(repo.project.id, lazy=True)
    branch = project.branches.create({"branch": "my.branch.name", "ref": "master"})
    assert project.branches.get("my.branch.name").name == branch.name == "my.branch.name"
    branch.delete()
    assert "my.branch.name" not in [b.name for b in project.branches.list(get_all=True)]
