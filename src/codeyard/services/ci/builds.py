"""Builds: their state changes (used by the runners' protocol and the user API alike) and the user
API's operations.

States (reference 9.1): pending -> running (`started`, after the runners' queue claimed the build);
pending|running -> success|failed|canceled (`finish`). Any other change is ignored. Only these
functions change a build's state, except the claim itself (services/ci/queue.py).

A finished build: `finished_at` set, its token forgotten (the runner's access ends), coverage read
from its trace, its pipeline's status derived again and the next stage created (pipelines.progress).
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Integer, Row, String, bindparam, or_, select, type_coerce, update
from sqlalchemy.orm import Session, aliased
from sqlalchemy.types import NullType

from ...db.models import Build, Pipeline, Project, Runner, User, is_id, utcnow
from ...db.models.ci import ACTIVE_STATES, BUILD_STATES, CANCELED, FAILED, RUNNING, SUCCESS
from ...db.queries import api_text, joined_columns, joined_part, page_statements, read_row
from ...db.queries import read_page as read_page_of
from ...entities.builds import build_hook_payload
from ...errors import BadRequest, Forbidden, NotFound
from ...git import repo
from .. import webhooks
from ..merge_requests import reactions
from ..repository import path_by_id, path_of
from . import coverage, pipelines, traces

# Lock order, so that claims, finishes and retries never wait on each other in a cycle: a build's
# row first (the claim's or finish's conditional UPDATE, retry's UPDATE), then its pipeline's row
# (pipelines.lock). Whoever takes the pipeline second sees what the first committed, so builds of
# one stage finishing at once still start the next stage exactly once.

NOT_RETRYABLE = "Build is not retryable"
INVALID_SCOPE = "Scope contains invalid value(s)"
MASK = b"xxxxxx"
BUILD_EVENTS = "build_events"

FINISHING = (SUCCESS, FAILED, CANCELED)


def started(session: Session, rt, build: Build) -> None:
    """After the claim moved BUILD to running: the pipeline runs, the Build Hook fires."""
    pipeline = pipelines.lock(session, build.pipeline_id)
    # A pipeline with a running build is running (Ci::Status): no need to load its other builds.
    pipeline.status, pipeline.finished_at = RUNNING, None
    session.refresh(build)
    call_hooks(session, rt, session.get(Project, build.project_id), pipeline, build)


def finish(session: Session, rt, build: Build, state: str) -> bool:
    """Move BUILD from pending or running to STATE (success, failed or canceled); whether it moved.

    The move is a conditional UPDATE, so a runner's report and a user's cancel racing for one
    build cannot both apply.
    """
    if state not in FINISHING:
        raise ValueError(f"not a final build state: {state}")
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
    pipeline = pipelines.lock(session, build.pipeline_id)
    if build.generic:  # an external status: no trace, no stages, no Build Hook (GitLab 8.6)
        status_changed(session, pipeline)
        return True
    project = session.get(Project, build.project_id)
    if state != CANCELED and project.build_coverage_regex:
        build.coverage = coverage.extract(project.build_coverage_regex, traces.read(rt, build))
    pipelines.progress(session, pipeline, build)
    status_changed(session, pipeline)
    call_hooks(session, rt, project, pipeline, build)
    return True


def status_changed(session: Session, pipeline: Pipeline) -> None:
    """Derive the pipeline's status again; when it succeeded, merge what waits for it."""
    if pipelines.refresh_status(session, pipeline) == SUCCESS:
        reactions.pipeline_succeeded(session, pipeline)


def call_hooks(session: Session, rt, project: Project, pipeline: Pipeline, build: Build) -> None:
    """The Build Hook (on running and on finish, never on creation), for hooks with build_events."""
    if not webhooks.has_hooks_for(session, project.id, BUILD_EVENTS):
        return
    try:
        info = repo.commit(path_of(rt, project), build.sha)
    except (repo.NotInRepository, repo.RepositoryUnavailable):
        info = None
    latest = pipelines.latest_builds(session, pipeline.id)
    payload = build_hook_payload(rt.view(), project, build, pipeline, latest, info)
    webhooks.trigger(session, project.id, BUILD_EVENTS, payload)


# --- the user API ----------------------------------------------------------------------------------


