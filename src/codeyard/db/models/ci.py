"""CI: pipelines (one per pushed sha and ref), their builds, and the runners that run them.

GitLab 8 kept these as ci_commits, ci_builds, ci_runners and ci_runner_projects; the names here
say what the rows hold. A build's trace and artifacts live in files under the data directory
(`builds/`), not in rows.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import Base, JsonList, UtcDateTime, utcnow
from .users import NO_ID_REUSE, User

# Build states of GitLab 8 (there is no created, skipped or manual state in 8.x).
PENDING, RUNNING, SUCCESS, FAILED, CANCELED = "pending", "running", "success", "failed", "canceled"
BUILD_STATES = (PENDING, RUNNING, SUCCESS, FAILED, CANCELED)
ACTIVE_STATES = (PENDING, RUNNING)
FINISHED_STATES = (SUCCESS, FAILED, CANCELED)
# A pipeline with no builds (no matching job, [ci skip]) reports skipped.
SKIPPED = "skipped"
# `when` of a job: after earlier stages succeeded (default), failed, or either.
ON_SUCCESS, ON_FAILURE, ALWAYS = "on_success", "on_failure", "always"


class Pipeline(Base):
    """The CI record of one sha pushed to one ref (GitLab 8's ci_commits row).

    `yaml_errors` holds why the .gitlab-ci.yml was refused (status failed, no builds); `config`
    is the parsed file, kept so later stages are created from what was parsed at push time.
    `status` is derived from the latest builds and stored when they change, for cheap reads.
    """

    __tablename__ = "ci_pipelines"
    __table_args__ = (UniqueConstraint("project_id", "sha", "ref", "tag"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    sha: Mapped[str] = mapped_column(String(40))
    before_sha: Mapped[str | None] = mapped_column(String(40))
    ref: Mapped[str] = mapped_column(String(255))
    tag: Mapped[bool] = mapped_column(Boolean, default=False)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    yaml_errors: Mapped[str | None] = mapped_column(Text)
    config: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    user: Mapped[User | None] = relationship()


# The commit status of a sha: its newest pipeline.
Index("ix_ci_pipelines_project_sha", Pipeline.project_id, Pipeline.sha, Pipeline.id)


class Build(Base):
    """One job of a pipeline's stage, as run (or to be run) by a runner.

    A retry makes a new build and marks the old one `retried`: only builds that are not retried
    count for the pipeline's status and stage progression. A `generic` row is an external commit
    status (GitLab 8's GenericCommitStatus, posted through the API): it counts for the pipeline's
    status but has no commands, never goes to a runner and never starts a stage. `token_digest`
    is the digest of the token handed to the runner that claimed it (clone over HTTP, trace,
    artifacts); it is cleared when the build finishes, so the token works only while the build runs.
    """

    __tablename__ = "ci_builds"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    pipeline_id: Mapped[int] = mapped_column(ForeignKey("ci_pipelines.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    stage: Mapped[str] = mapped_column(String(255))
    stage_idx: Mapped[int] = mapped_column(Integer)
    ref: Mapped[str] = mapped_column(String(255))
    tag: Mapped[bool] = mapped_column(Boolean, default=False)
    sha: Mapped[str] = mapped_column(String(40))
    status: Mapped[str] = mapped_column(String(16), default=PENDING)
    when: Mapped[str] = mapped_column(String(16), default=ON_SUCCESS)
    allow_failure: Mapped[bool] = mapped_column(Boolean, default=False)
    retried: Mapped[bool] = mapped_column(Boolean, default=False)
    # What the runner is given: commands (before_script + script), options (image, services,
    # artifacts, cache, dependencies), the YAML variables, and the tags a runner must carry.
    commands: Mapped[str] = mapped_column(Text)
    options: Mapped[dict] = mapped_column(JSON, default=dict)
    yaml_variables: Mapped[list] = mapped_column(JsonList, default=list)
    tag_list: Mapped[list] = mapped_column(JsonList, default=list)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    runner_id: Mapped[int | None] = mapped_column(ForeignKey("ci_runners.id", ondelete="SET NULL"), index=True)
    token_digest: Mapped[str | None] = mapped_column(String(64), unique=True)
    coverage: Mapped[float | None] = mapped_column(Float)
    # The trace is a file; its size is kept so appends can check Content-Range without a stat.
    trace_size: Mapped[int] = mapped_column(Integer, default=0)
    artifacts_file: Mapped[str | None] = mapped_column(String(255))
    artifacts_size: Mapped[int | None] = mapped_column(Integer)
    generic: Mapped[bool] = mapped_column(Boolean, default=False)
    target_url: Mapped[str | None] = mapped_column(String(1024))
    description: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    user: Mapped[User | None] = relationship()
    pipeline: Mapped[Pipeline] = relationship()


# The project's builds list (id descending) and the builds of one pipeline.
Index("ix_ci_builds_project_id_id", Build.project_id, Build.id)
Index("ix_ci_builds_pipeline_id_stage_idx", Build.pipeline_id, Build.stage_idx)
# The runners' queue: only pending builds not yet handed out are in this index, oldest first,
# so a claim reads a few index entries whatever the number of finished builds. External statuses
# (generic) are never handed out, so they are not in it.
_QUEUED = text("status = 'pending' AND runner_id IS NULL AND NOT generic")
Index(
    "ix_ci_builds_queue",
    Build.id,
    Build.project_id,
    sqlite_where=_QUEUED,
    postgresql_where=_QUEUED,
)


class Runner(Base):
    """A machine that runs builds: shared (any project with shared runners enabled) or specific
    to the projects in ci_runner_projects. Only the digest of its token is stored."""

    __tablename__ = "ci_runners"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_digest: Mapped[str] = mapped_column(String(64), unique=True)
    description: Mapped[str | None] = mapped_column(String(255))
    tag_list: Mapped[list] = mapped_column(JsonList, default=list)
    is_shared: Mapped[bool] = mapped_column(Boolean, default=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # info[...] the runner reports about itself.
    name: Mapped[str | None] = mapped_column(String(255))
    version: Mapped[str | None] = mapped_column(String(255))
    revision: Mapped[str | None] = mapped_column(String(255))
    platform: Mapped[str | None] = mapped_column(String(255))
    architecture: Mapped[str | None] = mapped_column(String(255))
    contacted_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)


class RunnerProject(Base):
    """A specific runner's assignment to a project."""

    __tablename__ = "ci_runner_projects"

    runner_id: Mapped[int] = mapped_column(ForeignKey("ci_runners.id", ondelete="CASCADE"), primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
