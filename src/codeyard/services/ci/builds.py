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

from ...db.models import Build, Project, utcnow
from ...db.models.ci import ACTIVE_STATES, CANCELED, FAILED, SUCCESS
from . import coverage, pipelines, traces

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
