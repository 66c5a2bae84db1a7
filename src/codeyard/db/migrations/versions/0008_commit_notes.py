"""notes on commits: a note belongs to a merge request or to a commit (optionally one line of its diff)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.alter_column("merge_request_id", existing_type=sa.Integer(), nullable=True)
        batch_op.add_column(sa.Column("commit_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("path", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("line", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("line_type", sa.String(length=8), nullable=True))
        batch_op.create_index("ix_notes_project_id_commit_id_id", ["project_id", "commit_id", "id"], unique=False)


def downgrade() -> None:
    op.execute("DELETE FROM notes WHERE merge_request_id IS NULL")
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.drop_index("ix_notes_project_id_commit_id_id")
        batch_op.drop_column("line_type")
        batch_op.drop_column("line")
        batch_op.drop_column("path")
        batch_op.drop_column("commit_id")
        batch_op.alter_column("merge_request_id", existing_type=sa.Integer(), nullable=False)
