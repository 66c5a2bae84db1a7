"""protected branch levels: who may push, merge and unprotect (access levels), and force pushes,
in place of the one `developers_can_push` flag (API v4's protected branches)

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

LEVELS = ("push_access_level", "merge_access_level", "unprotect_access_level")


def upgrade() -> None:
    # Plain ADD and DROP COLUMNs: no table rebuild (which would drop its unique constraint's index
    # on SQLite). A branch developers could push to keeps that, and they may merge into it as
    # before (merging was pushing); every other one is maintainers only.
    for column in LEVELS:
        op.add_column("protected_branches", sa.Column(column, sa.Integer(), nullable=False, server_default="40"))
    op.add_column("protected_branches", sa.Column("allow_force_push", sa.Boolean(), nullable=False,
                                                  server_default=sa.false()))  # fmt: skip
    table = sa.table("protected_branches", sa.column("developers_can_push", sa.Boolean()),
                     sa.column("push_access_level", sa.Integer()), sa.column("merge_access_level", sa.Integer()))  # fmt: skip
    op.execute(table.update().where(table.c.developers_can_push == sa.true())
               .values(push_access_level=30, merge_access_level=30))  # fmt: skip
    op.drop_column("protected_branches", "developers_can_push")


def downgrade() -> None:
    op.add_column("protected_branches", sa.Column("developers_can_push", sa.Boolean(), nullable=False,
                                                  server_default=sa.false()))  # fmt: skip
    table = sa.table("protected_branches", sa.column("developers_can_push", sa.Boolean()),
                     sa.column("push_access_level", sa.Integer()))  # fmt: skip
    op.execute(table.update().where(table.c.push_access_level == 30).values(developers_can_push=True))
    op.drop_column("protected_branches", "allow_force_push")
    for column in reversed(LEVELS):
        op.drop_column("protected_branches", column)
