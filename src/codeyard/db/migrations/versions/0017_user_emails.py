"""user emails: a user's secondary e-mail addresses (API v4 `/user/emails`, `/users/:id/emails`)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "emails",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=255), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_emails_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_emails")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_emails_user_id"), "emails", ["user_id"], unique=False)
    op.create_index("uq_emails_email_lower", "emails", [sa.text("lower(email)")], unique=True)


def downgrade() -> None:
    op.drop_table("emails")
