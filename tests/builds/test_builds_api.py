"""The builds API (reference 9.2, spec Builds): shapes, order, scope, cancel, retry, trace,
permissions for every role, a fixed number of queries per list."""

from __future__ import annotations

import pytest

from codeyard.db.models import Build, Project, Runner
from codeyard.db.readers import SessionReader, now
from codeyard.entities.builds import build as build_entity
from codeyard.entities.commits import repo_commit
from codeyard.services import projects as project_service
from codeyard.services.ci import builds, traces

from ..support import QueryCounter, make_team
from .test_pipeline_creation import commit_file

CI = "stages: [build, test]\ncompile:\n  stage: build\n  script: make\nrspec:\n  script: rspec\nlint:\n  script: lint\n"
BUILD_FIELDS = {"id", "status", "stage", "name", "ref", "tag", "coverage", "created_at", "started_at", "finished_at",
                "user", "commit", "runner", "download_url"}  # fmt: skip


@pytest.fixture
def setup(rt, api, alice, projects):
    project = projects.create(alice)
    sha = commit_file(api, alice, project, ".gitlab-ci.yml", CI, "add ci")
    return project, sha


def ids_of(response) -> list[int]:
    return [b["id"] for b in response.json()]


def finish_first_stage(rt, project):
    from codeyard.services.ci import builds

    with rt.db.transaction() as session:
        for build in session.query(Build).filter_by(project_id=project.id, status="pending").all():
            builds.finish(session, rt, build, "success")


def test_list_get_and_the_build_entity(rt, api, alice, setup):
    project, sha = setup
    finish_first_stage(rt, project)
    listed = api.as_(alice).get(f"/projects/{project.id}/builds")
    assert listed.status_code == 200 and listed.headers["x-total"] == "3"
    names = [b["name"] for b in listed.json()]
    assert names in (["lint", "rspec", "compile"], ["rspec", "lint", "compile"])
    assert ids_of(listed) == sorted(ids_of(listed), reverse=True)
    compile_ = listed.json()[-1]
    assert set(compile_) == BUILD_FIELDS
    assert compile_["status"] == "success" and compile_["stage"] == "build" and compile_["ref"] == "master"
    assert compile_["tag"] is False and compile_["coverage"] is None and compile_["runner"] is None
    assert compile_["finished_at"] is not None and compile_["download_url"] is None
    assert compile_["commit"]["id"] == sha and compile_["commit"]["short_id"] == sha[:8]
    assert compile_["commit"]["title"] == "add ci" and compile_["commit"]["message"] == "add ci"
    user = compile_["user"]
    assert user["id"] == alice.id and user["username"] == "alice"
    assert {"profnet", "messenger", "microblog", "is_admin", "bio", "created_at", "website_url"} <= set(user)
    single = api.as_(alice).get(f"/projects/{project.id}/builds/{compile_['id']}")
    assert single.status_code == 200 and single.json() == compile_
    paged = api.as_(alice).get(f"/projects/{project.id}/builds", params={"per_page": 2, "page": 2})
    assert ids_of(paged) == [compile_["id"]] and "link" in paged.headers


