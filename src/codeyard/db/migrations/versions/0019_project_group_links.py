"""project group links: a project shared with a group, whose members reach it at their group level,
at most the link's, until the link expires

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "project_group_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("group_id", sa.Integer(), nullable=False),
        sa.Column("group_access", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.Date(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"], ["namespaces.id"], name=op.f("fk_project_group_links_group_id_namespaces"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_project_group_links_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_project_group_links")),
        sa.UniqueConstraint("project_id", "group_id", name=op.f("uq_project_group_links_project_id_group_id")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_project_group_links_group_id"), "project_group_links", ["group_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_project_group_links_group_id"), table_name="project_group_links")
    op.drop_table("project_group_links")
