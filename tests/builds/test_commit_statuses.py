"""GET /projects/:id/repository/commits/:sha/statuses (GitLab 8.6 commit_statuses.rb): a commit's builds as
commit statuses, the latest of each unless `all`, filtered by ref, stage and name; read_commit_status."""

from __future__ import annotations

import pytest

from codeyard.db.models import Build, Project
from codeyard.entities.builds import commit_status

from ..support import QueryCounter, make_team
from .test_builds_api import CI, finish_first_stage
from .test_pipeline_creation import commit_file

FIELDS = {"id", "sha", "ref", "status", "name", "target_url", "description", "created_at", "started_at",
          "finished_at", "allow_failure", "author"}  # fmt: skip


@pytest.fixture
def setup(rt, api, alice, projects):
    project = projects.create(alice)
    sha = commit_file(api, alice, project, ".gitlab-ci.yml", CI, "add ci")
    return project, sha


def path(project, sha) -> str:
    return f"/projects/{project.id}/repository/commits/{sha}/statuses"


def test_the_statuses_of_a_commit(rt, api, alice, setup):
    project, sha = setup
    finish_first_stage(rt, project)
    listed = api.as_(alice).get(path(project, sha))
    assert listed.status_code == 200 and listed.headers["x-total"] == "3"
    body = listed.json()
    assert [s["id"] for s in body] == sorted(s["id"] for s in body)
    first = body[0]
    assert set(first) == FIELDS
    assert first["name"] == "compile" and first["status"] == "success" and first["sha"] == sha
    assert first["ref"] == "master" and first["allow_failure"] is False and first["finished_at"] is not None
    assert first["target_url"] is None and first["description"] is None
    assert first["author"]["id"] == alice.id and first["author"]["username"] == "alice"
    assert "is_admin" not in first["author"]  # UserBasic, not the full User
    assert sorted(s["name"] for s in body[1:]) == ["lint", "rspec"]
    assert {s["status"] for s in body[1:]} == {"pending"}
    paged = api.as_(alice).get(path(project, sha), params={"per_page": 1, "page": 2})
    assert [s["id"] for s in paged.json()] == [body[1]["id"]] and "link" in paged.headers


def test_a_branch_name_or_short_sha_stands_for_its_commit(api, alice, setup):
    project, sha = setup
    full = api.as_(alice).get(path(project, sha)).json()
    assert api.as_(alice).get(path(project, "master")).json() == full
    assert api.as_(alice).get(path(project, sha[:8])).json() == full


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"stage": "build"}, ["compile"]),
        ({"stage": "test"}, ["lint", "rspec"]),
        ({"name": "rspec"}, ["rspec"]),
        ({"ref": "master"}, ["compile", "lint", "rspec"]),
        ({"ref": "other"}, []),
        ({"name": "nope"}, []),
        ({"stage": "test", "name": "lint"}, ["lint"]),
        ({"name": ""}, ["compile", "lint", "rspec"]),
    ],
)
def test_filters(rt, api, alice, setup, params, expected):
    project, sha = setup
    finish_first_stage(rt, project)
    listed = api.as_(alice).get(path(project, sha), params=params)
    assert listed.status_code == 200
    assert sorted(s["name"] for s in listed.json()) == expected


def test_retried_builds_only_with_all(rt, api, alice, setup):
    project, sha = setup
    (compile_,) = api.as_(alice).get(path(project, sha)).json()
    assert api.as_(alice).post(f"/projects/{project.id}/builds/{compile_['id']}/cancel").status_code == 201
    retried = api.as_(alice).post(f"/projects/{project.id}/builds/{compile_['id']}/retry").json()
    latest = api.as_(alice).get(path(project, sha)).json()
    assert [(s["id"], s["status"]) for s in latest] == [(retried["id"], "pending")]
    every = api.as_(alice).get(path(project, sha), params={"all": "true"}).json()
    assert [(s["id"], s["status"]) for s in every] == [(compile_["id"], "canceled"), (retried["id"], "pending")]
    assert api.as_(alice).get(path(project, sha), params={"all": "false"}).json() == latest


def test_a_commit_without_builds_is_an_empty_list(api, alice, setup):
    project, _sha = setup
    plain = commit_file(api, alice, project, "README.md", "x\n", "readme [ci skip]")
    listed = api.as_(alice).get(path(project, plain))
    assert listed.status_code == 200 and listed.json() == [] and listed.headers["x-total"] == "0"