def test_runner_and_artifacts_in_the_entity(rt, api, alice, setup):
    project, _sha = setup
    with rt.db.transaction() as session:
        runner = Runner(token_digest="r" * 64, description="box", is_shared=True, name="codeyard-runner")
        session.add(runner)
        session.flush()
        build = session.query(Build).filter_by(project_id=project.id).one()
        build.runner_id, build.artifacts_file, build.artifacts_size = runner.id, "artifacts.zip", 1234
        build_id, runner_id = build.id, runner.id
    got = api.as_(alice).get(f"/projects/{project.id}/builds/{build_id}").json()
    assert got["runner"] == {"id": runner_id, "description": "box", "active": True, "is_shared": True, "name": "codeyard-runner"}
    assert got["artifacts_file"] == {"filename": "artifacts.zip", "size": 1234}
    assert got["download_url"].endswith(f"/api/v3/projects/{project.id}/builds/{build_id}/artifacts")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"scope": "pending"}, ["lint", "rspec"]),
        ({"scope": "success"}, ["compile"]),
        ({"scope[0]": "success", "scope[1]": "pending"}, ["lint", "rspec", "compile"]),
        ({"scope": ""}, ["lint", "rspec", "compile"]),
        ({"scope": "running"}, []),
    ],
)
def test_scope(rt, api, alice, setup, params, expected):
    project, _sha = setup
    finish_first_stage(rt, project)
    listed = api.as_(alice).get(f"/projects/{project.id}/builds", params=params)
    assert listed.status_code == 200
    assert sorted(b["name"] for b in listed.json()) == sorted(expected)


@pytest.mark.parametrize("params", [{"scope": "nope"}, {"scope[]": "pending"}, {"scope[0]": "pending", "scope[1]": "bad"}])
def test_an_invalid_scope_is_400(api, alice, setup, params):
    project, sha = setup
    for path in (f"/projects/{project.id}/builds", f"/projects/{project.id}/repository/commits/{sha}/builds"):
        response = api.as_(alice).get(path, params=params)
        assert response.status_code == 400 and response.json() == {"message": "Scope contains invalid value(s)"}


def test_a_json_array_scope_is_400(api, alice, setup):
    project, _sha = setup
    response = api.as_(alice).request("GET", f"/projects/{project.id}/builds", json={"scope": ["pending"]})
    assert response.status_code == 400 and response.json() == {"message": "Scope contains invalid value(s)"}


def test_builds_of_a_commit(rt, api, alice, setup):
    project, first = setup
    second = commit_file(api, alice, project, "README.md", "x\n", "readme")
    of_first = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{first}/builds")
    of_second = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{second}/builds")
    assert [b["commit"]["id"] for b in of_first.json()] == [first]
    assert [b["commit"]["id"] for b in of_second.json()] == [second]
    for unknown in ("0" * 40, "master", "nope"):
        missing = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{unknown}/builds")
        assert missing.status_code == 404 and missing.json() == {"message": "404 Not Found"}


def test_unknown_or_foreign_builds_are_404(api, alice, projects, setup):
    project, _sha = setup
    other = projects.create(alice)
    build_id = api.as_(alice).get(f"/projects/{project.id}/builds").json()[0]["id"]
    for path in (f"/projects/{other.id}/builds/{build_id}", f"/projects/{project.id}/builds/999999",
                 f"/projects/{project.id}/builds/abc", f"/projects/{project.id}/builds/99999999999999999999"):  # fmt: skip
        response = api.as_(alice).get(path)
        assert response.status_code == 404 and response.json() == {"message": "404 Not Found"}
    assert api.as_(alice).post(f"/projects/{other.id}/builds/{build_id}/cancel").status_code == 404
    assert api.as_(alice).post(f"/projects/{other.id}/builds/{build_id}/retry").status_code == 404


def test_cancel(rt, api, alice, setup):
    project, _sha = setup
    (pending,) = api.as_(alice).get(f"/projects/{project.id}/builds").json()
    canceled = api.as_(alice).post(f"/projects/{project.id}/builds/{pending['id']}/cancel")
    assert canceled.status_code == 201
    body = canceled.json()
    assert body["status"] == "canceled" and body["finished_at"] is not None and body["id"] == pending["id"]
    again = api.as_(alice).post(f"/projects/{project.id}/builds/{pending['id']}/cancel")
    assert again.status_code == 201 and again.json()["finished_at"] == body["finished_at"]
    # A finished build is unchanged.
    retried = api.as_(alice).post(f"/projects/{project.id}/builds/{pending['id']}/retry").json()
    finish_first_stage(rt, project)
    done = api.as_(alice).post(f"/projects/{project.id}/builds/{retried['id']}/cancel")
    assert done.status_code == 201 and done.json()["status"] == "success"