def scopes(value: Any) -> list[str]:
    """`scope` as GitLab 8 read it: a string, or a hash-style list (`scope[0]=a&scope[1]=b`); a real
    array (`scope[]=a`, a JSON array) or an unknown state is 400."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        found = [value]
    elif isinstance(value, dict) and all(isinstance(item, str) for item in value.values()):
        found = [item for item in value.values() if item != ""]
    else:
        raise BadRequest(INVALID_SCOPE)
    if any(item not in BUILD_STATES for item in found):
        raise BadRequest(INVALID_SCOPE)
    return found


# --- reads: statements built once, run by any reader (`db/readers.py`) ---------------------------

_USER_FIELDS = ("id", "username", "email", "name", "state", "created_at", "is_admin", "bio", "profnet", "messenger",
                "microblog", "website_url")  # fmt: skip
_RUNNER_FIELDS = ("id", "description", "active", "is_shared", "name")
BuildUser = namedtuple("BuildUser", _USER_FIELDS)  # what `entities.users.user` reads
BuildRunner = namedtuple("BuildRunner", _RUNNER_FIELDS)  # what `entities.builds.runner` reads
_USER = aliased(User, name="build_user")
_TIMES = ("created_at", "started_at", "finished_at")
_BUILD_COLUMNS = (
    *(getattr(Build, name) for name in ("id", "project_id", "pipeline_id", "status", "stage", "name", "ref", "tag",
                                        "sha", "artifacts_file", "artifacts_size")),
    # Both drivers read the float as it is; SQLAlchemy's PostgreSQL Float wants the column's type
    # code for its result processor, which a prepared statement's columns do not give it.
    type_coerce(Build.coverage, NullType()).label("coverage"),
    *(api_text(getattr(Build, name), name) for name in _TIMES),
)  # fmt: skip
_USER_COLUMNS = joined_columns(_USER, _USER_FIELDS, "user_")
_RUNNER_COLUMNS = joined_columns(Runner, _RUNNER_FIELDS, "runner_")
_COLUMNS = (*_BUILD_COLUMNS, *_USER_COLUMNS, *_RUNNER_COLUMNS)
_SOURCE = Build.__table__.outerjoin(_USER, _USER.id == Build.user_id).outerjoin(Runner, Runner.id == Build.runner_id)
_THIS_BUILD = (Build.id == bindparam("id", type_=Integer), Build.project_id == bindparam("project_id", type_=Integer))
_ONE = select(*_COLUMNS).select_from(_SOURCE).where(*_THIS_BUILD)
_TRACED = select(Build.id, Build.project_id, Build.trace_size).where(*_THIS_BUILD)
_PIPELINE_OF_COMMIT = select(Pipeline.id).where(
    Pipeline.project_id == bindparam("project_id", type_=Integer), Pipeline.sha == bindparam("sha", type_=String)
).limit(1)


@functools.cache
def _page_statements(states: tuple[str, ...], by_sha: bool):
    """(count, page) of one project's builds in STATES (any when empty; of commit `:sha` when BY_SHA),
    newest first, with their users' and runners' columns. A statement per set of states: the fast
    path binds no list."""
    conditions = [Build.project_id == bindparam("project_id", type_=Integer)]
    if states:
        conditions.append(or_(*(Build.status == state for state in states)))
    if by_sha:
        conditions.append(Build.sha == bindparam("sha", type_=String))
    return page_statements(_COLUMNS, _SOURCE, conditions, (Build.id.desc(),))


async def read_page(reader, project_id: int, states: list[str], offset: int, limit: int,
                    sha: str | None = None) -> tuple[int, list[tuple]]:  # fmt: skip
    """(total, [(row, runner, user)] of one page): the project's builds (those of commit SHA) in
    STATES, newest first, through READER; runner and user None or their columns (`BuildRunner`,
    `BuildUser`), the timestamps the API's text."""
    params = {"project_id": project_id, "sha": sha, "offset": offset, "limit": limit}
    total, rows = await read_page_of(reader, _page_statements(tuple(sorted(set(states))), sha is not None), params)
    return total, [_parts(row) for row in rows]


async def read_one(reader, project_id: int, build_id: int) -> tuple:
    """(row, runner, user) of project PROJECT_ID's build BUILD_ID as `read_page` gives them; 404 `404 Not Found`."""
    return _parts(await read_row(reader, _ONE, {"id": build_id, "project_id": project_id}, build_id, NotFound))


async def read_traced(reader, project_id: int, build_id: int):
    """What `masked_trace` reads of a build (id, project_id, trace_size); 404 as `read_one`."""
    return await read_row(reader, _TRACED, {"id": build_id, "project_id": project_id}, build_id, NotFound)


