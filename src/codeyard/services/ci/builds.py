"""Builds: their state changes (used by the runners' protocol and the user API alike) and the user
API's operations.

States (reference 9.1): pending -> running (`started`, after the runners' queue claimed the build);
pending|running -> success|failed|canceled (`finish`). Any other change is ignored. Only these
functions change a build's state, except the claim itself (services/ci/queue.py).

A finished build: `finished_at` set, its token forgotten (the runner's access ends), coverage read
from its trace, its pipeline's status derived again and the next stage created (pipelines.progress).
"""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.orm import Session

from ...db.models import Build, Project, is_id, utcnow
from ...db.models.ci import ACTIVE_STATES, CANCELED, FAILED, SUCCESS
from ...errors import Forbidden, NotFound
from . import coverage, pipelines, traces

NOT_RETRYABLE = "Build is not retryable"

FINISHING = (SUCCESS, FAILED, CANCELED)


def started(session: Session, rt, build: Build) -> None:
    """After the claim moved BUILD to running: the pipeline runs."""
    pipeline = pipelines.lock(session, build.pipeline_id)
    pipelines.refresh_status(session, pipeline)


def finish(session: Session, rt, build: Build, state: str) -> bool:
    """Move BUILD from pending or running to STATE (success, failed or canceled); whether it moved.

    The move is a conditional UPDATE, so a runner's report and a user's cancel racing for one
    build cannot both apply.
    """
    if state not in FINISHING:
        raise ValueError(f"not a final build state: {state}")
    pipeline = pipelines.lock(session, build.pipeline_id)
    now = utcnow()
    moved = session.execute(
        update(Build)
        .where(Build.id == build.id, Build.status.in_(ACTIVE_STATES))
        .values(status=state, finished_at=now, token_digest=None, updated_at=now)
        .execution_options(synchronize_session=False)
    ).rowcount
    session.refresh(build)
    if not moved:
        return False
    project = session.get(Project, build.project_id)
    if state != CANCELED and project.build_coverage_regex:
        build.coverage = coverage.extract(project.build_coverage_regex, traces.read(rt, build))
    pipelines.progress(session, pipeline, build)
    pipelines.refresh_status(session, pipeline)
    return True


# --- the user API ----------------------------------------------------------------------------------


def find(session: Session, project: Project, build_id: int) -> Build:
    """PROJECT's build BUILD_ID; 404 `404 Not Found` otherwise."""
    build = session.get(Build, build_id) if is_id(build_id) else None
    if build is None or build.project_id != project.id:
        raise NotFound()
    return build


def cancel(session: Session, rt, build: Build) -> Build:
    """Cancel a pending or running build; a finished one stays as it is."""
    finish(session, rt, build, CANCELED)
    return build


def retry(session: Session, rt, project: Project, actor, build: Build) -> Build:
    """A new pending build doing what BUILD did (in any state, as in GitLab 8); BUILD and any
    earlier retry of it stop counting for the pipeline."""
    if not project.builds_enabled or not build.commands:
        raise Forbidden(NOT_RETRYABLE)
    pipeline = pipelines.lock(session, build.pipeline_id)
    session.execute(
        update(Build)
        .where(Build.pipeline_id == pipeline.id, Build.name == build.name, Build.retried.is_(False))
        .values(retried=True)
        .execution_options(synchronize_session=False)
    )
    job = {
        "name": build.name, "stage": build.stage, "stage_idx": build.stage_idx, "when": build.when,
        "allow_failure": build.allow_failure, "commands": build.commands, "options": build.options,
        "variables": build.yaml_variables, "tags": build.tag_list,
    }  # fmt: skip
    fresh = pipelines.create_build(session, pipeline, job, actor.id if actor is not None else None)
    session.flush()
    session.refresh(build)
    pipelines.refresh_status(session, pipeline)
    return fresh
