"""jobs and webhook deliveries: the background work table, delivery attempts, hook tokens and
disabling, the allow_local_requests_from_hooks setting

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("run_at", sa.DateTime(), nullable=False),
        sa.Column("locked_by", sa.String(length=128), nullable=True),
        sa.Column("locked_until", sa.DateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_jobs_state_run_at", "jobs", ["state", "run_at"], unique=False)
    op.create_table(
        "hook_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("hook_id", sa.Integer(), nullable=False),
        sa.Column("delivery", sa.String(length=36), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("request_headers", sa.JSON(), nullable=False),
        sa.Column("request_body", sa.Text(), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_headers", sa.JSON(), nullable=True),
        sa.Column("response_body", sa.Text(), nullable=True),
        sa.Column("duration", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["hook_id"],
            ["project_hooks.id"],
            name=op.f("fk_hook_deliveries_hook_id_project_hooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hook_deliveries")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_hook_deliveries_delivery"), "hook_deliveries", ["delivery"], unique=False)
    op.create_index("ix_hook_deliveries_hook_id_id", "hook_deliveries", ["hook_id", "id"], unique=False)
    with op.batch_alter_table("application_settings") as batch:
        batch.add_column(
            sa.Column(
                "allow_local_requests_from_hooks", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
    with op.batch_alter_table("project_hooks") as batch:
        batch.add_column(sa.Column("token", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("failure_count", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("disabled_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("disabled_reason", sa.String(length=1024), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("project_hooks") as batch:
        batch.drop_column("disabled_reason")
        batch.drop_column("disabled_at")
        batch.drop_column("failure_count")
        batch.drop_column("token")
    with op.batch_alter_table("application_settings") as batch:
        batch.drop_column("allow_local_requests_from_hooks")
    op.drop_index("ix_hook_deliveries_hook_id_id", table_name="hook_deliveries")
    op.drop_index(op.f("ix_hook_deliveries_delivery"), table_name="hook_deliveries")
    op.drop_table("hook_deliveries")
    op.drop_index("ix_jobs_state_run_at", table_name="jobs")
    op.drop_table("jobs")
