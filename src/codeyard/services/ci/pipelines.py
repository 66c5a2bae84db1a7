"""Pipelines: the CI record of one pushed sha and ref, its status, and its stages.

`Pipeline.config` keeps what the push's `.gitlab-ci.yml` said for that ref: the stage names and
the jobs that match the ref (services/ci/config.py), so later stages are created from what was
parsed at push time. Only the first stage's builds are created with the pipeline; each later stage
is created when the earlier ones have finished (`progress`, reference 12.6).

A pipeline's status is derived from its latest builds (those not superseded by a retry) with
GitLab 8's Ci::Status rules (`derived_status`) and stored on the row whenever a build changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from sqlalchemy import Integer, String, bindparam, func, select
from sqlalchemy.orm import Session

from ...db.models import Build, Pipeline, Project, is_id, utcnow
from ...db.models.ci import (
    ALWAYS,
    CANCELED,
    FAILED,
    FINISHED_STATES,
    ON_FAILURE,
    ON_SUCCESS,
    PENDING,
    RUNNING,
    SKIPPED,
    SUCCESS,
)
from ...errors import NotFound
from ...git import content, repo
from ...git.refs import HEADS, TAGS, ZERO_SHA
from . import config as ci_config

CONFIG_PATH = ".gitlab-ci.yml"
SKIP_MARK = "[ci skip]"

# --- creation (a post-push step) --------------------------------------------------------------------


def after_push(session: Session, project: Project, user, path: Path, updates) -> list[Pipeline]:
    """A pipeline for each pushed branch or tag (not deletions) whose commit has a .gitlab-ci.yml,
    on a project with builds enabled; the pipelines made."""
    if not project.builds_enabled:
        return []
    made = []
    for update in updates:
        if update.after == ZERO_SHA or not update.ref.startswith((HEADS, TAGS)):
            continue
        tag = update.ref.startswith(TAGS)
        name = update.ref[len(TAGS) :] if tag else update.ref[len(HEADS) :]
        sha = repo.tag_target(path, name)[0] if tag else update.after
        if sha is not None:
            pipeline = create(session, project, user, path, name, tag, sha, update.before)
            if pipeline is not None:
                made.append(pipeline)
    return made


def read_config(path: Path, sha: str) -> bytes | None:
    """The .gitlab-ci.yml of commit SHA (None without one); ConfigError when it is too large."""
    try:
        blob = content.file_at(path, sha, CONFIG_PATH)
    except repo.NotInRepository:
        return None
    if blob.size > ci_config.MAX_BYTES:
        raise ci_config.ConfigError(f"The file is too large (at most {ci_config.MAX_BYTES // 1024} KiB)")
    return content.read(blob)


def create(session: Session, project: Project, user, path: Path, ref: str, tag: bool, sha: str,
           before: str | None) -> Pipeline | None:  # fmt: skip
    """The pipeline of SHA pushed to REF, with its first stage's builds; None when the commit has
    no .gitlab-ci.yml or the pipeline exists already. A refused file is recorded, never raised."""
    exists = select(Pipeline.id).where(
        Pipeline.project_id == project.id, Pipeline.sha == sha, Pipeline.ref == ref, Pipeline.tag == tag
    )
    if session.scalar(exists) is not None:
        return None
    errors, jobs, stages = None, [], []
    try:
        text = read_config(path, sha)
        if text is None:
            return None
        skipped = SKIP_MARK in repo.commit(path, sha).message
        if not skipped:
            parsed = ci_config.parse(text)
            stages, jobs = parsed.stages, parsed.jobs_for(ref, tag, project.path_with_namespace)
    except ci_config.ConfigError as error:
        errors = str(error)
    pipeline = Pipeline(
        project_id=project.id, sha=sha, before_sha=before, ref=ref, tag=tag, user_id=getattr(user, "id", None),
        yaml_errors=errors, config={"stages": stages, "jobs": jobs}, status=PENDING,
    )  # fmt: skip
    session.add(pipeline)
    session.flush()
    start_stage(session, pipeline, jobs, -1, SUCCESS, pipeline.user_id, set())
    refresh_status(session, pipeline)
    return pipeline


def start_stage(session: Session, pipeline: Pipeline, jobs: list[dict], after: int, status: str,
                user_id: int | None, existing: set[str]) -> list[Build]:  # fmt: skip
    """In the first stage after AFTER with a job whose `when` matches STATUS, the builds of those
    jobs that do not exist yet."""
    for stage_idx in sorted({job["stage_idx"] for job in jobs if job["stage_idx"] > after}):
        chosen = [j for j in jobs if j["stage_idx"] == stage_idx and when_matches(j["when"], status)]
        if chosen:
            return [create_build(session, pipeline, job, user_id) for job in chosen if job["name"] not in existing]
    return []


# --- status and progression ------------------------------------------------------------------------


def builds_unfinished(session: Session, project_id: int | None, sha: str) -> bool:
    """Whether commit SHA of the project has a pipeline still pending or running."""
    query = select(Pipeline.id).where(
        Pipeline.project_id == project_id, Pipeline.sha == sha, Pipeline.status.in_((PENDING, RUNNING))
    )
    return project_id is not None and session.scalar(query.limit(1)) is not None


_NEWEST_STATUS = (
    select(Pipeline.status)
    .where(Pipeline.project_id == bindparam("project_id", type_=Integer), Pipeline.sha == bindparam("sha", type_=String))
    .order_by(Pipeline.id.desc())
    .limit(1)
)


def commit_status(session: Session, project_id: int, sha: str) -> str | None:
    """The CI status of a commit: its newest pipeline's (None without one)."""
    return session.scalar(_NEWEST_STATUS, {"project_id": project_id, "sha": sha})


