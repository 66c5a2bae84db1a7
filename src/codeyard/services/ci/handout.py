"""Handing a build to a polling runner (`POST /ci/builds/register`), lean: every runner polls every
few seconds, so this path is a fixed handful of prepared statements on the thread's fast connection
(`Database.fast_write`), rows as tuples, no session.

A claim is one short write transaction: the conditional UPDATE of the build (RETURNING what its
job shows; the queue's rules in services/ci/queue.py), the project's part of the job, the pipeline
set running, the builds of the earlier stages. When the project has build hooks the transaction is
rolled back and the caller claims in a session instead (`HOOKED`), so that the Build Hook is
enqueued in the claim's own transaction (services/ci/builds.started).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Integer, bindparam, exists, or_, select, update

from ...db.models import Build, Namespace, Pipeline, Project, utcnow
from ...db.models.base import UtcDateTime
from ...db.models.ci import RUNNING
from .. import credentials, webhooks
from . import queue
from .builds import BUILD_EVENTS

_builds, _pipelines, _projects = Build.__table__, Pipeline.__table__, Project.__table__
PIPELINE = bindparam("pipeline", type_=Integer)

JOB_BUILD = select(*queue.JOB_COLUMNS).where(_builds.c.id == bindparam("build", type_=Integer))
# The project's part of a job, the pipeline's before sha, and whether build hooks must fire.
JOB_PROJECT = (
    select(
        _projects.c.name,
        (Namespace.__table__.c.path + "/" + _projects.c.path).label("path_with_namespace"),
        _projects.c.build_allow_git_fetch,
        _projects.c.build_timeout,
        select(_pipelines.c.before_sha).where(_pipelines.c.id == PIPELINE).scalar_subquery().label("before_sha"),
        exists().where(*webhooks.enabled_with(BUILD_EVENTS, _projects.c.id)).label("hooked"),
    )
    .join_from(_projects, Namespace.__table__, Namespace.__table__.c.id == _projects.c.namespace_id)
    .where(_projects.c.id == bindparam("project", type_=Integer))
)
# A pipeline with a running build is running (Ci::Status); written only when that changes it.
PIPELINE_RUNS = (
    update(_pipelines)
    .where(_pipelines.c.id == PIPELINE, or_(_pipelines.c.status != RUNNING, _pipelines.c.finished_at.is_not(None)))
    .values(status=RUNNING, finished_at=None, updated_at=bindparam("now", type_=UtcDateTime))
)
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
    claim = queue.CLAIM[not db.is_sqlite]
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
