"""The runners' queue: hand the oldest pending build a runner may take to that runner, once.

Candidates come from the partial index `ix_ci_builds_queue` (builds that are pending and not handed
out; never an external status, a `generic` row), in id order, a bounded batch at a time, joined to
the projects the runner serves: its own (ci_runner_projects) for a specific runner; for a shared
runner every project with builds and shared runners enabled (and nothing when the instance turned
shared runners off). A build fits when its tags are a subset of the runner's. The candidates are
read outside the write transaction; the claim itself is one conditional UPDATE (`... WHERE id = ?
AND status = 'pending' AND runner_id IS NULL AND NOT generic`) in it, and its row count decides: on
PostgreSQL the row is locked first with SKIP LOCKED (a build another claim holds is passed over, not
waited for; a build claimed and committed no longer matches); on SQLite writers are serialised. A
lost race moves on to the next candidate, so two runners never get one build.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Integer, bindparam, select, text, update
from sqlalchemy.orm import Session

from ...db.models import Build, utcnow
from ...db.models.base import JsonList, UtcDateTime
from ...db.models.ci import PENDING, RUNNING
from .. import credentials
from .. import settings as settings_service

BATCH = 32
_builds = Build.__table__
MAX_BATCH = 1024


def _candidates(shared: bool, sqlite: bool):
    """Queued builds (id, tag_list) of the projects a shared or specific runner serves, from id
    `:after` on, `:limit` of them, oldest first; for a shared runner none when the instance turned
    shared runners off (asked in the same statement: one round trip less on every poll).

    The queue's predicate is spelled as the partial index's own (literals, not parameters), and
    SQLite is told to use that index: without statistics it prefers the runner_id index, which
    also holds every build canceled before it ran. An empty tag list is read as NULL: most builds
    have none, and a batch of them then costs no JSON decoding.
    """
    hint = " INDEXED BY ix_ci_builds_queue" if sqlite else ""
    tags = (
        "NULLIF(ci_builds.tag_list, '[]')"
        if sqlite
        else "CASE WHEN json_array_length(ci_builds.tag_list) = 0 THEN NULL ELSE ci_builds.tag_list END"
    )
    serves = (
        "AND projects.shared_runners_enabled AND NOT EXISTS (SELECT 1 FROM application_settings"
        f" WHERE application_settings.id = {settings_service.SETTINGS_ID} AND NOT application_settings.shared_runners_enabled)"
        if shared
        else "AND EXISTS (SELECT 1 FROM ci_runner_projects WHERE ci_runner_projects.runner_id = :runner"
        " AND ci_runner_projects.project_id = ci_builds.project_id)"
    )
    return text(
        f"SELECT ci_builds.id, {tags} AS tag_list FROM ci_builds{hint}"
        " JOIN projects ON projects.id = ci_builds.project_id"
        " WHERE ci_builds.status = 'pending' AND ci_builds.runner_id IS NULL AND NOT ci_builds.generic"
        " AND ci_builds.id > :after"
        f" AND projects.builds_enabled {serves} ORDER BY ci_builds.id LIMIT :limit"
    ).columns(id=Integer, tag_list=JsonList)


CANDIDATES = {(shared, sqlite): _candidates(shared, sqlite) for shared in (True, False) for sqlite in (True, False)}


def fits(build_tags, runner_tags) -> bool:
    """A build may go to a runner carrying all its tags (an untagged build to any runner)."""
    return set(build_tags or ()) <= set(runner_tags or ())


# What a claim returns of the build: every column its Runner job shows.
JOB_COLUMNS = tuple(
    _builds.c[name]
    for name in ("id", "project_id", "pipeline_id", "stage_idx", "ref", "tag", "sha", "status", "name", "stage",
                 "commands", "options", "yaml_variables", "artifacts_file", "artifacts_size")
)  # fmt: skip


def _claim_statement(skip_locked: bool):
    """Move build `:build` to running for `:runner` if it is still queued, returning JOB_COLUMNS.
    With SKIP_LOCKED (PostgreSQL) a row another claim holds is passed over at once instead of
    waited for, so racing runners spread over the queue rather than queueing behind its head."""
    queued = (_builds.c.status == PENDING, _builds.c.runner_id.is_(None), _builds.c.generic.is_(False))
    target = _builds.c.id == bindparam("build", type_=Integer)
    if skip_locked:
        locked = select(_builds.c.id).where(target, *queued).with_for_update(skip_locked=True)
        target = _builds.c.id == locked.scalar_subquery()
    now = bindparam("now", type_=UtcDateTime)
    values = {"status": RUNNING, "runner_id": bindparam("runner", type_=Integer), "token_digest": bindparam("digest"),
              "started_at": now, "updated_at": now}  # fmt: skip
    return update(_builds).where(target, *queued).values(**values).returning(*JOB_COLUMNS)


CLAIM = {skip_locked: _claim_statement(skip_locked) for skip_locked in (True, False)}


def candidates(db, runner):
    """The ids of the queued builds RUNNER may take, oldest first, read a batch at a time outside
    any transaction (the thread's autocommit connection: an idle poll takes no lock and no pooled
    connection); each batch twice the last, up to MAX_BATCH, so that a long queue of builds this
    runner cannot take costs a few statements."""
    query = CANDIDATES[(bool(runner.is_shared), db.is_sqlite)]
    after, limit = 0, BATCH
    while True:
        batch = db.fast_all(query, {"after": after, "limit": limit, "runner": runner.id})
        for build_id, tags in batch:
            if fits(tags, runner.tag_list):
                yield build_id
        if len(batch) < limit:
            return
        after, limit = batch[-1][0], min(limit * 2, MAX_BATCH)


def claim_params(build_id: int, runner_id: int, token: str) -> dict:
    return {"build": build_id, "runner": runner_id, "digest": credentials.digest(token), "now": utcnow()}


@dataclass(frozen=True)
class Claimed:
    build: Build
    token: str  # the build token, shown to the runner once


def claim(session: Session, db, runner) -> Claimed | None:
    """Move the oldest build RUNNER may take to running and assign it, in SESSION's transaction;
    None when there is none. The build's token is new and only its digest kept."""
    statement = CLAIM[not db.is_sqlite]
    for build_id in candidates(db, runner):
        token = credentials.new_secret()
        if session.execute(statement, claim_params(build_id, runner.id, token)).first() is not None:
            return Claimed(session.get(Build, build_id, populate_existing=True), token)
    return None


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


RUNNING_BUILD_BY_TOKEN = select(_builds.c.id, _builds.c.project_id).where(
    _builds.c.token_digest == bindparam("digest"), _builds.c.status == RUNNING
)


def running_build_for_token(db, token: str):
    """(id, project_id) of the running build TOKEN belongs to, or None: one prepared query on the
    fast connection (git authenticates every request of a clone)."""
    return db.fast_first(RUNNING_BUILD_BY_TOKEN, {"digest": credentials.digest(token)})