async def read_commit_status(db, project_id: int, sha: str) -> str | None:
    """`commit_status` on the read path (`Database.loop`), no session."""
    row = await db.loop.first(_NEWEST_STATUS, {"project_id": project_id, "sha": sha})
    return None if row is None else row.status


def commit_statuses(session: Session, project_id: int | None, shas) -> dict[str, str]:
    """sha -> the status of its newest pipeline, for each of SHAS that has one: one query."""
    wanted = sorted({sha for sha in shas if sha})
    if project_id is None or not wanted:
        return {}
    newest = (
        select(func.max(Pipeline.id))
        .where(Pipeline.project_id == project_id, Pipeline.sha.in_(wanted))
        .group_by(Pipeline.sha)
    )
    return dict(session.execute(select(Pipeline.sha, Pipeline.status).where(Pipeline.id.in_(newest))).all())


def derived_status(builds: list[Build]) -> str:
    return status_of_counts(Counter((b.status, bool(b.allow_failure)) for b in builds))


def status_of_counts(counts: Mapping[tuple[str, bool], int]) -> str:
    """Ci::Status of GitLab 8 from how many builds have each (status, allow_failure): builds that
    failed or were canceled but may fail count as success."""
    present = {key for key, number in counts.items() if number}
    if not present:
        return SKIPPED
    statuses = {status for status, _ in present}
    if all(status == SUCCESS or (allowed and status in (FAILED, CANCELED)) for status, allowed in present):
        return SUCCESS
    if statuses == {PENDING}:
        return PENDING
    if statuses & {RUNNING, PENDING}:
        return RUNNING
    if statuses == {CANCELED}:
        return CANCELED
    return FAILED


def latest_counts(session: Session, pipeline_id: int) -> dict[tuple[str, bool], int]:
    """(status, allow_failure) -> how many of the pipeline's latest builds: one grouped query, so a
    pipeline with thousands of external statuses is not loaded row by row."""
    query = (
        select(Build.status, Build.allow_failure, func.count())
        .where(Build.pipeline_id == pipeline_id, Build.retried.is_(False))
        .group_by(Build.status, Build.allow_failure)
    )
    return {(status, bool(allowed)): number for status, allowed, number in session.execute(query)}


def latest_builds(session: Session, pipeline_id: int) -> list[Build]:
    query = select(Build).where(Build.pipeline_id == pipeline_id, Build.retried.is_(False)).order_by(Build.id)
    return list(session.scalars(query.execution_options(populate_existing=True)))


