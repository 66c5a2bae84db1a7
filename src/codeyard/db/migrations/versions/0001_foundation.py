"""foundation: users, namespaces, tokens, tombstones, application settings

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _timestamps():
    return [
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "application_settings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("default_projects_limit", sa.Integer(), nullable=False),
        sa.Column("signup_enabled", sa.Boolean(), nullable=False),
        sa.Column("signin_enabled", sa.Boolean(), nullable=False),
        sa.Column("avatarservice_enabled", sa.Boolean(), nullable=False),
        sa.Column("sign_in_text", sa.Text(), nullable=True),
        sa.Column("home_page_url", sa.String(length=2048), nullable=True),
        sa.Column("default_branch_protection", sa.Integer(), nullable=False),
        sa.Column("socialnetwork_sharing_enabled", sa.Boolean(), nullable=False),
        sa.Column("restricted_visibility_levels", sa.JSON(), nullable=False),
        sa.Column("max_attachment_size", sa.Integer(), nullable=False),
        sa.Column("session_expire_delay", sa.Integer(), nullable=False),
        sa.Column("default_project_visibility", sa.Integer(), nullable=False),
        sa.Column("default_snippet_visibility", sa.Integer(), nullable=False),
        sa.Column("default_group_visibility", sa.Integer(), nullable=False),
        sa.Column("restricted_signup_domains", sa.JSON(), nullable=False),
        sa.Column("user_oauth_applications", sa.Boolean(), nullable=False),
        sa.Column("after_sign_out_path", sa.String(length=2048), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_application_settings")),
    )
    op.create_table(
        "tombstones",
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("object_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=512), nullable=False),
        sa.Column("deleted_by_id", sa.Integer(), nullable=True),
        sa.Column("deleted_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "object_id", name=op.f("pk_tombstones")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=255), nullable=False),
        sa.Column("email", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("password_digest", sa.String(length=255), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("bio", sa.String(length=255), nullable=True),
        sa.Column("website_url", sa.String(length=255), nullable=False),
        sa.Column("profnet", sa.String(length=255), nullable=False),
        sa.Column("messenger", sa.String(length=255), nullable=False),
        sa.Column("microblog", sa.String(length=255), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("external", sa.Boolean(), nullable=False),
        sa.Column("projects_limit", sa.Integer(), nullable=False),
        sa.Column("can_create_group", sa.Boolean(), nullable=False),
        sa.Column("sign_in_count", sa.Integer(), nullable=False),
        *_timestamps(),
        sa.Column("confirmed_at", sa.DateTime(), nullable=True),
        sa.Column("current_sign_in_at", sa.DateTime(), nullable=True),
        sa.Column("last_sign_in_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sqlite_autoincrement=True,
    )
    op.create_index("uq_users_username_lower", "users", [sa.text("lower(username)")], unique=True)
    op.create_index("uq_users_email_lower", "users", [sa.text("lower(email)")], unique=True)
    op.create_table(
        "namespaces",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("description", sa.String(length=2000), nullable=False),
        sa.Column("visibility_level", sa.Integer(), nullable=False),
        *_timestamps(),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_namespaces_owner_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_namespaces")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_namespaces_owner_id"), "namespaces", ["owner_id"], unique=False)
    op.create_index("uq_namespaces_path_lower", "namespaces", [sa.text("lower(path)")], unique=True)
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_tokens_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tokens")),
        sa.UniqueConstraint("digest", name=op.f("uq_tokens_digest")),
        sqlite_autoincrement=True,
    )
    op.create_index(op.f("ix_tokens_user_id"), "tokens", ["user_id"], unique=False)


def downgrade() -> None:
    op.drop_table("tokens")
    op.drop_table("namespaces")
    op.drop_table("users")
    op.drop_table("tombstones")
    op.drop_table("application_settings")
