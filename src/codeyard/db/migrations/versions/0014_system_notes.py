"""system notes: notes the service writes on a merge request (why an automatic merge was aborted, why
a source branch was kept), told apart from comments

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN: no table rebuild.
    op.add_column("notes", sa.Column("system", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    op.execute("DELETE FROM notes WHERE system")
    op.drop_column("notes", "system")