def lock(session: Session, pipeline_id: int) -> Pipeline:
    """The pipeline, its row locked until the transaction ends (PostgreSQL; SQLite's writers are
    serialised anyway): builds of one pipeline finishing at once see each other's outcome."""
    return session.scalars(select(Pipeline).where(Pipeline.id == pipeline_id).with_for_update()).one()


def refresh_status(session: Session, pipeline: Pipeline) -> str:
    """Store the status derived from the pipeline's latest builds; returns it."""
    if pipeline.yaml_errors is not None:
        status = FAILED
    else:
        session.flush()
        status = status_of_counts(latest_counts(session, pipeline.id))
    if status != pipeline.status:
        pipeline.status = status
    finished = status in FINISHED_STATES or status == SKIPPED
    pipeline.finished_at = (pipeline.finished_at or utcnow()) if finished else None
    return status


def when_matches(when: str, status: str) -> bool:
    if when == ON_SUCCESS:
        return status == SUCCESS
    if when == ON_FAILURE:
        return status == FAILED
    return when == ALWAYS and status in (SUCCESS, FAILED)


def progress(session: Session, pipeline: Pipeline, build: Build) -> list[Build]:
    """After BUILD finished: create the next stage's builds if the stages up to BUILD's allow it.

    The status of the latest builds of BUILD's stage and the earlier ones decides: while any is
    unfinished, or all were canceled, nothing happens. Otherwise the first later stage with a job
    whose `when` matches gets the builds of those jobs that do not exist yet (a retried build that
    finishes again does not duplicate them, nor jump past a stage that already has its builds).
    """
    config = pipeline.config or {}
    if build.retried or not config.get("jobs"):
        return []
    latest = latest_builds(session, pipeline.id)
    status = derived_status([b for b in latest if b.stage_idx <= build.stage_idx])
    if status not in (SUCCESS, FAILED):
        return []
    return start_stage(session, pipeline, config["jobs"], build.stage_idx, status, build.user_id, {b.name for b in latest})


def create_build(session: Session, pipeline: Pipeline, job: dict, user_id: int | None) -> Build:
    build = Build(
        project_id=pipeline.project_id,
        pipeline_id=pipeline.id,
        name=job["name"],
        stage=job["stage"],
        stage_idx=job["stage_idx"],
        ref=pipeline.ref,
        tag=pipeline.tag,
        sha=pipeline.sha,
        status=PENDING,
        when=job["when"],
        allow_failure=job["allow_failure"],
        commands=job["commands"],
        options=job["options"],
        yaml_variables=job["variables"],
        tag_list=job["tags"],
        user_id=user_id,
    )
    session.add(build)
    return build


# --- reading (the pipeline pages) ------------------------------------------------------------------


def find(session: Session, project_id: int, pipeline_id: int) -> Pipeline:
    """The project's pipeline PIPELINE_ID; NotFound otherwise."""
    found = session.get(Pipeline, pipeline_id) if is_id(pipeline_id) else None
    if found is None or found.project_id != project_id:
        raise NotFound()
    return found


def of_commit(session: Session, project_id: int, sha: str, limit: int) -> list[Pipeline]:
    """The newest LIMIT pipelines of commit SHA (one per ref it was pushed to), newest first."""
    query = select(Pipeline).where(Pipeline.project_id == project_id, Pipeline.sha == sha)
    return list(session.scalars(query.order_by(Pipeline.id.desc()).limit(limit)))


def stages_of(session: Session, found: list[Pipeline]) -> dict[int, list[tuple[str, str, list[Build]]]]:
    """pipeline id -> its stages in order, each (name, derived status, latest builds): one query."""
    ids = [pipeline.id for pipeline in found]
    query = select(Build).where(Build.pipeline_id.in_(ids), Build.retried.is_(False))
    grouped: dict[int, dict[tuple[int, str], list[Build]]] = {pipeline_id: {} for pipeline_id in ids}
    for build in session.scalars(query.order_by(Build.stage_idx, Build.id)) if ids else ():
        grouped[build.pipeline_id].setdefault((build.stage_idx, build.stage), []).append(build)
    return {pipeline_id: [(stage, derived_status(builds), builds) for (_idx, stage), builds in stages.items()]
            for pipeline_id, stages in grouped.items()}  # fmt: skip
