"""password failures: the throttle of failed password attempts

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "password_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_password_failures_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_password_failures")),
    )
    op.create_index(op.f("ix_password_failures_created_at"), "password_failures", ["created_at"], unique=False)
    op.create_index("ix_password_failures_user_id_created_at", "password_failures", ["user_id", "created_at"], unique=False)
    op.create_index("ix_password_failures_address_created_at", "password_failures", ["address", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_table("password_failures")
