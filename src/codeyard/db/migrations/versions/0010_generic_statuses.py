"""generic statuses: external commit statuses (POST /projects/:id/statuses/:sha) as ci_builds rows,
kept out of the runners' queue index

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

OLD_QUEUE = sa.text("status = 'pending' AND runner_id IS NULL")
NEW_QUEUE = sa.text("status = 'pending' AND runner_id IS NULL AND NOT generic")


def _queue_index(predicate) -> None:
    op.create_index(
        "ix_ci_builds_queue", "ci_builds", ["id", "project_id"], unique=False,
        sqlite_where=predicate, postgresql_where=predicate,
    )  # fmt: skip


def upgrade() -> None:
    # Plain ADD COLUMN and index statements: no table rebuild.
    op.add_column("ci_builds", sa.Column("generic", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("ci_builds", sa.Column("target_url", sa.String(length=1024), nullable=True))
    op.add_column("ci_builds", sa.Column("description", sa.Text(), nullable=True))
    op.drop_index("ix_ci_builds_queue", table_name="ci_builds")
    _queue_index(NEW_QUEUE)


def downgrade() -> None:
    op.drop_index("ix_ci_builds_queue", table_name="ci_builds")
    op.execute("DELETE FROM ci_builds WHERE generic")
    _queue_index(OLD_QUEUE)
    for column in ("description", "target_url", "generic"):
        op.drop_column("ci_builds", column)
