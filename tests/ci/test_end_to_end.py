"""Builds really run: push a .gitlab-ci.yml over HTTP to a live server, a `codeyard runner run`
process takes the builds, runs them with bash and reports back; everything is checked through
the API (issue 13, "How it is checked")."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from codeyard.db.models import Project
from codeyard.jobs.worker import Worker
from codeyard.runner import config as runner_config

from .conftest import FINISHED, wait_for

TWO_STAGES = """\
stages: [build, test]
variables:
  GREETING: hello
compile:
  stage: build
  script:
    - echo "$GREETING from $CI_BUILD_NAME on $CI_BUILD_REF_NAME at $CI_BUILD_REF"
    - test -f README.md
    - mkdir -p out/deep && echo "built by $CI_BUILD_ID" > out/deep/result.txt
  artifacts:
    paths: [out/]
lint:
  stage: build
  script:
    - sleep 1
check:
  stage: test
  script:
    - cat out/deep/result.txt
    - grep -q "built by" out/deep/result.txt
"""


def builds_of(api, project) -> list[dict]:
    response = api.get(f"/projects/{project.id}/builds")
    assert response.status_code == 200, response.text
    return response.json()


def finished(api, project, count: int):
    """The project's builds once there are COUNT and all have finished."""
    builds = builds_of(api, project)
    return builds if len(builds) == count and all(b["status"] in FINISHED for b in builds) else None


def trace_of(api, project, build_id: int) -> str:
    response = api.get(f"/projects/{project.id}/builds/{build_id}/trace")
    assert response.status_code == 200
    return response.text


@pytest.mark.both_backends
def test_two_stages_run_in_order_pass_artifacts_and_keep_their_traces(live, runner, pusher, project, owner):
    sha = pusher.commit({"README.md": "hello\n", ".gitlab-ci.yml": TWO_STAGES}, "add CI")
    pusher.push()
    api = live.api.as_(owner)
    builds = wait_for(lambda: finished(api, project, 3), "both stages to finish", runner)
    by_name = {b["name"]: b for b in builds}
    compile_, lint, check = by_name["compile"], by_name["lint"], by_name["check"]
    assert (compile_["stage"], lint["stage"], check["stage"]) == ("build", "build", "test")
    assert {b["status"] for b in builds} == {"success"}, runner.log()
    assert max(compile_["finished_at"], lint["finished_at"]) <= check["started_at"]
    # --concurrent 2: the two builds of the first stage ran at the same time.
    assert lint["started_at"] < compile_["finished_at"] and compile_["started_at"] < lint["finished_at"]
    first = trace_of(api, project, compile_["id"])
    assert f"hello from compile on master at {sha}" in first
    assert "$ test -f README.md" in first and "Build succeeded" in first
    assert "Uploading artifacts (1 files)" in first
    second = trace_of(api, project, check["id"])
    assert f"\nbuilt by {compile_['id']}\n" in second
    assert f"Downloading artifacts for compile ({compile_['id']})" in second
    commit = api.get(f"/projects/{project.id}/repository/commits/{sha}")
    assert commit.json()["status"] == "success"
    # No credential reaches a trace or the runner's log.
    token = runner_config.load(runner.config).token
    for text in (first, second, trace_of(api, project, lint["id"]), runner.log()):
        assert token not in text and "gitlab-ci-token:" not in text
    # Registered and run from a checkout, the runner kept its secret and its builds out of it.
    assert stat.S_IMODE(runner.config.stat().st_mode) == 0o600
    assert stat.S_IMODE(runner.config.parent.stat().st_mode) == 0o700
    assert (runner.config.parent / "builds").is_dir() and list(runner.checkout.iterdir()) == []


def test_a_failing_job_stops_later_stages(live, runner, pusher, project, owner):
    ci = """\
stages: [build, test]
broken:
  stage: build
  script:
    - echo "first line"
    - "false"
    - echo "not reached"
later:
  stage: test
  script: [echo later]
"""
    sha = pusher.commit({".gitlab-ci.yml": ci}, "broken CI")
    pusher.push()
    api = live.api.as_(owner)
    [broken] = wait_for(lambda: finished(api, project, 1), "the failing build", runner)
    assert broken["name"] == "broken" and broken["status"] == "failed"
    trace = trace_of(api, project, broken["id"])
    assert "\nfirst line\n" in trace and "$ false" in trace and "ERROR: Build failed: exit code 1" in trace
    assert "\nnot reached\n" not in trace
    time.sleep(1.0)  # room for a wrongly created next stage to appear
    assert [b["name"] for b in builds_of(api, project)] == ["broken"]
    assert api.get(f"/projects/{project.id}/repository/commits/{sha}").json()["status"] == "failed"


