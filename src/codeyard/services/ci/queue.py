"""The runners' queue: hand the oldest pending build a runner may take to that runner, once.

Candidates come from the partial index `ix_ci_builds_queue` (builds that are pending and not handed
out), in id order, a bounded batch at a time, joined to the projects the runner serves: its own
(ci_runner_projects) for a specific runner; for a shared runner every project with builds and
shared runners enabled (and nothing when the instance turned shared runners off). A build fits
when its tags are a subset of the runner's. The candidates are read outside the write transaction;
the claim itself is one conditional UPDATE (`... WHERE id = ? AND status = 'pending' AND runner_id
IS NULL`) in it, and its row count decides: on PostgreSQL a concurrent claim of the same row waits
for the first to commit and then matches nothing; on SQLite writers are serialised. A lost race
moves on to the next candidate, so two runners never get one build and a runner never waits for
another's build.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, bindparam, select, text, true, update
from sqlalchemy.orm import Session

from ...db.models import ApplicationSetting, Build, Project, RunnerProject, utcnow
from ...db.models.ci import PENDING, RUNNING
from .. import credentials
from .. import settings as settings_service

BATCH = 32

_builds = Build.__table__
_projects = Project.__table__
_assigned = RunnerProject.__table__
# Spelled as the index's own predicate (literals, not parameters), so that SQLite's planner sees
# that the partial index covers the query.
QUEUED = text("ci_builds.status = 'pending' AND ci_builds.runner_id IS NULL")


def _candidates(shared: bool):
    query = select(_builds.c.id, _builds.c.tag_list).where(QUEUED, _builds.c.id > bindparam("after"))
    if shared:
        query = query.join(_projects, _projects.c.id == _builds.c.project_id).where(
            _projects.c.builds_enabled == true(), _projects.c.shared_runners_enabled == true()
        )
    else:
        query = (
            query.join(_assigned, and_(_assigned.c.project_id == _builds.c.project_id, _assigned.c.runner_id == bindparam("runner")))
            .join(_projects, _projects.c.id == _builds.c.project_id)
            .where(_projects.c.builds_enabled == true())
        )
    return query.order_by(_builds.c.id).limit(BATCH)


SHARED_CANDIDATES = _candidates(shared=True)
SPECIFIC_CANDIDATES = _candidates(shared=False)
SHARED_ENABLED = select(ApplicationSetting.__table__.c.shared_runners_enabled).where(
    ApplicationSetting.__table__.c.id == settings_service.SETTINGS_ID
)


def fits(build_tags, runner_tags) -> bool:
    """A build may go to a runner carrying all its tags (an untagged build to any runner)."""
    return set(build_tags or ()) <= set(runner_tags or ())


@dataclass(frozen=True)
class Claimed:
    build: Build
    token: str  # the build token, shown to the runner once


def candidates(db, runner, after: int):
    """A batch of (id, tag_list) of queued builds RUNNER may take, with ids above AFTER."""
    with db.session(write=False) as session:
        if runner.is_shared:
            enabled = session.execute(SHARED_ENABLED).scalar()
            if enabled is False:
                return []
            return session.execute(SHARED_CANDIDATES, {"after": after}).all()
        return session.execute(SPECIFIC_CANDIDATES, {"after": after, "runner": runner.id}).all()


def claim(session: Session, db, runner) -> Claimed | None:
    """Move the oldest build RUNNER may take to running and assign it; None when there is none.

    SESSION is the request's write transaction; the build's token is new and only its digest kept.
    """
    after = 0
    while True:
        batch = candidates(db, runner, after)
        for build_id, tags in batch:
            if not fits(tags, runner.tag_list):
                continue
            token = credentials.new_secret()
            if _take(session, build_id, runner.id, token):
                return Claimed(session.get(Build, build_id, populate_existing=True), token)
        if len(batch) < BATCH:
            return None
        after = batch[-1][0]


def _take(session: Session, build_id: int, runner_id: int, token: str) -> bool:
    result = session.execute(
        update(Build)
        .where(Build.id == build_id, Build.status == PENDING, Build.runner_id.is_(None))
        .values(status=RUNNING, runner_id=runner_id, token_digest=credentials.digest(token), started_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


# --- what the runner is told ----------------------------------------------------------------------


@dataclass(frozen=True)
class JobParts:
    project: Project
    before_sha: str | None
    yaml_variables: list[tuple[str, str]]
    dependencies: list[Build]


def job_parts(session: Session, build: Build) -> JobParts:
    """What a Runner job is made of beside the build: its project, the pipeline's before sha, the
    YAML variables as pairs, and the latest builds of the earlier stages of its pipeline."""
    project = session.get(Project, build.project_id)
    dependencies = session.scalars(
        select(Build)
        .where(Build.pipeline_id == build.pipeline_id, Build.stage_idx < build.stage_idx, Build.retried.is_(False))
        .order_by(Build.stage_idx, Build.id)
    ).all()
    return JobParts(project, build.pipeline.before_sha, variable_pairs(build.yaml_variables), list(dependencies))


def variable_pairs(stored) -> list[tuple[str, str]]:
    """YAML variables as (key, value) pairs, from a map, a list of {key, value} or of pairs."""
    if isinstance(stored, dict):
        items = list(stored.items())
    else:
        items = []
        for item in stored or ():
            if isinstance(item, dict):
                items.append((item.get("key", item.get("name")), item.get("value")))
            elif isinstance(item, list | tuple) and len(item) == 2:
                items.append((item[0], item[1]))
    return [(str(key), "" if value is None else str(value)) for key, value in items if key is not None]


# --- the build behind a build token ---------------------------------------------------------------


def running_build(session: Session, build_id: int, token) -> Build | None:
    """Build BUILD_ID when TOKEN is its token: it has one only while it runs."""
    if not isinstance(token, str) or not token:
        return None
    build = session.get(Build, build_id)
    if build is None or build.token_digest is None or build.status != RUNNING:
        return None
    return build if build.token_digest == credentials.digest(token) else None


def build_for_token(session: Session, token) -> Build | None:
    """The running build TOKEN belongs to."""
    if not isinstance(token, str) or not token:
        return None
    build = session.scalar(select(Build).where(Build.token_digest == credentials.digest(token)))
    return build if build is not None and build.status == RUNNING else None
