"""POST /projects/:id/statuses/:sha (GitLab 8.6 commit_statuses.rb, GenericCommitStatus): external
statuses of a commit, kept as generic builds of the pipeline of its sha and ref."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from codeyard.db.models import Build, Job, Pipeline, Project, ProjectHook
from codeyard.services.ci import builds, statuses
from codeyard.services.repository import path_of

from ..support import make_team
from .test_builds_api import CI
from .test_commit_statuses import FIELDS
from .test_pipeline_creation import commit_file


@pytest.fixture
def plain(api, alice, projects):
    """A project whose master has a commit without .gitlab-ci.yml (so no pipeline)."""
    project = projects.create(alice)
    return project, commit_file(api, alice, project, "README.md", "hello\n", "readme")


def post(api, who, project, sha, **fields):
    return api.as_(who).post(f"/projects/{project.id}/statuses/{sha}", json=fields)


def listed(api, who, project, sha, **params):
    response = api.as_(who).get(f"/projects/{project.id}/repository/commits/{sha}/statuses", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def commit_status(api, who, project, sha):
    return api.as_(who).get(f"/projects/{project.id}/repository/commits/{sha}").json()["status"]


def counts(rt, project) -> tuple[int, int]:
    with rt.db.session() as session:
        pipelines = session.scalar(select(func.count()).select_from(Pipeline).where(Pipeline.project_id == project.id))
        statuses = session.scalar(select(func.count()).select_from(Build).where(Build.project_id == project.id))
    return pipelines, statuses


def test_a_status_is_created_on_a_commit_without_ci(rt, api, alice, plain):
    project, sha = plain
    assert commit_status(api, alice, project, sha) is None
    made = post(api, alice, project, sha, state="pending", target_url="https://ci.example.com/1",
                description="Queued", context="jenkins")  # fmt: skip
    assert made.status_code == 201, made.text
    body = made.json()
    assert set(body) == FIELDS
    assert body["name"] == "jenkins" and body["status"] == "pending" and body["sha"] == sha
    assert body["ref"] == "master" and body["target_url"] == "https://ci.example.com/1"
    assert body["description"] == "Queued" and body["allow_failure"] is False
    assert body["author"]["id"] == alice.id and body["started_at"] is None and body["finished_at"] is None
    assert listed(api, alice, project, sha) == [body]
    assert commit_status(api, alice, project, sha) == "pending"
    with rt.db.session() as session:
        row = session.get(Build, body["id"])
        assert row.generic and row.stage == "external" and row.commands == "" and row.token_digest is None


def test_the_same_name_and_ref_moves_the_status(api, alice, plain):
    project, sha = plain
    first = post(api, alice, project, sha, state="pending", name="ext", target_url="http://ci/1").json()
    running = post(api, alice, project, sha, state="running", name="ext", description="Building").json()
    assert running["id"] == first["id"] and running["status"] == "running" and running["started_at"] is not None
    assert running["target_url"] == "http://ci/1" and running["description"] == "Building"
    assert commit_status(api, alice, project, sha) == "running"
    done = post(api, alice, project, sha, state="success", name="ext").json()
    assert done["id"] == first["id"] and done["status"] == "success" and done["finished_at"] is not None
    assert commit_status(api, alice, project, sha) == "success"
    assert [s["id"] for s in listed(api, alice, project, sha)] == [first["id"]]


def test_a_finished_status_is_followed_by_a_new_one(api, alice, plain):
    """8.6 moves only a pending or running status; a later post makes a new one, which is the one
    that counts (the older shows with all=true)."""
    project, sha = plain
    failed = post(api, alice, project, sha, state="failed").json()
    assert failed["status"] == "failed" and failed["name"] == "default"
    assert commit_status(api, alice, project, sha) == "failed"
    again = post(api, alice, project, sha, state="success").json()
    assert again["id"] != failed["id"] and again["status"] == "success"
    assert commit_status(api, alice, project, sha) == "success"
    assert [s["id"] for s in listed(api, alice, project, sha)] == [again["id"]]
    assert [s["id"] for s in listed(api, alice, project, sha, all="true")] == [failed["id"], again["id"]]


def test_moves_8_6_ignores(api, alice, plain):
    project, sha = plain
    made = post(api, alice, project, sha, state="running").json()
    assert post(api, alice, project, sha, state="running").json()["started_at"] == made["started_at"]
    back = post(api, alice, project, sha, state="pending").json()  # 8.6 wrote `pending` as is
    assert back["id"] == made["id"] and back["status"] == "pending"
    assert commit_status(api, alice, project, sha) == "pending"


def test_names_and_refs_are_separate_statuses(api, alice, plain):
    project, sha = plain
    api.as_(alice).post(f"/projects/{project.id}/repository/branches", json={"branch_name": "feature", "ref": sha})
    a = post(api, alice, project, sha, state="success", name="a", ref="master").json()
    b = post(api, alice, project, sha, state="failed", name="b", ref="master").json()
    on_feature = post(api, alice, project, sha, state="pending", name="a", ref="feature").json()
    assert len({a["id"], b["id"], on_feature["id"]}) == 3 and on_feature["ref"] == "feature"
    assert sorted((s["name"], s["ref"]) for s in listed(api, alice, project, sha)) == [
        ("a", "feature"), ("a", "master"), ("b", "master")
    ]  # fmt: skip


def test_the_default_ref_is_the_first_branch_with_the_commit(api, alice, plain):
    project, sha = plain
    newer = commit_file(api, alice, project, "more.txt", "x\n", "more")
    for name, ref in (("zeta", newer), ("beta", sha)):
        created = api.as_(alice).post(f"/projects/{project.id}/repository/branches", json={"branch_name": name, "ref": ref})
        assert created.status_code == 201, created.text
    # sha is on beta, master and zeta; newer only on master and zeta
    assert post(api, alice, project, sha, state="pending").json()["ref"] == "beta"
    assert post(api, alice, project, newer, state="pending").json()["ref"] == "master"
    # A branch name stands for its commit.
    assert post(api, alice, project, "zeta", state="pending", name="x").json()["sha"] == newer


def test_a_commit_on_no_branch_needs_a_ref(rt, api, alice, plain):
    project, sha = plain
    newer = commit_file(api, alice, project, "more.txt", "x\n", "more")
    with rt.db.session() as session:
        git_dir = path_of(rt, session.get(Project, project.id))
    for ref, target in (("refs/tags/v1", newer), ("refs/heads/master", sha)):  # NEWER is on no branch now
        subprocess.run(["git", "--git-dir", str(git_dir), "update-ref", ref, target], check=True)
    response = post(api, alice, project, newer, state="success")
    assert response.status_code == 404 and response.json() == {"message": "404 References for commit Not Found"}
    assert counts(rt, project) == (0, 0)
    on_tag = post(api, alice, project, newer, state="success", ref="v1")
    assert on_tag.status_code == 201 and on_tag.json()["ref"] == "v1"
    with rt.db.session() as session:
        assert session.scalars(select(Pipeline.tag).where(Pipeline.project_id == project.id)).all() == [True]


def test_a_status_joins_the_pipeline_of_a_push(rt, api, alice, projects):
    project = projects.create(alice)
    sha = commit_file(api, alice, project, ".gitlab-ci.yml", CI, "add ci")
    assert counts(rt, project) == (1, 1)
    made = post(api, alice, project, sha, state="failed", name="lint-ext").json()
    assert counts(rt, project) == (1, 2)
    statuses = listed(api, alice, project, sha)
    assert [(s["name"], s["status"]) for s in statuses] == [("compile", "pending"), ("lint-ext", "failed")]
    # Running builds keep the pipeline running; once they finish, the failed external status counts.
    assert commit_status(api, alice, project, sha) == "running"
    with rt.db.transaction() as session:
        compile_ = session.scalars(select(Build).where(Build.project_id == project.id, Build.name == "compile")).one()
        builds.finish(session, rt, compile_, "success")
    names = sorted(s["name"] for s in listed(api, alice, project, sha))
    assert names == ["compile", "lint", "lint-ext", "rspec"]  # the external status did not hold the next stage
    assert made["id"] in {s["id"] for s in listed(api, alice, project, sha)}


@pytest.mark.parametrize("state", ["error", "failure", "skipped", "PENDING", " running"])
def test_a_bad_state_is_400_and_stores_nothing(rt, api, alice, plain, state):
    project, sha = plain
    response = post(api, alice, project, sha, state=state)
    assert response.status_code == 400 and response.json() == {"message": {"status": ["is not included in the list"]}}
    assert counts(rt, project) == (0, 0)


def test_a_missing_state_is_400(rt, api, alice, plain):
    project, sha = plain
    response = post(api, alice, project, sha, name="x")
    assert response.status_code == 400 and response.json() == {"message": '400 (Bad request) "state" not given'}
    assert counts(rt, project) == (0, 0)


@pytest.mark.parametrize(
    "fields",
    [
        {"target_url": "javascript:alert(1)"},
        {"target_url": "ftp://example.com/x"},
        {"target_url": "not a url"},
        {"target_url": "https://example.com/" + "x" * 1010},
        {"description": "x" * 1025},
        {"description": "bell\x07"},
        {"name": "x" * 256},
        {"name": "a\x00b"},
        {"ref": "-x"},
        {"ref": "a..b"},
        {"ref": "x" * 256},
    ],
)
def test_bad_fields_are_400_and_store_nothing(rt, api, alice, plain, fields):
    project, sha = plain
    response = post(api, alice, project, sha, state="success", **fields)
    assert response.status_code == 400, response.text
    assert set(response.json()["message"]) == set(fields)
    assert counts(rt, project) == (0, 0)


@pytest.mark.parametrize("unknown", ["0" * 40, "nope", "-n", "master..master", "HEAD@{0}"])
def test_an_unknown_commit_is_404(rt, api, alice, plain, unknown):
    project, _sha = plain
    response = post(api, alice, project, unknown, state="success")
    assert response.status_code == 404 and response.json() == {"message": "404 Commit Not Found"}
    assert counts(rt, project) == (0, 0)


def test_retry_is_refused_and_cancel_works(rt, api, alice, plain):
    project, sha = plain
    made = post(api, alice, project, sha, state="running").json()
    retry = api.as_(alice).post(f"/projects/{project.id}/builds/{made['id']}/retry")
    assert retry.status_code == 403 and retry.json() == {"message": "403 Forbidden - Build is not retryable"}
    canceled = api.as_(alice).post(f"/projects/{project.id}/builds/{made['id']}/cancel")
    assert canceled.status_code == 201 and canceled.json()["status"] == "canceled"
    assert commit_status(api, alice, project, sha) == "canceled"


def test_no_build_hook_for_an_external_status(rt, api, alice, plain):
    """8.6 fired the Build Hook from Ci::Build's transitions only; a build's own hook still fires."""
    project, sha = plain
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://example.com/b", build_events=True))
    for state in ("running", "success"):
        assert post(api, alice, project, sha, state=state).status_code == 201
    made = post(api, alice, project, sha, state="running", name="other").json()
    assert api.as_(alice).post(f"/projects/{project.id}/builds/{made['id']}/cancel").json()["status"] == "canceled"
    with rt.db.session() as session:
        assert [j for j in session.scalars(select(Job)) if j.payload.get("event") == "Build Hook"] == []


def expected(role: str, visibility: int) -> int:
    """create_commit_status is a developer's (reference 3.3); who cannot see the project gets 404."""
    if role == "anonymous":
        return 401
    if role == "outsider" and visibility == 0:
        return 404
    if role in ("outsider", "guest", "reporter"):
        return 403
    return 201


