"""Build state changes (reference 9.1, 12.3, 12.6): finish, coverage, pipeline status, stages."""

from __future__ import annotations

import pytest

from codeyard.db.models import Build, Project, User
from codeyard.services.ci import builds, pipelines, traces

from .conftest import job


@pytest.fixture
def project(projects, alice):
    return projects.create(alice)


def test_a_new_pipeline_is_pending_with_its_first_stage(ci, project):
    pipeline_id = ci.pipeline(project, [job("compile", "build", 0), job("rspec", "test", 1)])
    found = ci.builds(pipeline_id)
    assert list(found) == ["compile"]
    assert found["compile"].status == "pending"
    assert ci.status(pipeline_id) == "pending"


def test_running_then_success_sets_the_times_clears_the_token_and_runs_the_next_stage(ci, project):
    pipeline_id = ci.pipeline(project, [job("compile", "build", 0), job("rspec", "test", 1), job("lint", "test", 1)])
    compile_id = ci.builds(pipeline_id)["compile"].id
    ci.run(compile_id, token_digest="d" * 64)
    assert ci.status(pipeline_id) == "running"
    assert ci.finish(compile_id, "success") is True
    found = ci.builds(pipeline_id)
    assert found["compile"].status == "success"
    assert found["compile"].finished_at is not None and found["compile"].token_digest is None
    assert found["compile"].started_at <= found["compile"].finished_at
    assert {found["rspec"].status, found["lint"].status} == {"pending"}
    assert found["rspec"].stage == "test" and found["rspec"].stage_idx == 1
    assert ci.status(pipeline_id) == "running"


def test_a_finished_build_does_not_move_again(ci, project):
    pipeline_id = ci.pipeline(project, [job("rspec")])
    build_id = ci.builds(pipeline_id)["rspec"].id
    ci.run(build_id)
    assert ci.finish(build_id, "failed") is True
    finished_at = ci.builds(pipeline_id)["rspec"].finished_at
    for state in ("success", "canceled", "failed"):
        assert ci.finish(build_id, state) is False
    after = ci.builds(pipeline_id)["rspec"]
    assert after.status == "failed" and after.finished_at == finished_at
    assert ci.status(pipeline_id) == "failed"


def test_a_pending_build_can_be_canceled_or_finished(ci, project):
    pipeline_id = ci.pipeline(project, [job("a"), job("b")])
    found = ci.builds(pipeline_id)
    assert ci.finish(found["a"].id, "canceled") is True
    assert ci.status(pipeline_id) == "pending" or ci.status(pipeline_id) == "running"
    assert ci.finish(found["b"].id, "canceled") is True
    assert ci.status(pipeline_id) == "canceled"


def test_finish_refuses_a_state_that_is_not_final(rt, ci, project):
    pipeline_id = ci.pipeline(project, [job("a")])
    with pytest.raises(ValueError), rt.db.transaction() as session:
        builds.finish(session, rt, session.get(Build, ci.builds(pipeline_id)["a"].id), "running")


def test_a_failure_stops_later_on_success_stages_and_starts_on_failure_jobs(ci, project):
    jobs = [job("compile", "build", 0), job("rspec", "test", 1), job("cleanup", "deploy", 2, when="on_failure"),
            job("notify", "deploy", 2, when="always")]  # fmt: skip
    pipeline_id = ci.pipeline(project, jobs)
    ci.finish(ci.builds(pipeline_id)["compile"].id, "failed")
    found = ci.builds(pipeline_id)
    assert set(found) == {"compile", "cleanup", "notify"}
    assert ci.status(pipeline_id) == "running"
    ci.finish(found["cleanup"].id, "success")
    ci.finish(found["notify"].id, "success")
    assert ci.status(pipeline_id) == "failed"


def test_allowed_failures_count_as_success(ci, project):
    pipeline_id = ci.pipeline(project, [job("flaky", "test", 0, allow_failure=True), job("deploy", "deploy", 1)])
    ci.finish(ci.builds(pipeline_id)["flaky"].id, "failed")
    found = ci.builds(pipeline_id)
    assert found["deploy"].status == "pending"
    ci.finish(found["deploy"].id, "success")
    assert ci.status(pipeline_id) == "success"


def test_the_next_stage_waits_for_every_build_of_the_stage(ci, project):
    pipeline_id = ci.pipeline(project, [job("a", "test", 0), job("b", "test", 0), job("deploy", "deploy", 1)])
    found = ci.builds(pipeline_id)
    ci.finish(found["a"].id, "success")
    assert "deploy" not in ci.builds(pipeline_id)
    ci.finish(found["b"].id, "success")
    assert ci.builds(pipeline_id)["deploy"].status == "pending"