def _parts(row) -> tuple:
    return row, joined_part(BuildRunner, row, "runner_"), joined_part(BuildUser, row, "user_")


async def commit_has_pipeline(db, project_id: int, sha: str) -> bool:
    return await db.loop.first(_PIPELINE_OF_COMMIT, {"project_id": project_id, "sha": sha}) is not None


_STATUS_COLUMNS = (
    *(getattr(Build, name) for name in ("id", "sha", "ref", "status", "name", "target_url", "description", "allow_failure",
                                          "pipeline_id")),
    type_coerce(Build.coverage, NullType()).label("coverage"),  # as the driver reads it: a Float's processor needs a column type
    *(api_text(getattr(Build, name), name) for name in _TIMES),
    *_USER_COLUMNS,
)  # fmt: skip
STATUS_FILTERS = ("ref", "stage", "name")


@functools.cache
def _status_statements(filtered: tuple[str, ...], every: bool):
    """(count, page) of the commit statuses of `:sha`, oldest first: only the latest of each retried
    build unless EVERY; FILTERED names the STATUS_FILTERS given (each a bound parameter)."""
    conditions = [Build.project_id == bindparam("project_id", type_=Integer), Build.sha == bindparam("sha", type_=String)]
    if not every:
        conditions.append(Build.retried.is_(False))
    conditions.extend(getattr(Build, field) == bindparam(field, type_=String) for field in filtered)
    source = Build.__table__.outerjoin(_USER, _USER.id == Build.user_id)
    return page_statements(_STATUS_COLUMNS, source, conditions, (Build.id,))


async def read_statuses(db, project_id: int, sha: str, filters: dict[str, str | None], every: bool, offset: int,
                        limit: int) -> tuple[int, list[tuple]]:  # fmt: skip
    """The commit statuses of SHA (its builds in GitLab 8) on the read path: (total, [(row, user)] of
    one page), oldest first; FILTERS (ref, stage, name) narrow them, EVERY keeps retried builds."""
    filtered = tuple(field for field in STATUS_FILTERS if filters.get(field))
    params = {"project_id": project_id, "sha": sha, **{field: filters[field] for field in filtered}, "offset": offset, "limit": limit}
    total, rows = await read_page_of(db.loop, _status_statements(filtered, every), params)
    return total, [(row, joined_part(BuildUser, row, "user_")) for row in rows]


def commits(rt, project_id: int, shas: Iterable[str]) -> dict[str, repo.CommitInfo | None]:
    """The commits of SHAS (None for one the repository does not have): git, off the event loop."""
    path = path_by_id(rt, project_id)
    found: dict[str, repo.CommitInfo | None] = {}
    for sha in set(shas):
        try:
            found[sha] = repo.commit(path, sha)
        except (repo.NotInRepository, repo.RepositoryUnavailable):
            found[sha] = None
    return found


def find(session: Session, project: Project, build_id: int) -> Build:
    """PROJECT's build BUILD_ID, loaded to act on it (or to follow its trace); 404 `404 Not Found` otherwise."""
    build = session.get(Build, build_id) if is_id(build_id) else None
    if build is None or build.project_id != project.id:
        raise NotFound()
    return build


def masked_trace(rt, build: Build | Row, runners_token: str) -> bytes:
    """The trace with the project's runners token replaced by `xxxxxx` (BUILD: the model or a
    `read_traced` row)."""
    data = traces.read(rt, build)
    return data.replace(runners_token.encode(), MASK) if runners_token else data


def cancel(session: Session, rt, build: Build) -> Build:
    """Cancel a pending or running build; a finished one stays as it is."""
    finish(session, rt, build, CANCELED)
    return build


def retryable(project: Project, build: Build) -> bool:
    """GitLab 8.6's `retryable?`: builds enabled and commands present (not only blanks: a job with
    no before_script and an empty script has a newline); never an external status."""
    return bool(project.builds_enabled and not build.generic and build.commands.strip())


def retry(session: Session, rt, project: Project, actor, build: Build) -> Build:
    """A new pending build doing what BUILD did (in any state, as in GitLab 8); BUILD and any
    earlier retry of it stop counting for the pipeline."""
    if not retryable(project, build):
        raise Forbidden(NOT_RETRYABLE)
    session.execute(
        update(Build)
        .where(Build.pipeline_id == build.pipeline_id, Build.name == build.name, Build.retried.is_(False))
        .values(retried=True)
        .execution_options(synchronize_session=False)
    )
    pipeline = pipelines.lock(session, build.pipeline_id)
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