@pytest.mark.parametrize("visibility", [0, 20])
def test_permission_matrix(rt, api, users, projects, admin, visibility):
    team = make_team(users, projects, admin, visibility=visibility, prefix=f"ps{visibility}")
    project = team.project
    sha = commit_file(api, team.user("owner"), project, "README.md", "x\n")
    failures, made = [], 0
    for role in ("anonymous", "outsider", "guest", "reporter", "developer", "master", "owner", "admin"):
        who = team.user(role)
        client = api.as_(who) if who is not None else api.anonymous
        got = client.post(f"/projects/{project.id}/statuses/{sha}", json={"state": "success", "name": role})
        made += got.status_code == 201
        if got.status_code != expected(role, visibility):
            failures.append(f"{role}: {got.status_code} (expected {expected(role, visibility)})")
    assert failures == []
    assert counts(rt, project) == (1, made) and made == 4


def test_python_gitlab(live, alice):
    import gitlab

    client = gitlab.Gitlab(live.base_url, private_token=alice.token, api_version="3")
    project = client.projects.create({"name": "External"})
    project.files.create({"file_path": "README.md", "branch_name": "master", "content": "hi\n",
                          "commit_message": "readme"})  # fmt: skip
    commit = project.commits.get(project.commits.list()[0].id)
    made = commit.statuses.create({"state": "running", "name": "jenkins", "target_url": "https://ci.example.com/7",
                                   "description": "Building"})  # fmt: skip
    assert made.status == "running" and made.name == "jenkins" and made.ref == "master"
    assert made.target_url == "https://ci.example.com/7" and made.description == "Building"
    commit.statuses.create({"state": "success", "name": "jenkins"})
    (status,) = commit.statuses.list()
    assert status.id == made.id and status.status == "success" and status.description == "Building"
    assert project.commits.get(commit.id).status == "success"


THREADS = 8


def test_racing_posts_make_one_pipeline_and_one_status_per_name(rt, api, alice, plain):
    """Posts at once (each thread its own connection, as separate server processes would): the
    pipeline is made once, each name's status once, and every post of a name gets that status."""
    project, sha = plain
    got: dict[int, int] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def one(number: int) -> None:
        try:
            start.wait()
            for attempt in range(20):
                try:
                    with rt.db.transaction() as session:
                        found = statuses.post(session, rt, session.get(Project, project.id), None, sha, "master",
                                              False, {"state": "pending", "name": f"n{number % 2}"})  # fmt: skip
                        got[number] = found.id
                    return
                except OperationalError:  # a lock wait past the busy timeout on a loaded machine
                    time.sleep(0.2 * (attempt + 1))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=one, args=(number,)) for number in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(got) == THREADS
    evens, odds = ({got[n] for n in range(first, THREADS, 2)} for first in (0, 1))
    assert len(evens) == 1 and len(odds) == 1 and evens != odds
    assert counts(rt, project) == (1, 2)