def test_a_canceled_stage_creates_nothing(ci, project):
    pipeline_id = ci.pipeline(project, [job("a", "test", 0), job("always", "deploy", 1, when="always")])
    ci.finish(ci.builds(pipeline_id)["a"].id, "canceled")
    assert set(ci.builds(pipeline_id)) == {"a"}
    assert ci.status(pipeline_id) == "canceled"


def test_a_stage_without_a_matching_job_is_passed_over(ci, project):
    jobs = [job("a", "build", 0), job("only_on_failure", "test", 1, when="on_failure"), job("deploy", "deploy", 2)]
    pipeline_id = ci.pipeline(project, jobs)
    ci.finish(ci.builds(pipeline_id)["a"].id, "success")
    assert set(ci.builds(pipeline_id)) == {"a", "deploy"}


def test_a_superseded_build_does_not_progress(rt, ci, project):
    pipeline_id = ci.pipeline(project, [job("a", "test", 0), job("deploy", "deploy", 1)])
    old_id = ci.builds(pipeline_id)["a"].id
    with rt.db.transaction() as session:
        session.get(Build, old_id).retried = True
        pipeline = pipelines.lock(session, pipeline_id)
        pipelines.create_build(session, pipeline, job("a", "test", 0), None)
    ci.finish(old_id, "success")
    assert set(ci.builds(pipeline_id)) == {"a"}
    assert ci.status(pipeline_id) == "pending"


def test_coverage_comes_from_the_trace_with_the_projects_regex(rt, ci, project):
    with rt.db.transaction() as session:
        session.get(Project, project.id).build_coverage_regex = r"\(\d+.\d+\%\) covered"
    pipeline_id = ci.pipeline(project, [job("a"), job("b")])
    found = ci.builds(pipeline_id)
    with rt.db.transaction() as session:
        traces.replace(rt, session.get(Build, found["a"].id), b"(10.00%) covered\nlater (97.50%) covered\n")
    ci.finish(found["a"].id, "success")
    ci.finish(found["b"].id, "success")
    after = ci.builds(pipeline_id)
    assert after["a"].coverage == 97.5
    assert after["b"].coverage is None


def test_derived_status_rules():
    def b(status, allow_failure=False):
        return Build(status=status, allow_failure=allow_failure)

    assert pipelines.derived_status([]) == "skipped"
    assert pipelines.derived_status([b("success"), b("failed", True), b("canceled", True)]) == "success"
    assert pipelines.derived_status([b("pending"), b("pending")]) == "pending"
    assert pipelines.derived_status([b("pending"), b("success")]) == "running"
    assert pipelines.derived_status([b("running"), b("failed")]) == "running"
    assert pipelines.derived_status([b("canceled"), b("canceled")]) == "canceled"
    assert pipelines.derived_status([b("canceled"), b("success")]) == "failed"
    assert pipelines.derived_status([b("failed"), b("success")]) == "failed"


def test_retry_makes_a_new_pending_build_and_supersedes_the_old_one(rt, ci, project, alice):
    pipeline_id = ci.pipeline(project, [job("a", "test", 0, tags=["docker"]), job("deploy", "deploy", 1)])
    old_id = ci.builds(pipeline_id)["a"].id
    ci.run(old_id)
    ci.finish(old_id, "failed")
    assert ci.status(pipeline_id) == "failed"
    with rt.db.transaction() as session:
        project_row = session.get(Project, project.id)
        fresh = builds.retry(session, rt, project_row, session.get(User, alice.id), session.get(Build, old_id))
        fresh_id = fresh.id
    every = {b.id: b for b in ci.all_builds(pipeline_id)}
    assert fresh_id > old_id
    assert every[old_id].status == "failed" and every[old_id].retried
    new = every[fresh_id]
    assert (new.status, new.name, new.stage, new.tag_list, new.commands, new.retried) == ("pending", "a", "test", ["docker"], "echo a", False)
    assert new.started_at is None and new.finished_at is None and new.user_id == alice.id
    assert ci.status(pipeline_id) == "pending"
    ci.finish(fresh_id, "success")
    assert ci.builds(pipeline_id)["deploy"].status == "pending"
    assert ci.status(pipeline_id) == "running"


