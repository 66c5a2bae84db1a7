"""projects: members, group members, hooks, uploads, events, stars, fork links

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tombstones") as batch:
        batch.add_column(sa.Column("namespace_id", sa.Integer(), nullable=True))
    op.create_table(
        "group_members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("namespace_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("access_level", sa.Integer(), nullable=False),
        sa.Column("notification_level", sa.Integer(), nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name=op.f("fk_group_members_created_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["namespace_id"],
            ["namespaces.id"],
            name=op.f("fk_group_members_namespace_id_namespaces"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_group_members_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_group_members")),
        sa.UniqueConstraint("namespace_id", "user_id", name=op.f("uq_group_members_namespace_id_user_id")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_group_members_user_id"), "group_members", ["user_id"], unique=False)
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("namespace_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("path", sa.String(length=255), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=True),
        sa.Column("default_branch", sa.String(length=255), nullable=True),
        sa.Column("visibility_level", sa.Integer(), nullable=False),
        sa.Column("issues_enabled", sa.Boolean(), nullable=False),
        sa.Column("merge_requests_enabled", sa.Boolean(), nullable=False),
        sa.Column("builds_enabled", sa.Boolean(), nullable=False),
        sa.Column("wiki_enabled", sa.Boolean(), nullable=False),
        sa.Column("snippets_enabled", sa.Boolean(), nullable=False),
        sa.Column("shared_runners_enabled", sa.Boolean(), nullable=False),
        sa.Column("public_builds", sa.Boolean(), nullable=False),
        sa.Column("archived", sa.Boolean(), nullable=False),
        sa.Column("tag_list", sa.JSON(), nullable=False),
        sa.Column("import_url", sa.String(length=2048), nullable=True),
        sa.Column("creator_id", sa.Integer(), nullable=True),
        sa.Column("runners_token_nonce", sa.String(length=32), nullable=False),
        sa.Column("runners_token_digest", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("last_activity_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["creator_id"], ["users.id"], name=op.f("fk_projects_creator_id_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["namespace_id"],
            ["namespaces.id"],
            name=op.f("fk_projects_namespace_id_namespaces"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("runners_token_digest", name=op.f("uq_projects_runners_token_digest")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_projects_creator_id"), "projects", ["creator_id"], unique=False)
    op.create_index(op.f("ix_projects_namespace_id"), "projects", ["namespace_id"], unique=False)
    op.create_index(op.f("ix_projects_created_at"), "projects", ["created_at"], unique=False)
    op.create_index(op.f("ix_projects_last_activity_at"), "projects", ["last_activity_at"], unique=False)
    op.create_index(
        "uq_projects_namespace_path", "projects", ["namespace_id", sa.text("lower(path)")], unique=True
    )
    op.create_index(
        "uq_projects_namespace_name", "projects", ["namespace_id", sa.text("lower(name)")], unique=True
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=True),
        sa.Column("target_type", sa.String(length=32), nullable=True),
        sa.Column("title", sa.String(length=255), nullable=True),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["author_id"], ["users.id"], name=op.f("fk_events_author_id_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_events_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_events_author_id"), "events", ["author_id"], unique=False)
    op.create_index("ix_events_project_id_id", "events", ["project_id", "id"], unique=False)
    op.create_table(
        "fork_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("forked_to_project_id", sa.Integer(), nullable=False),
        sa.Column("forked_from_project_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["forked_from_project_id"],
            ["projects.id"],
            name=op.f("fk_fork_links_forked_from_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["forked_to_project_id"],
            ["projects.id"],
            name=op.f("fk_fork_links_forked_to_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fork_links")),
        sa.UniqueConstraint("forked_to_project_id", name=op.f("uq_fork_links_forked_to_project_id")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        op.f("ix_fork_links_forked_from_project_id"), "fork_links", ["forked_from_project_id"], unique=False
    )
    op.create_table(
        "project_hooks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("push_events", sa.Boolean(), nullable=False),
        sa.Column("issues_events", sa.Boolean(), nullable=False),
        sa.Column("merge_requests_events", sa.Boolean(), nullable=False),
        sa.Column("tag_push_events", sa.Boolean(), nullable=False),
        sa.Column("note_events", sa.Boolean(), nullable=False),
        sa.Column("build_events", sa.Boolean(), nullable=False),
        sa.Column("enable_ssl_verification", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_hooks_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_project_hooks")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_project_hooks_project_id"), "project_hooks", ["project_id"], unique=False)
    op.create_table(
        "project_members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("access_level", sa.Integer(), nullable=False),
        sa.Column("notification_level", sa.Integer(), nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by_id"],
            ["users.id"],
            name=op.f("fk_project_members_created_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_project_members_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_project_members_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_project_members")),
        sa.UniqueConstraint("project_id", "user_id", name=op.f("uq_project_members_project_id_user_id")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_project_members_user_id"), "project_members", ["user_id"], unique=False)
    op.create_table(
        "stars",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_stars_project_id_projects"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_stars_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "project_id", name=op.f("pk_stars")),
    )
    op.create_index(op.f("ix_stars_project_id"), "stars", ["project_id"], unique=False)
    op.create_table(
        "uploads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("secret", sa.String(length=32), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("content_type", sa.String(length=255), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["author_id"], ["users.id"], name=op.f("fk_uploads_author_id_users"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_uploads_project_id_projects"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_uploads")),
        sa.UniqueConstraint("project_id", "secret", name=op.f("uq_uploads_project_id_secret")),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    with op.batch_alter_table("tombstones") as batch:
        batch.drop_column("namespace_id")
    op.drop_table("uploads")
    op.drop_table("stars")
    op.drop_table("project_members")
    op.drop_table("project_hooks")
    op.drop_table("fork_links")
    op.drop_table("events")
    op.drop_table("projects")
    op.drop_table("group_members")
