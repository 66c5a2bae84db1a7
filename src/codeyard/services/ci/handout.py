"""Handing a build to a polling runner (`POST /ci/builds/register`), lean: every runner polls every
few seconds, so this path is a fixed handful of prepared statements on the thread's fast connection
(`Database.fast_write`), rows as tuples, no session.

On SQLite a claim is one short write transaction: the conditional UPDATE of the build (RETURNING what its
job shows; the queue's rules in services/ci/queue.py), the project's part of the job, the pipeline
set running, the builds of the earlier stages. When the project has build hooks the transaction is
rolled back and the caller claims in a session instead (`HOOKED`), so that the Build Hook is
enqueued in the claim's own transaction (services/ci/builds.started). On PostgreSQL the same is one
statement, committed on its own (`CLAIM_JOB`): each round trip to the server, BEGIN and COMMIT
included, cost more than the statements' work.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

from sqlalchemy import Integer, bindparam, exists, or_, select, true, update

from ...db.models import Build, Namespace, Pipeline, Project, utcnow
from ...db.models.base import UtcDateTime
from ...db.models.ci import RUNNING
from .. import credentials, webhooks
from . import queue
from .builds import BUILD_EVENTS

_builds, _pipelines, _projects = Build.__table__, Pipeline.__table__, Project.__table__
PIPELINE = bindparam("pipeline", type_=Integer)

JOB_BUILD = select(*queue.JOB_COLUMNS).where(_builds.c.id == bindparam("build", type_=Integer))
_namespaces = Namespace.__table__


def _project_columns(pipeline_id) -> tuple:
    """The project's part of a job, and the before sha of pipeline PIPELINE_ID (a parameter or a
    column); from projects joined to namespaces."""
    return (
        _projects.c.name,
        (_namespaces.c.path + "/" + _projects.c.path).label("path_with_namespace"),
        _projects.c.build_allow_git_fetch,
        _projects.c.build_timeout,
        select(_pipelines.c.before_sha).where(_pipelines.c.id == pipeline_id).scalar_subquery().label("before_sha"),
    )


# The project's part of a job, the pipeline's before sha, and whether build hooks must fire.
JOB_PROJECT = (
    select(*_project_columns(PIPELINE), exists().where(*webhooks.enabled_with(BUILD_EVENTS, _projects.c.id)).label("hooked"))
    .join_from(_projects, _namespaces, _namespaces.c.id == _projects.c.namespace_id)
    .where(_projects.c.id == bindparam("project", type_=Integer))
)
# A pipeline with a running build is running (Ci::Status); written only when that changes it.
CHANGES_PIPELINE = or_(_pipelines.c.status != RUNNING, _pipelines.c.finished_at.is_not(None))
PIPELINE_RUNNING = {"status": RUNNING, "finished_at": None, "updated_at": bindparam("now", type_=UtcDateTime)}
PIPELINE_RUNS = update(_pipelines).where(_pipelines.c.id == PIPELINE, CHANGES_PIPELINE).values(**PIPELINE_RUNNING)


def _claim_job_statement():
    """PostgreSQL: the claim, the pipeline set running and the job's project part in one statement
    (data-modifying CTEs), one row: `hooked`, then queue.JOB_COLUMNS (all NULL when another runner
    took the build), then the project's part. A build whose project has build hooks is left alone
    (`hooked` true): the caller claims it in a session."""
    project_of_build = select(_builds.c.project_id).where(_builds.c.id == bindparam("build", type_=Integer))
    hooked = select(
        exists().where(*webhooks.enabled_with(BUILD_EVENTS, project_of_build.scalar_subquery())).label("hooked")
    ).cte("hooked")
    claimed = queue.CLAIM[True].where(~select(hooked.c.hooked).scalar_subquery()).cte("claimed")
    running = (
        update(_pipelines)
        .where(_pipelines.c.id.in_(select(claimed.c.pipeline_id)), CHANGES_PIPELINE)
        .values(**PIPELINE_RUNNING)
        .cte("running")
    )
    project = _project_columns(claimed.c.pipeline_id)
    job = (
        select(*claimed.c, *(column.label(f"project_{column.key}") for column in project))
        .join_from(claimed, _projects, _projects.c.id == claimed.c.project_id)
        .join(_namespaces, _namespaces.c.id == _projects.c.namespace_id)
        .subquery("job")
    )
    return select(hooked.c.hooked, *job.c).select_from(hooked.outerjoin(job, true())).add_cte(running)


CLAIM_JOB = _claim_job_statement()
BUILD_ROW = namedtuple("BuildRow", [column.key for column in queue.JOB_COLUMNS])
PROJECT_ROW = namedtuple("ProjectRow", [column.key for column in _project_columns(PIPELINE)])

# The latest builds of the earlier stages: what a job depends on.
SUMMARY = ("id", "ref", "tag", "sha", "status", "name", "stage", "project_id", "artifacts_file", "artifacts_size")
DEPENDENCIES = (
    select(*(_builds.c[name] for name in SUMMARY))
    .where(
        _builds.c.pipeline_id == PIPELINE,
        _builds.c.stage_idx < bindparam("stage_idx", type_=Integer),
        _builds.c.retried.is_(False),
    )
    .order_by(_builds.c.stage_idx, _builds.c.id)
)


@dataclass(frozen=True)
class Job:
    build: tuple  # queue.JOB_COLUMNS
    token: str  # the build token, shown to the runner once
    project: tuple  # JOB_PROJECT
    dependencies: list  # DEPENDENCIES


HOOKED = "hooked"  # next_job's answer when the build's project has build hooks


class _Hooked(Exception):
    pass


def next_job(db, runner) -> Job | str | None:
    """Claim the oldest build RUNNER may take and read its job, in one short transaction per
    candidate tried; None when there is none, HOOKED when the claim must run in a session."""
    if not db.is_sqlite:
        return _next_job_in_one_statement(db, runner)
    claim = queue.CLAIM[False]
    for build_id in queue.candidates(db, runner):
        token = credentials.new_secret()
        try:
            with db.fast_write() as transaction:
                build = transaction.first(claim, queue.claim_params(build_id, runner.id, token))
                if build is None:
                    continue  # another runner took it: the next candidate
                project = transaction.first(JOB_PROJECT, {"project": build.project_id, "pipeline": build.pipeline_id})
                if project.hooked:
                    raise _Hooked()  # rolled back
                transaction.rowcount(PIPELINE_RUNS, {"pipeline": build.pipeline_id, "now": utcnow()})
                return Job(build, token, project, _dependencies(transaction.all, build))
        except _Hooked:
            return HOOKED
    return None


def _next_job_in_one_statement(db, runner) -> Job | str | None:
    """next_job on PostgreSQL: CLAIM_JOB per candidate, committed at once (the autocommit fast
    connection), then the dependencies read."""
    width = len(BUILD_ROW._fields)
    for build_id in queue.candidates(db, runner):
        token = credentials.new_secret()
        row = db.fast_first(CLAIM_JOB, queue.claim_params(build_id, runner.id, token))
        if row.hooked:
            return HOOKED
        if row[1] is None:
            continue  # another runner took it: the next candidate
        build = BUILD_ROW._make(row[1 : 1 + width])
        project = PROJECT_ROW._make(row[1 + width :])
        return Job(build, token, project, _dependencies(db.fast_all, build))
    return None


def job_in(session, build_id: int, token: str) -> Job:
    """The job of build BUILD_ID read in SESSION's transaction (a claim made in a session; the
    answer to an artifacts upload)."""
    build = session.execute(JOB_BUILD, {"build": build_id}).one()
    project = session.execute(JOB_PROJECT, {"project": build.project_id, "pipeline": build.pipeline_id}).first()
    return Job(build, token, project, _dependencies(lambda s, p: session.execute(s, p).all(), build))


def _dependencies(read_all, build) -> list:
    if build.stage_idx > 0:  # nothing comes before the first stage
        return read_all(DEPENDENCIES, {"pipeline": build.pipeline_id, "stage_idx": build.stage_idx})
    return []
