"""External commit statuses: what another CI system reports about a commit (GitLab 8.6
`POST /projects/:id/statuses/:sha`, GenericCommitStatus).

A status is a `generic` ci_builds row in the pipeline of its sha and ref (made when missing, as 8.6's
`ensure_ci_commit`), in the stage `external`, after every stage of a .gitlab-ci.yml. It has no
commands and no token: the runners' queue never hands it out, it never starts a stage and fires no
Build Hook (8.6 ran those for Ci::Build only); it counts for the pipeline's status, so the commit's
status, its badges and merge-when-build-succeeds see it.

Posting again for the same name and ref while the status is pending or running moves that status;
once it has finished, a new status is made and the old one stops counting (8.6's `latest`). The
moves are 8.6's events: running (pending -> running), success, failed, canceled (pending|running ->
that state); any other move is ignored, except `pending`, which 8.6 wrote as is.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...db.models import Build, Pipeline, Project, utcnow
from ...db.models.ci import ACTIVE_STATES, BUILD_STATES, PENDING, RUNNING
from ...errors import Invalid, NotFound
from ...git import repo
from ..repository import path_of
from . import builds, pipelines

EXTERNAL_STAGE = "external"
EXTERNAL_STAGE_IDX = 1_000_000  # after every stage a .gitlab-ci.yml can have
DEFAULT_NAME = "default"
STATE_INVALID = {"status": ["is not included in the list"]}  # 8.6's model validation
REF_MISSING = {"ref": ["does not exist"]}


def ref_for(rt, project: Project, sha: str, ref: str | None) -> tuple[str, bool]:
    """(ref, whether it is a tag) for a status of commit SHA: REF as given, which must be a branch or
    a tag of the project (400 `{"ref": ["does not exist"]}`: 8.6 made a pipeline for any text), or
    the first branch (by name) that has the commit, as 8.6 chose; 404 `References for commit` when
    none has it. Git work: call it off the event loop."""
    path = path_of(rt, project)
    if ref is None:
        names = repo.branches_containing(path, sha)
        if not names:
            raise NotFound("References for commit")
        return names[0], False
    if repo.branch(path, ref) is not None:
        return ref, False
    if repo.tag_target(path, ref)[0] is not None:
        return ref, True
    raise Invalid(REF_MISSING)


def post(session: Session, rt, project: Project, actor, sha: str, ref: str, tag: bool, fields: dict) -> Build:
    """Record STATE (fields["state"]) for the status named fields["name"] of SHA on REF; the status.

    FIELDS may carry target_url and description, which replace the stored ones when given. A state
    that is not a build state is 400 and changes nothing."""
    state = fields["state"]
    if state not in BUILD_STATES:
        raise Invalid(STATE_INVALID)
    pipeline = ensure_pipeline(session, project, sha, ref, tag)
    name = fields.get("name") or DEFAULT_NAME
    status = active_status(session, pipeline, name)
    if status is None:
        # The pipeline's lock serialises the making of a status of that name. A status that exists
        # is moved without it first (its row, then the pipeline: builds.py's lock order).
        pipelines.lock(session, pipeline.id)
        status = active_status(session, pipeline, name) or new_status(session, pipeline, name, actor)
    for field in ("target_url", "description"):
        if fields.get(field) is not None:
            setattr(status, field, fields[field])
    session.flush()
    move(session, rt, status, state)
    return status


def ensure_pipeline(session: Session, project: Project, sha: str, ref: str, tag: bool) -> Pipeline:
    """The pipeline of SHA on REF, made (with no jobs) when there is none; a concurrent insert of the
    same pipeline is read back rather than failed."""
    query = select(Pipeline).where(
        Pipeline.project_id == project.id, Pipeline.sha == sha, Pipeline.ref == ref, Pipeline.tag == tag
    )
    found = session.scalar(query)
    if found is not None:
        return found
    pipeline = Pipeline(project_id=project.id, sha=sha, ref=ref, tag=tag, config={"stages": [], "jobs": []})
    try:
        with session.begin_nested():
            session.add(pipeline)
    except IntegrityError:
        return session.scalars(query).one()
    return pipeline


def active_status(session: Session, pipeline: Pipeline, name: str) -> Build | None:
    query = select(Build).where(
        Build.pipeline_id == pipeline.id, Build.generic.is_(True), Build.name == name,
        Build.retried.is_(False), Build.status.in_(ACTIVE_STATES),
    )  # fmt: skip
    return session.scalar(query.order_by(Build.id.desc()).limit(1))


def new_status(session: Session, pipeline: Pipeline, name: str, actor) -> Build:
    """A pending status; earlier statuses of that name in the pipeline stop counting."""
    session.execute(
        update(Build)
        .where(Build.pipeline_id == pipeline.id, Build.generic.is_(True), Build.name == name)
        .values(retried=True)
        .execution_options(synchronize_session=False)
    )
    status = Build(
        project_id=pipeline.project_id, pipeline_id=pipeline.id, name=name, stage=EXTERNAL_STAGE,
        stage_idx=EXTERNAL_STAGE_IDX, ref=pipeline.ref, tag=pipeline.tag, sha=pipeline.sha, status=PENDING,
        commands="", generic=True, user_id=getattr(actor, "id", None),
    )  # fmt: skip
    session.add(status)
    return status


def move(session: Session, rt, status: Build, state: str) -> None:
    """Apply 8.6's event for STATE to STATUS; the pipeline's status follows."""
    if state in builds.FINISHING:
        builds.finish(session, rt, status, state)  # derives the pipeline's status when it moves
        return
    if state == RUNNING:
        now = utcnow()
        moved = session.execute(
            update(Build)
            .where(Build.id == status.id, Build.status == PENDING)
            .values(status=RUNNING, started_at=now, updated_at=now)
            .execution_options(synchronize_session=False)
        ).rowcount
        session.refresh(status)
        if not moved:
            return
    else:
        status.status = PENDING
        session.flush()
    builds.status_changed(session, pipelines.lock(session, status.pipeline_id))
