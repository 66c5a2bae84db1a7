"""list sort index: projects by (namespace, created_at), so that the projects of a user's namespaces
are read in the lists' default order from index entries alone

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_projects_namespace_id_created_at", "projects", ["namespace_id", "created_at"])
    # The two-column index serves every lookup by namespace the one-column one did.
    op.drop_index("ix_projects_namespace_id", table_name="projects")


def downgrade() -> None:
    op.create_index("ix_projects_namespace_id", "projects", ["namespace_id"])
    op.drop_index("ix_projects_namespace_id_created_at", table_name="projects")
