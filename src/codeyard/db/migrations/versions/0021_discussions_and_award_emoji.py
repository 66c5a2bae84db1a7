"""discussions and award emoji: every note belongs to a discussion (a comment is one of its own; a
thread's notes share one, resolvable on merge requests, a diff thread's with its position), and
users award emoji to merge requests and notes

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

# 40 hex characters per existing note, each its own discussion (random, as new ones are).
_OWN_DISCUSSION = {
    "sqlite": "lower(hex(randomblob(20)))",
    "postgresql": "substr(md5(random()::text || id::text) || md5(id::text || random()::text), 1, 40)",
}


def upgrade() -> None:
    # A batch: SQLite adds a column with a foreign key only by rebuilding the table (its plain
    # indexes are rebuilt with it); PostgreSQL gets plain ALTERs.
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("discussion_id", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("type", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("resolvable", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("resolved_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("resolved_by_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("position", sa.Text(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_notes_resolved_by_id_users"), "users", ["resolved_by_id"], ["id"], ondelete="SET NULL"
        )
    op.execute(f"UPDATE notes SET discussion_id = {_OWN_DISCUSSION[op.get_bind().dialect.name]}")
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.alter_column("discussion_id", existing_type=sa.String(length=40), nullable=False)
    op.create_table(
        "award_emoji",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("awardable_type", sa.String(length=32), nullable=False),
        sa.Column("awardable_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_award_emoji_project_id_projects"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_award_emoji_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_award_emoji")),
        sa.UniqueConstraint(
            "awardable_type", "awardable_id", "user_id", "name", name=op.f("uq_award_emoji_awardable_user_name")
        ),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_award_emoji_project_id"), "award_emoji", ["project_id"], unique=False)
    op.create_index(op.f("ix_award_emoji_user_id"), "award_emoji", ["user_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_award_emoji_user_id"), table_name="award_emoji")
    op.drop_index(op.f("ix_award_emoji_project_id"), table_name="award_emoji")
    op.drop_table("award_emoji")
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_notes_resolved_by_id_users"), type_="foreignkey")
        batch_op.drop_column("position")
        batch_op.drop_column("resolved_by_id")
        batch_op.drop_column("resolved_at")
        batch_op.drop_column("resolvable")
        batch_op.drop_column("type")
        batch_op.drop_column("discussion_id")
