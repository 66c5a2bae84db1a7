"""Pipeline pages (one pipeline, and every pipeline of a commit: GitLab 8.6's commit builds page)
and the artifacts download of a build page: readable by whoever may read the project's builds, as
the build pages and the API; builds grouped by stage; a fixed number of queries."""

from __future__ import annotations

import pytest

from codeyard.db.models import Build, Pipeline
from codeyard.services.ci import artifacts
from tests.builds.conftest import job
from tests.support import ROLES, QueryCounter

from .test_build_pages import INTERNAL, PRIVATE, PUBLIC, _setup, expected

ZIP = b"PK\x05\x06" + b"\x00" * 18  # an empty zip archive


def _give_artifacts(rt, build_id: int, data: bytes = ZIP, name: str = "artifacts.zip") -> None:
    with rt.db.transaction() as session:
        build = session.get(Build, build_id)
        build.artifacts_file, build.artifacts_size = name, len(data)
        target = artifacts.path(rt, build)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


@pytest.fixture
def setup(rt, users, projects, admin, tmp_path):
    return _setup(rt, users, projects, admin, tmp_path)


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
@pytest.mark.parametrize("public_builds", [True, False])
def test_role_by_visibility(rt, users, projects, admin, tmp_path, browser_for, visibility, public_builds):
    s = _setup(rt, users, projects, admin, tmp_path, visibility, public_builds, prefix=f"p{visibility}{int(public_builds)}")
    build_id = s.builds["rspec"].id
    _give_artifacts(rt, build_id)
    paths = (f"{s.url}/pipelines/{s.pipeline}", f"{s.url}/commit/{s.sha}/builds",
             f"{s.url}/builds/{build_id}/artifacts/download")  # fmt: skip
    failures = []
    for role in ROLES:
        client = browser_for(s.team.user(role))
        want = expected(role, visibility, public_builds, False)
        for path in paths:
            response = client.get(path)
            if response.status_code != want:
                failures.append(f"{role} GET {path}: {response.status_code} (expected {want})")
            elif want == 200 and path.endswith("/download") and response.content != ZIP:
                failures.append(f"{role}: the artifacts' content")
    assert failures == []


def test_builds_are_grouped_by_stage_in_order_with_their_latest_builds(rt, setup, browser_for):
    ci, project = setup.ci, setup.project
    pipeline = ci.pipeline(project, [job("compile", "build", 0), job("lint", "build", 0, allow_failure=True),
                                     job("rspec", "test", 1), job("deploy", "deploy", 2)],
                           ref="feature", sha=setup.sha)  # fmt: skip
    first = ci.builds(pipeline)
    ci.finish(first["lint"].id, "failed")
    ci.finish(first["compile"].id, "success")  # the test stage starts
    client = browser_for(setup.team.user("developer"))
    retried = client.post(f"{setup.url}/builds/{first['compile'].id}/retry", token=client.form_token(setup.url))
    assert retried.status_code == 303
    latest = ci.builds(pipeline)
    page = client.get(f"{setup.url}/pipelines/{pipeline}").text
    stages = [part.split("</h4>", 1)[0] for part in page.split('<div class="stage">')[1:]]
    assert [stage.rsplit("</span>", 1)[1].strip() for stage in stages] == ["build", "test"]
    assert 'class="badge running">running</span> build' in stages[0] + "</h4>"  # compile again pending, lint failed
    assert f'/builds/{latest["compile"].id}"' in page and f'/builds/{first["compile"].id}"' not in page
    assert f'/builds/{latest["rspec"].id}"' in page and "allowed to fail" in page and "deploy" not in page
    assert f'class="badge {ci.status(pipeline)}">{ci.status(pipeline)}</span>' in page
    assert "for branch</span> <span class=\"mono\">feature</span>" in page
    # The commit's page shows both pipelines of the sha, newest first.
    both = client.get(f"{setup.url}/commit/{setup.sha}/builds").text
    assert both.index(f'id="pipeline-{pipeline}"') < both.index(f'id="pipeline-{setup.pipeline}"')
    assert f'/builds/{setup.builds["rspec"].id}"' in both and f'/builds/{latest["rspec"].id}"' in both