def test_retry(rt, api, alice, users, projects, setup):
    project, _sha = setup
    (old,) = api.as_(alice).get(f"/projects/{project.id}/builds").json()
    developer = users.create("dev")
    projects.add_member(project, developer, 30)
    retried = api.as_(developer).post(f"/projects/{project.id}/builds/{old['id']}/retry")
    assert retried.status_code == 201
    body = retried.json()
    assert body["id"] > old["id"] and body["status"] == "pending" and body["name"] == old["name"]
    assert body["started_at"] is None and body["finished_at"] is None and body["user"]["id"] == developer.id
    assert api.as_(alice).get(f"/projects/{project.id}/builds/{old['id']}").json()["status"] == "pending"
    with rt.db.transaction() as session:
        session.get(Build, body["id"]).commands = ""
    refused = api.as_(alice).post(f"/projects/{project.id}/builds/{body['id']}/retry")
    assert refused.status_code == 403 and refused.json() == {"message": "403 Forbidden - Build is not retryable"}
    assert len(api.as_(alice).get(f"/projects/{project.id}/builds").json()) == 2


def test_trace(rt, api, alice, setup):
    project, _sha = setup
    (build,) = api.as_(alice).get(f"/projects/{project.id}/builds").json()
    empty = api.as_(alice).get(f"/projects/{project.id}/builds/{build['id']}/trace")
    assert empty.status_code == 200 and empty.content == b""
    with rt.db.transaction() as session:
        project_row = session.get(Project, project.id)
        token = project_service.runners_token(rt.secret_key, project_row)
        traces.replace(rt, session.get(Build, build["id"]), f"$ git clone http://gitlab-ci-token:{token}@host/x\nok\n".encode())
    with QueryCounter(rt) as counter:
        got = api.as_(alice).get(f"/projects/{project.id}/builds/{build['id']}/trace")
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/plain")
    assert got.headers["content-disposition"] == f'infile; filename="{build["id"]}.log"'
    assert got.content == b"$ git clone http://gitlab-ci-token:xxxxxx@host/x\nok\n"
    assert counter.count == 0 and len(counter.fast_reads) == 2  # the project (the guard) and the build
    with rt.db.transaction() as session:  # a running build's trace grows: the size read is the new one
        running = session.get(Build, build["id"])
        traces.append(rt, running, running.trace_size, b"more\n")
    assert api.as_(alice).get(f"/projects/{project.id}/builds/{build['id']}/trace").content.endswith(b"ok\nmore\n")
    assert api.as_(alice).get(f"/projects/{project.id}/builds/{2**40}/trace").json() == {"message": "404 Not Found"}
    assert api.as_(alice).get(f"/projects/{project.id}/builds/x/trace").json() == {"message": "404 Not Found"}