def _processes_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_cancel_stops_a_running_job(live, runner, pusher, project, owner):
    marker = f"sleep {1000 + project.id % 1000}.5"
    pusher.commit({".gitlab-ci.yml": f'slow:\n  script:\n    - echo "sleeping now"\n    - {marker}\n    - echo "woke up"\n'}, "slow")
    pusher.push()
    api = live.api.as_(owner)

    def sleeping():
        builds = builds_of(api, project)
        return builds and builds[0]["status"] == "running" and "sleeping now" in trace_of(api, project, builds[0]["id"]) and builds[0]

    build = wait_for(sleeping, "the job to start sleeping", runner)
    assert _processes_running(marker)
    canceled = api.post(f"/projects/{project.id}/builds/{build['id']}/cancel")
    assert canceled.status_code == 201 and canceled.json()["status"] == "canceled"
    wait_for(lambda: "was canceled on the server; stopped" in runner.log(), "the runner to stop the job", runner, timeout=20)
    wait_for(lambda: not _processes_running(marker), "the job's processes to end", runner, timeout=10)
    assert builds_of(api, project)[0]["status"] == "canceled"
    assert "woke up" not in trace_of(api, project, build["id"])


def test_retry_runs_the_build_again(live, runner, pusher, project, owner):
    pusher.commit({".gitlab-ci.yml": 'job:\n  script:\n    - echo "run $CI_BUILD_ID"\n'}, "one job")
    pusher.push()
    api = live.api.as_(owner)
    [first] = wait_for(lambda: finished(api, project, 1), "the first run", runner)
    assert first["status"] == "success"
    retried = api.post(f"/projects/{project.id}/builds/{first['id']}/retry")
    assert retried.status_code == 201 and retried.json()["status"] == "pending" and retried.json()["id"] != first["id"]
    again = wait_for(lambda: finished(api, project, 2), "the second run", runner)
    second = next(b for b in again if b["id"] == retried.json()["id"])
    assert second["status"] == "success"
    assert f"\nrun {second['id']}\n" in trace_of(api, project, second["id"])
    assert f"\nrun {first['id']}\n" in trace_of(api, project, first["id"])


@pytest.mark.both_backends
def test_merge_when_build_succeeds_merges_after_the_build_passed(live, rt, runner, pusher, git, project, owner):
    ci = "test:\n  script:\n    - sleep 1\n    - test -f feature.txt || test \"$CI_BUILD_REF_NAME\" = master\n"
    pusher.commit({"README.md": "hello\n", ".gitlab-ci.yml": ci}, "CI on master")
    pusher.push("master")
    git.run("checkout", "-q", "-b", "feature", cwd=pusher.work)
    feature_sha = pusher.commit({"feature.txt": "new\n"}, "a feature")
    pusher.push("feature")
    api = live.api.as_(owner)
    created = api.post(f"/projects/{project.id}/merge_requests",
                       json={"source_branch": "feature", "target_branch": "master", "title": "Feature"})  # fmt: skip
    assert created.status_code in (200, 201), created.text
    request = created.json()
    marked = api.put(f"/projects/{project.id}/merge_requests/{request['id']}/merge", json={"merged_when_build_succeeds": True})
    assert marked.status_code == 200, marked.text
    assert marked.json()["state"] == "opened" and marked.json()["merge_when_build_succeeds"] is True

    builds = wait_for(lambda: finished(api, project, 2), "the builds of master and feature", runner)
    assert {b["ref"]: b["status"] for b in builds} == {"master": "success", "feature": "success"}

    def merged():
        Worker(rt, backoff=0).run_until_idle()
        return api.get(f"/projects/{project.id}/merge_requests/{request['id']}").json()["state"] == "merged"

    wait_for(merged, "the merge request to be merged", runner, timeout=30)
    master = api.get(f"/projects/{project.id}/repository/branches/master").json()["commit"]["id"]
    git.run("fetch", "-q", pusher.url, "master", cwd=pusher.work)
    assert git.run("rev-parse", "FETCH_HEAD", cwd=pusher.work).stdout.strip() == master
    assert git.run("merge-base", "--is-ancestor", feature_sha, master, cwd=pusher.work, check=False).returncode == 0


def test_the_project_timeout_ends_a_build_and_once_exits_after_one_build(live, rt, start_runner, pusher, project, owner):
    with rt.db.transaction() as session:
        session.get(Project, project.id).build_timeout = 1
    once = start_runner("--once")
    pusher.commit({".gitlab-ci.yml": "forever:\n  script:\n    - echo started\n    - sleep 30\n"}, "too slow")
    pusher.push()
    api = live.api.as_(owner)
    [build] = wait_for(lambda: finished(api, project, 1), "the build to time out", once, timeout=30)
    assert build["status"] == "failed"
    assert "ERROR: Build failed: execution took longer than 1 seconds" in trace_of(api, project, build["id"])
    assert once.process.wait(timeout=20) == 0