def test_a_build_without_commands_or_with_builds_disabled_is_not_retryable(rt, ci, project):
    from codeyard.errors import Forbidden

    pipeline_id = ci.pipeline(project, [job("a")])
    build_id = ci.builds(pipeline_id)["a"].id
    with rt.db.transaction() as session:
        session.get(Project, project.id).builds_enabled = False
    with pytest.raises(Forbidden) as caught, rt.db.transaction() as session:
        builds.retry(session, rt, session.get(Project, project.id), None, session.get(Build, build_id))
    assert str(caught.value.message) == "403 Forbidden - Build is not retryable"
    for blank in ("", "\n"):  # "\n": no before_script and `script: []` (GitLab 8.6: not `present?`)
        with rt.db.transaction() as session:
            session.get(Project, project.id).builds_enabled = True
            session.get(Build, build_id).commands = blank
        with pytest.raises(Forbidden), rt.db.transaction() as session:
            builds.retry(session, rt, session.get(Project, project.id), None, session.get(Build, build_id))
    assert len(ci.all_builds(pipeline_id)) == 1


def test_cancel_applies_to_active_builds_only(rt, ci, project):
    pipeline_id = ci.pipeline(project, [job("a"), job("b")])
    found = ci.builds(pipeline_id)
    ci.finish(found["b"].id, "success")
    with rt.db.transaction() as session:
        assert builds.cancel(session, rt, session.get(Build, found["a"].id)).status == "canceled"
        assert builds.cancel(session, rt, session.get(Build, found["b"].id)).status == "success"


def _build_hook_bodies(rt) -> list[dict]:
    import orjson

    from codeyard.db.models import Job

    with rt.db.transaction(write=False) as session:
        jobs = session.query(Job).order_by(Job.id).all()
        return [orjson.loads(j.payload["body"]) for j in jobs if j.payload["event"] == "Build Hook"]


def test_build_hooks_fire_on_running_and_on_finish(rt, ci, project, alice):
    from codeyard.db.models import ProjectHook

    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://example.com/b", build_events=True, push_events=False))
        session.add(ProjectHook(project_id=project.id, url="http://example.com/p", push_events=True))
    pipeline_id = ci.pipeline(project, [job("rspec"), job("deploy", "deploy", 1)], user=alice)
    assert _build_hook_bodies(rt) == []  # not on creation
    build_id = ci.builds(pipeline_id)["rspec"].id
    ci.run(build_id)
    ci.finish(build_id, "success")
    running, finished = _build_hook_bodies(rt)
    assert running["object_kind"] == "build" and running["build_status"] == "running"
    assert running["build_id"] == build_id and running["build_name"] == "rspec" and running["build_stage"] == "test"
    assert running["build_finished_at"] is None and running["build_duration"] is None
    assert running["before_sha"] == "0" * 40 and running["sha"] == "a" * 40 and running["ref"] == "master"
    assert running["tag"] is False and running["build_allow_failure"] is False
    assert running["project_id"] == project.id and running["project_name"] == f"User alice / {project.name}"
    assert running["user"] == {"id": alice.id, "name": alice.name, "email": alice.email}
    assert running["commit"]["id"] == pipeline_id and running["commit"]["status"] == "running"
    assert running["commit"]["message"] is None  # the sha is not in the repository
    assert set(running["repository"]) == {"name", "url", "description", "homepage", "git_http_url", "git_ssh_url", "visibility_level"}
    assert finished["build_status"] == "success" and finished["build_duration"] >= 0
    assert finished["build_finished_at"] is not None
    # The first stage's success created the next stage: the pipeline still runs.
    assert finished["commit"]["status"] == "running" and finished["commit"]["started_at"] is not None
    # A transition that does not apply fires nothing.
    ci.finish(build_id, "failed")
    assert len(_build_hook_bodies(rt)) == 2


def test_no_build_hook_without_the_flag(rt, ci, project):
    from codeyard.db.models import ProjectHook

    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://example.com/p", push_events=True, build_events=False))
    pipeline_id = ci.pipeline(project, [job("rspec")])
    ci.finish(ci.builds(pipeline_id)["rspec"].id, "canceled")
    assert _build_hook_bodies(rt) == []


def test_builds_of_one_stage_finishing_at_once_start_the_next_stage_once(rt, ci, project):
    import threading

    jobs = [job(f"t{n}", "test", 0) for n in range(4)] + [job("deploy", "deploy", 1)]
    for _round in range(3):
        pipeline_id = ci.pipeline(project, jobs, sha=f"{_round}" * 40)
        ids = [b.id for b in ci.builds(pipeline_id).values()]
        barrier = threading.Barrier(len(ids))
        errors = []

        def finish(build_id, barrier=barrier, errors=errors):
            try:
                barrier.wait()
                ci.finish(build_id, "success")
            except Exception as error:
                errors.append(error)

        threads = [threading.Thread(target=finish, args=(build_id,)) for build_id in ids]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert [b.name for b in ci.all_builds(pipeline_id)].count("deploy") == 1
        assert ci.status(pipeline_id) == "running"
