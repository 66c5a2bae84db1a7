"""CI: pipelines, builds, runners and their projects; CI settings of projects and the instance

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ci_runners",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_digest", sa.String(length=64), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=True),
        sa.Column("tag_list", sa.JSON(), nullable=False),
        sa.Column("is_shared", sa.Boolean(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("version", sa.String(length=255), nullable=True),
        sa.Column("revision", sa.String(length=255), nullable=True),
        sa.Column("platform", sa.String(length=255), nullable=True),
        sa.Column("architecture", sa.String(length=255), nullable=True),
        sa.Column("contacted_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ci_runners")),
        sa.UniqueConstraint("token_digest", name=op.f("uq_ci_runners_token_digest")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "ci_pipelines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("sha", sa.String(length=40), nullable=False),
        sa.Column("before_sha", sa.String(length=40), nullable=True),
        sa.Column("ref", sa.String(length=255), nullable=False),
        sa.Column("tag", sa.Boolean(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("yaml_errors", sa.Text(), nullable=True),
        sa.Column("config", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_ci_pipelines_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_ci_pipelines_user_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ci_pipelines")),
        sa.UniqueConstraint(
            "project_id", "sha", "ref", "tag", name=op.f("uq_ci_pipelines_project_id_sha_ref_tag")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("ci_pipelines", schema=None) as batch_op:
        batch_op.create_index("ix_ci_pipelines_project_sha", ["project_id", "sha", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_ci_pipelines_user_id"), ["user_id"], unique=False)

    op.create_table(
        "ci_runner_projects",
        sa.Column("runner_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_ci_runner_projects_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["runner_id"],
            ["ci_runners.id"],
            name=op.f("fk_ci_runner_projects_runner_id_ci_runners"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("runner_id", "project_id", name=op.f("pk_ci_runner_projects")),
    )
    with op.batch_alter_table("ci_runner_projects", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ci_runner_projects_project_id"), ["project_id"], unique=False)

    op.create_table(
        "ci_builds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("pipeline_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("stage", sa.String(length=255), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("ref", sa.String(length=255), nullable=False),
        sa.Column("tag", sa.Boolean(), nullable=False),
        sa.Column("sha", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("when", sa.String(length=16), nullable=False),
        sa.Column("allow_failure", sa.Boolean(), nullable=False),
        sa.Column("retried", sa.Boolean(), nullable=False),
        sa.Column("commands", sa.Text(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("yaml_variables", sa.JSON(), nullable=False),
        sa.Column("tag_list", sa.JSON(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("runner_id", sa.Integer(), nullable=True),
        sa.Column("token_digest", sa.String(length=64), nullable=True),
        sa.Column("coverage", sa.Float(), nullable=True),
        sa.Column("trace_size", sa.Integer(), nullable=False),
        sa.Column("artifacts_file", sa.String(length=255), nullable=True),
        sa.Column("artifacts_size", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["pipeline_id"],
            ["ci_pipelines.id"],
            name=op.f("fk_ci_builds_pipeline_id_ci_pipelines"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_ci_builds_project_id_projects"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["runner_id"],
            ["ci_runners.id"],
            name=op.f("fk_ci_builds_runner_id_ci_runners"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_ci_builds_user_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ci_builds")),
        sa.UniqueConstraint("token_digest", name=op.f("uq_ci_builds_token_digest")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("ci_builds", schema=None) as batch_op:
        batch_op.create_index(
            "ix_ci_builds_pipeline_id_stage_idx", ["pipeline_id", "stage_idx"], unique=False
        )
        batch_op.create_index("ix_ci_builds_project_id_id", ["project_id", "id"], unique=False)
        batch_op.create_index(
            "ix_ci_builds_queue",
            ["id", "project_id"],
            unique=False,
            sqlite_where=sa.text("status = 'pending' AND runner_id IS NULL"),
            postgresql_where=sa.text("status = 'pending' AND runner_id IS NULL"),
        )
        batch_op.create_index(batch_op.f("ix_ci_builds_runner_id"), ["runner_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_ci_builds_user_id"), ["user_id"], unique=False)

    # Plain ADD COLUMN: a batch operation would rebuild these tables on SQLite and lose the
    # expression indexes (lower(path)) that SQLite cannot reflect.
    op.add_column(
        "application_settings",
        sa.Column("shared_runners_enabled", sa.Boolean(), nullable=False, server_default=sa.true()),
    )
    op.add_column(
        "application_settings",
        sa.Column("max_artifacts_size", sa.Integer(), nullable=False, server_default="100"),
    )
    op.add_column("application_settings", sa.Column("runners_registration_token_nonce", sa.String(32)))
    op.add_column("application_settings", sa.Column("runners_registration_token_digest", sa.String(64)))
    op.add_column("projects", sa.Column("build_timeout", sa.Integer(), nullable=False, server_default="3600"))
    op.add_column(
        "projects", sa.Column("build_allow_git_fetch", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    op.add_column("projects", sa.Column("build_coverage_regex", sa.String(255)))


def downgrade() -> None:
    for column in ("build_coverage_regex", "build_allow_git_fetch", "build_timeout"):
        op.drop_column("projects", column)
    for column in (
        "runners_registration_token_digest",
        "runners_registration_token_nonce",
        "max_artifacts_size",
        "shared_runners_enabled",
    ):
        op.drop_column("application_settings", column)

    with op.batch_alter_table("ci_builds", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ci_builds_user_id"))
        batch_op.drop_index(batch_op.f("ix_ci_builds_runner_id"))
        batch_op.drop_index(
            "ix_ci_builds_queue",
            sqlite_where=sa.text("status = 'pending' AND runner_id IS NULL"),
            postgresql_where=sa.text("status = 'pending' AND runner_id IS NULL"),
        )
        batch_op.drop_index("ix_ci_builds_project_id_id")
        batch_op.drop_index("ix_ci_builds_pipeline_id_stage_idx")

    op.drop_table("ci_builds")
    with op.batch_alter_table("ci_runner_projects", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ci_runner_projects_project_id"))

    op.drop_table("ci_runner_projects")
    with op.batch_alter_table("ci_pipelines", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ci_pipelines_user_id"))
        batch_op.drop_index("ix_ci_pipelines_project_sha")

    op.drop_table("ci_pipelines")
    op.drop_table("ci_runners")
