"""merge requests and their comments (notes)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "merge_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("iid", sa.Integer(), nullable=False),
        sa.Column("target_project_id", sa.Integer(), nullable=False),
        sa.Column("source_project_id", sa.Integer(), nullable=True),
        sa.Column("source_branch", sa.String(length=255), nullable=False),
        sa.Column("target_branch", sa.String(length=255), nullable=False),
        sa.Column("title", sa.String(length=255), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=True),
        sa.Column("assignee_id", sa.Integer(), nullable=True),
        sa.Column("labels", sa.JSON(), nullable=False),
        sa.Column("merge_when_build_succeeds", sa.Boolean(), nullable=False),
        sa.Column("merge_user_id", sa.Integer(), nullable=True),
        sa.Column("merge_params", sa.JSON(), nullable=True),
        sa.Column("merge_status", sa.String(length=32), nullable=False),
        sa.Column("merge_commit_sha", sa.String(length=40), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["assignee_id"],
            ["users.id"],
            name=op.f("fk_merge_requests_assignee_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["users.id"], name=op.f("fk_merge_requests_author_id_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["merge_user_id"],
            ["users.id"],
            name=op.f("fk_merge_requests_merge_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["source_project_id"],
            ["projects.id"],
            name=op.f("fk_merge_requests_source_project_id_projects"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["target_project_id"],
            ["projects.id"],
            name=op.f("fk_merge_requests_target_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_merge_requests")),
        sa.UniqueConstraint("target_project_id", "iid", name=op.f("uq_merge_requests_target_project_id_iid")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("merge_requests", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_merge_requests_assignee_id"), ["assignee_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_merge_requests_author_id"), ["author_id"], unique=False)
        batch_op.create_index(
            "ix_merge_requests_source", ["source_project_id", "source_branch"], unique=False
        )
        batch_op.create_index(
            "ix_merge_requests_target_created", ["target_project_id", "created_at"], unique=False
        )

    op.create_table(
        "notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("merge_request_id", sa.Integer(), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["author_id"], ["users.id"], name=op.f("fk_notes_author_id_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["merge_request_id"],
            ["merge_requests.id"],
            name=op.f("fk_notes_merge_request_id_merge_requests"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_notes_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notes")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.create_index("ix_notes_merge_request_id_id", ["merge_request_id", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_notes_project_id"), ["project_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_notes_project_id"))
        batch_op.drop_index("ix_notes_merge_request_id_id")

    op.drop_table("notes")
    with op.batch_alter_table("merge_requests", schema=None) as batch_op:
        batch_op.drop_index("ix_merge_requests_target_created")
        batch_op.drop_index("ix_merge_requests_source")
        batch_op.drop_index(batch_op.f("ix_merge_requests_author_id"))
        batch_op.drop_index(batch_op.f("ix_merge_requests_assignee_id"))

    op.drop_table("merge_requests")
