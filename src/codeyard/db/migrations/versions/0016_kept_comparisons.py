"""kept comparisons: the merge base and head a merge request showed when it was merged or closed, so
that its commits and changes outlive its source branch

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs: no table rebuild. Requests merged or closed before stay null (compared
    # with their target branch as before).
    op.add_column("merge_requests", sa.Column("diff_base_sha", sa.String(length=40), nullable=True))
    op.add_column("merge_requests", sa.Column("diff_head_sha", sa.String(length=40), nullable=True))


def downgrade() -> None:
    # Plain DROP COLUMNs too: a batch rebuild would drop the table's indexes.
    op.drop_column("merge_requests", "diff_head_sha")
    op.drop_column("merge_requests", "diff_base_sha")
