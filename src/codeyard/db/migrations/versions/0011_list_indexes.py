"""list indexes: memberships by (user, project) and (user, group), covering the lists of a user's projects

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_project_members_user_id_project_id", "project_members", ["user_id", "project_id"])
    op.create_index("ix_group_members_user_id_namespace_id", "group_members", ["user_id", "namespace_id"])
    # The two-column indexes serve every lookup by user the one-column ones did.
    op.drop_index("ix_project_members_user_id", table_name="project_members")
    op.drop_index("ix_group_members_user_id", table_name="group_members")


def downgrade() -> None:
    op.create_index("ix_group_members_user_id", "group_members", ["user_id"])
    op.create_index("ix_project_members_user_id", "project_members", ["user_id"])
    op.drop_index("ix_group_members_user_id_namespace_id", table_name="group_members")
    op.drop_index("ix_project_members_user_id_project_id", table_name="project_members")