def test_the_read_path_reads_each_build_as_its_model_renders(rt, api, alice, setup):
    """The read path (one statement, no session) of both lists and of GET of one build gives each
    build's entity as a write's response (the model) gives it: with a runner, artifacts and coverage
    or none, with a user or none (deleted), started and finished or not; the scope's states and the
    commit's list narrow the lists."""
    project, sha = setup
    finish_first_stage(rt, project)
    with rt.db.transaction() as session:
        runner = Runner(token_digest="s" * 64, description="box", is_shared=True, name="codeyard-runner", active=False)
        session.add(runner)
        session.flush()
        found = session.query(Build).filter_by(project_id=project.id).order_by(Build.id).all()
        found[0].runner_id, found[0].artifacts_file, found[0].artifacts_size, found[0].coverage = runner.id, "a.zip", 12, 87.5
        found[1].status, found[1].user_id = "running", None  # as a deleted user leaves it
        ids = [build.id for build in found]
    base = f"/projects/{project.id}"

    def from_model(build_id: int) -> dict:  # the entity as cancel's and retry's responses render it (in their transaction)
        with rt.db.session() as session:
            found, runner_of, who = now(builds.read_one(SessionReader(session), project.id, build_id))
            entity = build_entity(found, rt.view(), None, runner_of, who)
        entity["commit"] = repo_commit(builds.commits(rt, project.id, [found.sha])[found.sha])
        return entity

    for path, params, expected in (
        ("/builds", {}, ids[::-1]), ("/builds", {"scope": "running"}, [ids[1]]),
        ("/builds", {"scope[0]": "success", "scope[1]": "pending"}, [ids[2], ids[0]]),
        (f"/repository/commits/{sha}/builds", {}, ids[::-1]), (f"/repository/commits/{sha}/builds", {"scope": "failed"}, []),
    ):  # fmt: skip
        listed = api.as_(alice).get(base + path, params=params)
        assert ids_of(listed) == expected and listed.headers["x-total"] == str(len(expected)), (path, params)
        for entity in listed.json():
            assert entity == api.as_(alice).get(f"{base}/builds/{entity['id']}").json() == from_model(entity["id"])
    first = api.as_(alice).get(base + "/builds", params={"scope": "success"}).json()[-1]
    assert (first["coverage"], first["runner"]["active"], first["artifacts_file"]) == (87.5, False, {"filename": "a.zip", "size": 12})
    assert api.as_(alice).get(base + "/builds", params={"scope": "running"}).json()[0]["user"] is None
    assert api.as_(alice).get(f"{base}/repository/commits/{'0' * 40}/builds").status_code == 404
    with QueryCounter(rt) as counter:
        assert api.as_(alice).get(f"{base}/builds/{ids[0]}").json()["id"] == ids[0]
    assert counter.count == 0 and len(counter.fast_reads) == 2  # the project (the guard) and the build
    assert api.as_(alice).get(f"{base}/builds/{2**40}").status_code == 404


def test_lists_use_a_fixed_number_of_queries(rt, api, alice, users, projects, setup):
    project, _sha = setup

    def count() -> int:
        with QueryCounter(rt) as counter:
            assert api.as_(alice).get(f"/projects/{project.id}/builds").status_code == 200
        assert counter.count == 0, counter.statements  # the read path: no session
        return len(counter.fast_reads)

    with rt.db.transaction() as session:
        runner = Runner(token_digest="q" * 64)
        session.add(runner)
        session.flush()
        session.query(Build).one().runner_id = runner.id
    few = count()
    others = [users.create(f"builder{number}") for number in range(6)]
    with rt.db.transaction() as session:
        runners = [Runner(token_digest=f"{n}" * 64) for n in range(6)]
        session.add_all(runners)
        session.flush()
        for number, other in enumerate(others):
            session.add(Build(project_id=project.id, pipeline_id=session.query(Build).first().pipeline_id, name=f"b{number}",
                              stage="test", stage_idx=1, ref="master", sha=_sha, commands="x", user_id=other.id,
                              runner_id=runners[number].id))  # fmt: skip
    assert count() == few


# --- permissions -----------------------------------------------------------------------------------

READS = ("GET builds", "GET commit builds", "GET build", "GET trace")
WRITES = ("POST cancel", "POST retry")


def _call(api, who, project, sha, build_id, what):
    client = api.as_(who) if who is not None else api.anonymous
    paths = {
        "GET builds": f"/projects/{project.id}/builds",
        "GET commit builds": f"/projects/{project.id}/repository/commits/{sha}/builds",
        "GET build": f"/projects/{project.id}/builds/{build_id}",
        "GET trace": f"/projects/{project.id}/builds/{build_id}/trace",
        "POST cancel": f"/projects/{project.id}/builds/{build_id}/cancel",
        "POST retry": f"/projects/{project.id}/builds/{build_id}/retry",
    }
    method, _ = what.split(" ", 1)
    return client.request(method, paths[what]).status_code


