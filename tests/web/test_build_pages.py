"""Build pages: the project's builds (paginated, by state) and one build with its trace, cancel and
retry; who may see and act follows the reference (reporters read builds, everyone who may read a
public or internal project when public_builds is on; developers cancel and retry)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from codeyard.db.models import Build, Project, Runner
from codeyard.services import projects as project_service
from codeyard.services.ci import traces
from tests.builds.conftest import CiFactory, job
from tests.support import ROLES, QueryCounter, WorkingCopy, make_team

PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
RANK = {"guest": 10, "reporter": 20, "developer": 30, "master": 40, "owner": 50, "admin": 60}


def _setup(rt, users, projects, admin, tmp_path, visibility=PRIVATE, public_builds=True, prefix=""):
    team = make_team(users, projects, admin, visibility, prefix=prefix)
    with rt.db.transaction() as session:
        session.get(Project, team.project.id).public_builds = public_builds
    work_path = tmp_path / f"work{prefix}"
    work = WorkingCopy(rt, team.project, work_path)
    sha = work.commit("first", {"a.txt": "a\n"})
    work.push()
    ci = CiFactory(rt)
    pipeline = ci.pipeline(team.project, [job("rspec"), job("lint")], sha=sha)
    built = ci.builds(pipeline)
    return SimpleNamespace(team=team, project=team.project, sha=sha, ci=ci, pipeline=pipeline, builds=built,
                           url="/" + team.project.path_with_namespace, work=work)  # fmt: skip


@pytest.fixture
def setup(rt, users, projects, admin, tmp_path):
    return _setup(rt, users, projects, admin, tmp_path)


def _write_trace(rt, build_id: int, data: bytes) -> None:
    with rt.db.transaction() as session:
        traces.replace(rt, session.get(Build, build_id), data)


def expected(role: str, visibility: int, public_builds: bool, write: bool) -> int:
    """From the reference (3.2-3.4, 9), as the pages show it: an unreadable project is 404."""
    readable = role in RANK or (role == "outsider" and visibility > PRIVATE) or (role == "anonymous" and visibility == PUBLIC)
    if not readable:
        return 404
    if write:
        if role == "anonymous":
            return 403  # a form post without a session: readable project, no ability
        return 303 if RANK.get(role, 0) >= 30 else 403
    return 200 if RANK.get(role, 0) >= 20 or (visibility > PRIVATE and public_builds) else 403


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
@pytest.mark.parametrize("public_builds", [True, False])
def test_role_by_visibility(rt, users, projects, admin, tmp_path, browser_for, visibility, public_builds):
    s = _setup(rt, users, projects, admin, tmp_path, visibility, public_builds, prefix=f"v{visibility}{int(public_builds)}")
    build_id = s.builds["rspec"].id
    failures = []
    for role in ROLES:
        client = browser_for(s.team.user(role))
        for path in (f"{s.url}/builds", f"{s.url}/builds/{build_id}", f"{s.url}/builds/{build_id}/trace"):
            got, want = client.get(path).status_code, expected(role, visibility, public_builds, False)
            if got != want:
                failures.append(f"{role} GET {path}: {got} (expected {want})")
        project_page = client.get(s.url)
        if project_page.status_code == 200:
            shows_tab = f'href="{s.url}/builds"' in project_page.text
            if shows_tab != (expected(role, visibility, public_builds, False) == 200):
                failures.append(f"{role}: Builds tab shown {shows_tab}")
        build_page = client.get(f"{s.url}/builds/{build_id}")
        may_act = expected(role, visibility, public_builds, True) == 303
        if build_page.status_code == 200 and (f'action="{s.url}/builds/{build_id}/cancel"' in build_page.text) != may_act:
            failures.append(f"{role}: cancel button")
    assert failures == []


def test_cancel_and_retry_follow_the_rules(rt, users, projects, admin, tmp_path, browser_for):
    s = _setup(rt, users, projects, admin, tmp_path, INTERNAL, True)
    build_id = s.builds["rspec"].id
    path = f"{s.url}/builds/{build_id}"
    for role in ("outsider", "guest", "reporter"):
        client = browser_for(s.team.user(role))
        assert client.post(path + "/cancel", token=client.form_token(path)).status_code == 403, role
        assert client.post(path + "/retry", token=client.form_token(path)).status_code == 403, role
    assert s.ci.builds(s.pipeline)["rspec"].status == "pending"
    developer = browser_for(s.team.user("developer"))
    assert developer.post(path + "/cancel", token=False).status_code == 403  # no form token
    assert s.ci.builds(s.pipeline)["rspec"].status == "pending"
    done = developer.post(path + "/cancel", token=developer.form_token(path))
    assert done.status_code == 303 and done.headers["location"] == path
    assert s.ci.builds(s.pipeline)["rspec"].status == "canceled"
    page = developer.get(path).text
    assert f'action="{path}/cancel"' not in page and f'action="{path}/retry"' in page
    retried = developer.post(path + "/retry", token=developer.form_token(path))
    fresh = s.ci.builds(s.pipeline)["rspec"]
    assert retried.status_code == 303 and retried.headers["location"] == f"{s.url}/builds/{fresh.id}"
    assert fresh.id != build_id and fresh.status == "pending"
    assert developer.post(f"{s.url}/builds/999999/cancel", token=developer.form_token(path)).status_code == 404


def test_hostile_trace_and_name_are_escaped_and_the_token_masked(rt, setup, browser_for):
    build_id = setup.builds["rspec"].id
    with rt.db.transaction() as session:
        session.get(Build, build_id).name = '<img src=x onerror="alert(1)">'
        token = project_service.runners_token(rt.secret_key, session.get(Project, setup.project.id))
    _write_trace(rt, build_id, b"<script>alert(2)</script>\n\x1b[31mred\xff " + token.encode() + b"\n")
    client = browser_for(setup.team.user("reporter"))
    for path in (f"{setup.url}/builds", f"{setup.url}/builds/{build_id}"):
        text = client.get(path).text
        assert "<img src=x" not in text and "&lt;img src=x onerror=" in text, path
    page = client.get(f"{setup.url}/builds/{build_id}")
    assert "<script>alert(2)" not in page.text and "&lt;script&gt;alert(2)&lt;/script&gt;" in page.text
    assert token not in page.text and "xxxxxx" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "<script>" not in page.text.replace('<script src="/-/static/', "")  # no inline script


def test_a_running_build_is_followed_through_the_trace_endpoint(rt, setup, browser_for):
    build_id = setup.builds["rspec"].id
    with rt.db.transaction() as session:
        runner = Runner(token_digest="d" * 64, description="box <one>")
        session.add(runner)
        session.flush()
        runner_id = runner.id
    setup.ci.run(build_id, runner_id=runner_id)
    _write_trace(rt, build_id, b"step one\n")
    client = browser_for(setup.team.user("reporter"))
    page = client.get(f"{setup.url}/builds/{build_id}")
    assert f'data-follow="{setup.url}/builds/{build_id}/trace" data-offset="9" data-poll-ms="3000"' in page.text
    assert "box &lt;one&gt;" in page.text and "running" in page.text and setup.sha[:8] in page.text
    _write_trace(rt, build_id, b"step one\nstep two\n")
    part = client.get(f"{setup.url}/builds/{build_id}/trace?offset=9")
    assert part.status_code == 200 and part.content == b"step two\n"
    assert part.headers["x-build-status"] == "running" and part.headers["x-trace-offset"] == "18"
    assert part.headers["content-type"].startswith("text/plain")
    assert client.get(f"{setup.url}/builds/{build_id}/trace?offset=x").content == b"step one\nstep two\n"
    setup.ci.finish(build_id, "success")
    finished = client.get(f"{setup.url}/builds/{build_id}")
    assert "data-follow" not in finished.text
    assert client.get(f"{setup.url}/builds/{build_id}/trace?offset=18").headers["x-build-status"] == "success"
    assert client.get("/-/static/builds.js").status_code == 200


def test_list_filters_by_state_and_pages(rt, setup, browser_for):
    setup.ci.finish(setup.builds["lint"].id, "failed")
    client = browser_for(setup.team.user("reporter"))
    failed = client.get(f"{setup.url}/builds?scope=failed").text
    assert f"/builds/{setup.builds['lint'].id}\"" in failed and f"/builds/{setup.builds['rspec'].id}\"" not in failed
    every = client.get(f"{setup.url}/builds?scope=bogus").text
    assert f"/builds/{setup.builds['lint'].id}\"" in every and f"/builds/{setup.builds['rspec'].id}\"" in every
    assert "No builds." in client.get(f"{setup.url}/builds?page=2").text
    assert client.get(f"{setup.url}/builds/abc").status_code == 404


def test_the_list_uses_a_fixed_number_of_queries(rt, setup, browser_for):
    client = browser_for(setup.team.user("reporter"))

    def count() -> int:
        with QueryCounter(rt) as counter:
            assert client.get(f"{setup.url}/builds").status_code == 200
        return counter.count

    with rt.db.transaction() as session:
        runners = [Runner(token_digest=f"{n}" * 64, description=f"r{n}") for n in range(4)]
        session.add_all(runners)
        session.flush()
        ids = [r.id for r in runners]
    setup.ci.run(setup.builds["rspec"].id, runner_id=ids[3])
    few = count()
    for n in range(3):
        pipeline = setup.ci.pipeline(setup.project, [job("a"), job("b")], ref=f"branch{n}", sha=setup.sha, user=setup.team.user(("developer", "master", "owner")[n]))
        for build in setup.ci.builds(pipeline).values():
            setup.ci.run(build.id, runner_id=ids[n])
    assert count() == few


def _badge(status: str) -> str:
    return f'class="badge ci {status}"'


def test_commit_status_badges_show_the_newest_pipeline(rt, setup, browser_for, tmp_path):
    client = browser_for(setup.team.user("reporter"))
    commits = client.get(f"{setup.url}/commits/master").text
    assert commits.count('class="badge ci ') == 1 and _badge("pending") in commits
    setup.ci.finish(setup.builds["rspec"].id, "failed")
    setup.ci.finish(setup.builds["lint"].id, "success")
    assert _badge("failed") in client.get(f"{setup.url}/commit/{setup.sha}").text
    newer = setup.ci.pipeline(setup.project, [job("again")], ref="other", sha=setup.sha)
    setup.ci.finish(setup.ci.builds(newer)["again"].id, "success")
    page = client.get(f"{setup.url}/commit/{setup.sha}").text
    assert _badge("success") in page and _badge("failed") not in page
    assert f'href="{setup.url}/commit/{setup.sha}/builds"' in page
    # Without read_build (public_builds off, a non-member of an internal project) the status shows, unlinked.
    with rt.db.transaction() as session:
        project = session.get(Project, setup.project.id)
        project.visibility_level, project.public_builds = INTERNAL, False
    outsider = browser_for(setup.team.user("outsider")).get(f"{setup.url}/commit/{setup.sha}").text
    assert f'<span {_badge("success")}' in outsider and "/commit/" + setup.sha + "/builds" not in outsider


def test_commits_page_asks_for_statuses_once(rt, setup, browser_for):
    client = browser_for(setup.team.user("reporter"))
    work = setup.work

    def count() -> int:
        with QueryCounter(rt) as counter:
            assert client.get(f"{setup.url}/commits/master").status_code == 200
        return counter.count

    few = count()
    for n in range(3):
        sha = work.commit(f"more {n}", {f"f{n}.txt": "x\n"})
        setup.ci.pipeline(setup.project, [job("t")], sha=sha)
    work.push()
    page = client.get(f"{setup.url}/commits/master").text
    assert page.count('class="badge ci pending"') == 4
    assert count() == few


def test_merge_request_page_shows_the_source_head_status(api, rt, setup, browser_for):
    work = setup.work
    work.git("checkout", "-q", "-b", "feature")
    head = work.commit("feature work", {"b.txt": "b\n"})
    work.push("feature")
    pipeline = setup.ci.pipeline(setup.project, [job("t")], ref="feature", sha=head)
    setup.ci.finish(setup.ci.builds(pipeline)["t"].id, "failed")
    body = {"source_branch": "feature", "target_branch": "master", "title": "Feature"}
    mr = api.as_(setup.team.user("developer")).post(f"/projects/{setup.project.id}/merge_requests", json=body).json()
    iid = api.as_(setup.team.user("developer")).get(f"/projects/{setup.project.id}/merge_requests/{mr['id']}").json()["iid"]
    page = browser_for(setup.team.user("reporter")).get(f"{setup.url}/merge_requests/{iid}").text
    box = page.split('id="merge-box"', 1)[1].split('class="body actions"', 1)[0]
    assert _badge("failed") in box


def test_an_external_status_shows_its_link_and_no_trace(api, rt, setup, browser_for):
    developer = setup.team.user("developer")
    posted = api.as_(developer).post(f"/projects/{setup.project.id}/statuses/{setup.sha}", json={
        "state": "running", "context": "jenkins", "target_url": 'https://ci.example.com/7?a=1&b="x"',
        "description": "<b>Building</b>"})  # fmt: skip
    assert posted.status_code == 201, posted.text
    path = f"{setup.url}/builds/{posted.json()['id']}"
    page = browser_for(setup.team.user("reporter")).get(path)
    assert page.status_code == 200 and "jenkins" in page.text and "an external service" in page.text
    assert 'href="https://ci.example.com/7?a=1&amp;b=&#34;x&#34;"' in page.text
    assert "&lt;b&gt;Building&lt;/b&gt;" in page.text and "<b>Building" not in page.text
    assert "build-trace" not in page.text and "data-follow" not in page.text
    own = browser_for(developer).get(path).text
    assert f'action="{path}/cancel"' in own and f'action="{path}/retry"' not in own
    stages = browser_for(setup.team.user("reporter")).get(f"{setup.url}/pipelines/{setup.pipeline}").text
    assert "external" in stages and f'{path}"' in stages  # its own stage, after the pipeline's own
    assert stages.index("external") > stages.index("rspec")