def test_pages_link_to_each_other(rt, setup, browser_for):
    client = browser_for(setup.team.user("reporter"))
    build_id = setup.builds["rspec"].id
    link = f'href="{setup.url}/pipelines/{setup.pipeline}"'
    assert link in client.get(f"{setup.url}/builds").text
    build_page = client.get(f"{setup.url}/builds/{build_id}").text
    assert link in build_page and "/artifacts/download" not in build_page
    for page in ("/commits/master", f"/commit/{setup.sha}"):
        assert f'href="{setup.url}/commit/{setup.sha}/builds" title="CI status"' in client.get(setup.url + page).text
    assert f'href="{setup.url}/builds/{build_id}"' in client.get(f"{setup.url}/pipelines/{setup.pipeline}").text


def test_the_artifacts_link_downloads_through_the_build_page(rt, setup, browser_for):
    build_id = setup.builds["rspec"].id
    client = browser_for(setup.team.user("reporter"))
    download = f"{setup.url}/builds/{build_id}/artifacts/download"
    assert client.get(download).status_code == 404  # no artifacts yet
    _give_artifacts(rt, build_id, b"PK" + b"\x01" * 2000, name='out "<b>".zip')
    page = client.get(f"{setup.url}/builds/{build_id}").text
    assert f'href="{download}"' in page and "/api/v3" not in page and "private_token" not in page
    assert "out &#34;&lt;b&gt;&#34;.zip" in page and "2.0 kB" in page
    got = client.get(download)
    assert got.status_code == 200 and got.content == b"PK" + b"\x01" * 2000
    assert got.headers["content-type"] == "application/octet-stream"
    assert got.headers["content-disposition"].startswith("attachment;")
    assert got.headers["x-content-type-options"] == "nosniff"
    other = setup.builds["lint"].id
    assert client.get(f"{setup.url}/builds/{other}/artifacts/download").status_code == 404
    assert client.get(f"{setup.url}/builds/999999/artifacts/download").status_code == 404


def test_bad_and_foreign_ids_are_not_found(rt, users, projects, admin, setup, tmp_path, browser_for):
    other = _setup(rt, users, projects, admin, tmp_path, prefix="other")
    client = browser_for(admin)
    for path in (f"/pipelines/{other.pipeline}", "/pipelines/abc", "/pipelines/99999999999999999999",
                 f"/builds/{other.builds['rspec'].id}/artifacts/download", "/commit/master/builds",
                 f"/commit/{setup.sha[:8]}/builds", f"/commit/{setup.sha.upper()}/builds"):  # fmt: skip
        assert client.get(setup.url + path).status_code == 404, path
    none = client.get(f"{setup.url}/commit/{'0' * 40}/builds")
    assert none.status_code == 200 and "No pipeline for this commit." in none.text


def test_hostile_names_are_escaped(rt, setup, browser_for):
    hostile = '<img src=x onerror="alert(1)">'
    with rt.db.transaction() as session:
        build = session.get(Build, setup.builds["rspec"].id)
        build.name, build.stage = hostile, hostile
        pipeline = session.get(Pipeline, setup.pipeline)
        pipeline.ref, pipeline.yaml_errors = hostile, hostile
    client = browser_for(setup.team.user("reporter"))
    for path in (f"/pipelines/{setup.pipeline}", f"/commit/{setup.sha}/builds"):
        text = client.get(setup.url + path).text
        assert "<img src=x" not in text and text.count("&lt;img src=x onerror=") >= 4, path


def test_a_fixed_number_of_queries_whatever_the_builds(rt, setup, browser_for):
    client = browser_for(setup.team.user("reporter"))

    def count(path: str) -> int:
        with QueryCounter(rt) as counter:
            assert client.get(setup.url + path).status_code == 200
        return counter.count

    one, every = count(f"/pipelines/{setup.pipeline}"), count(f"/commit/{setup.sha}/builds")
    for n in range(3):
        pipeline = setup.ci.pipeline(setup.project, [job(f"a{m}", f"s{m}", m) for m in range(4)], ref=f"b{n}", sha=setup.sha)
        for m in range(3):
            setup.ci.finish(setup.ci.builds(pipeline)[f"a{m}"].id, "success")
    assert count(f"/pipelines/{pipeline}") == one
    assert count(f"/commit/{setup.sha}/builds") == every