def expected(role: str, visibility: int, public_builds: bool, what: str) -> int:
    """Written from the reference (3.2-3.4, 9): reporters read builds, developers cancel and retry;
    public (and internal) projects let every signed-in user read them when public_builds is on."""
    if role == "anonymous":
        return 401
    readable = role != "outsider" or visibility > 0
    if not readable:
        return 404
    rank = {"outsider": 0, "guest": 10, "reporter": 20, "developer": 30, "master": 40, "owner": 50, "admin": 60}[role]
    if what in READS:
        allowed = rank >= 20 or (visibility > 0 and public_builds)
        return 200 if allowed else 403
    return 201 if rank >= 30 else 403


@pytest.mark.parametrize("visibility", [0, 10, 20])
@pytest.mark.parametrize("public_builds", [True, False])
def test_permission_matrix(rt, api, users, projects, admin, visibility, public_builds):
    team = make_team(users, projects, admin, visibility=visibility, prefix=f"v{visibility}{int(public_builds)}")
    project = team.project
    with rt.db.transaction() as session:
        session.get(Project, project.id).public_builds = public_builds
    sha = commit_file(api, team.user("owner"), project, ".gitlab-ci.yml", "job:\n  script: x\n")
    build_id = api.as_(team.user("owner")).get(f"/projects/{project.id}/builds").json()[0]["id"]
    failures = []
    for role in ("anonymous", "outsider", "guest", "reporter", "developer", "master", "owner", "admin"):
        for what in READS + WRITES:
            got = _call(api, team.user(role), project, sha, build_id, what)
            want = expected(role, visibility, public_builds, what)
            if got != want:
                failures.append(f"{role} {what}: {got} (expected {want})")
    assert failures == []


def test_with_builds_disabled_nobody_reaches_builds(rt, api, alice, admin, setup):
    project, sha = setup
    build_id = api.as_(alice).get(f"/projects/{project.id}/builds").json()[0]["id"]
    with rt.db.transaction() as session:
        session.get(Project, project.id).builds_enabled = False
    for who in (alice, admin):
        for what in READS + WRITES:
            assert _call(api, who, project, sha, build_id, what) == 403


def test_the_commit_status_comes_from_its_newest_pipeline(rt, api, alice, setup):
    project, sha = setup
    plain = commit_file(api, alice, project, "README.md", "x\n", "readme [ci skip]")
    url = f"/projects/{project.id}/repository/commits"
    assert api.as_(alice).get(f"{url}/{sha}").json()["status"] == "pending"
    assert api.as_(alice).get(f"{url}/{plain}").json()["status"] == "skipped"
    finish_first_stage(rt, project)
    assert api.as_(alice).get(f"{url}/{sha}").json()["status"] == "running"
    assert api.as_(alice).get(f"{url}/master").json()["status"] == "skipped"
    with rt.db.transaction() as session:
        from codeyard.db.models import Pipeline

        session.query(Pipeline).filter_by(project_id=project.id).delete()
    assert api.as_(alice).get(f"{url}/{sha}").json()["status"] is None


def test_a_canceled_build_is_announced_with_its_commit(rt, api, alice, setup):
    import orjson

    from codeyard.db.models import Job, ProjectHook

    project, sha = setup
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://example.com/b", build_events=True))
    (build,) = api.as_(alice).get(f"/projects/{project.id}/builds").json()
    assert api.as_(alice).post(f"/projects/{project.id}/builds/{build['id']}/cancel").status_code == 201
    with rt.db.transaction(write=False) as session:
        (body,) = [orjson.loads(j.payload["body"]) for j in session.query(Job) if j.payload["event"] == "Build Hook"]
    assert body["build_status"] == "canceled" and body["commit"]["sha"] == sha
    assert body["commit"]["message"] == "add ci" and body["commit"]["author_name"] == alice.name
    assert body["commit"]["status"] == "canceled"
