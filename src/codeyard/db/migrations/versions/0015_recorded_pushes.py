"""recorded pushes: the ids of push journals whose follow-up is recorded, so that a journal replayed
after a crash is recorded once (services/push_journal.py)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "recorded_pushes",
        sa.Column("push_id", sa.String(length=32), nullable=False),
        sa.Column("recorded_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("push_id", name=op.f("pk_recorded_pushes")),
    )
    op.create_index(op.f("ix_recorded_pushes_recorded_at"), "recorded_pushes", ["recorded_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_recorded_pushes_recorded_at"), table_name="recorded_pushes")
    op.drop_table("recorded_pushes")