@pytest.mark.parametrize("unknown", ["0" * 40, "nope", "-n", "master..master", "HEAD@{0}"])
def test_an_unknown_commit_is_404(api, alice, setup, unknown):
    project, _sha = setup
    response = api.as_(alice).get(path(project, unknown))
    assert response.status_code == 404 and response.json() == {"message": "404 Commit Not Found"}


def test_bad_parameters_are_400(api, alice, setup):
    project, sha = setup
    for params in ({"all": "maybe"}, {"name": "x" * 256}, {"ref": "a\x01b"}):
        assert api.as_(alice).get(path(project, sha), params=params).status_code == 400


def test_the_read_path_reads_each_status_as_its_model_renders(rt, api, alice, setup):
    """Every status of the list (read path: one statement) equals the entity a write renders from the
    model, with its author or none, retried ones among them with `all`, whatever the filters."""
    project, sha = setup
    finish_first_stage(rt, project)
    with rt.db.transaction() as session:
        found = session.query(Build).filter_by(project_id=project.id).order_by(Build.id).all()
        found[1].user_id, found[2].retried, found[2].description = None, True, "old"
    view = rt.view()
    for params in ({}, {"all": "true"}, {"stage": "test", "all": "true"}, {"ref": "master", "name": "compile"}):
        listed = api.as_(alice).get(path(project, sha), params=params).json()
        with rt.db.session() as session:
            models = {build.id: build for build in session.query(Build).filter_by(project_id=project.id)}
            assert listed == [commit_status(models[s["id"]], view, models[s["id"]].user) for s in listed], params
        assert (found[2].id in [s["id"] for s in listed]) == (params.get("all") == "true"), params
    assert api.as_(alice).get(path(project, sha), params={"all": "true"}).json()[1]["author"] is None


def test_a_fixed_number_of_queries(rt, api, alice, users, setup):
    project, sha = setup

    def count() -> int:
        with QueryCounter(rt) as counter:
            assert api.as_(alice).get(path(project, sha)).status_code == 200
        assert counter.count == 0, counter.statements  # the read path: no session
        return len(counter.fast_reads)

    few = count()
    others = [users.create(f"status{number}") for number in range(5)]
    with rt.db.transaction() as session:
        pipeline_id = session.query(Build).first().pipeline_id
        for number, other in enumerate(others):
            session.add(Build(project_id=project.id, pipeline_id=pipeline_id, name=f"s{number}", stage="test",
                              stage_idx=1, ref="master", sha=sha, commands="x", user_id=other.id))  # fmt: skip
    assert count() == few


def expected(role: str, visibility: int) -> int:
    """Reference 3.3: reporters read commit statuses; on a public or internal project everyone signed in
    does (PUBLIC_RULES), whatever public_builds says; the API wants a user (401)."""
    if role == "anonymous":
        return 401
    if role == "outsider" and visibility == 0:
        return 404
    if role in ("outsider", "guest"):
        return 200 if visibility > 0 else 403
    return 200


@pytest.mark.parametrize("visibility", [0, 10, 20])
def test_permission_matrix(rt, api, users, projects, admin, visibility):
    team = make_team(users, projects, admin, visibility=visibility, prefix=f"cs{visibility}")
    project = team.project
    with rt.db.transaction() as session:
        session.get(Project, project.id).public_builds = False
    sha = commit_file(api, team.user("owner"), project, ".gitlab-ci.yml", "job:\n  script: x\n")
    failures = []
    for role in ("anonymous", "outsider", "guest", "reporter", "developer", "master", "owner", "admin"):
        who = team.user(role)
        client = api.as_(who) if who is not None else api.anonymous
        got = client.get(path(project, sha)).status_code
        if got != expected(role, visibility):
            failures.append(f"{role}: {got} (expected {expected(role, visibility)})")
    assert failures == []


def test_python_gitlab(live, alice, rt):
    import gitlab

    client = gitlab.Gitlab(live.base_url, private_token=alice.token, api_version="3")
    project = client.projects.create({"name": "Statuses"})
    project.files.create({"file_path": ".gitlab-ci.yml", "branch_name": "master", "content": CI,
                          "commit_message": "add ci"})  # fmt: skip
    sha = project.commits.list()[0].id
    statuses = project.commits.get(sha).statuses.list()
    assert sorted(s.name for s in statuses) == ["compile"] and statuses[0].status == "pending"
