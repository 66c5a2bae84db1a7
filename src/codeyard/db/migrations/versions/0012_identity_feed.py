"""identity feed: on PostgreSQL, a notification on `codeyard_identity` when users, tokens, namespaces
or projects change (db/changes.py)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

# What the token cache keeps is a user row with its token's expiry and the count of the user's
# personal projects (namespace owner and kind, project namespace): a change to any of these rows
# must reach every process. Statement triggers: one notification per statement, and PostgreSQL
# folds the same notification of one transaction into one, delivered at commit. The payload is the
# tables' schema: installations sharing a database in schemas of their own listen past each other.
WATCHED = {
    "users": "INSERT OR UPDATE OR DELETE OR TRUNCATE",
    "tokens": "INSERT OR UPDATE OR DELETE OR TRUNCATE",
    "namespaces": "UPDATE OF owner_id, kind OR DELETE OR TRUNCATE",
    "projects": "INSERT OR UPDATE OF namespace_id OR DELETE OR TRUNCATE",
}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        """
        CREATE FUNCTION codeyard_identity_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('codeyard_identity', TG_TABLE_SCHEMA);
            RETURN NULL;
        END $$
        """
    )
    for table, events in WATCHED.items():
        op.execute(
            f"CREATE TRIGGER {table}_identity_changed AFTER {events} ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION codeyard_identity_changed()"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in WATCHED:
        op.execute(f"DROP TRIGGER {table}_identity_changed ON {table}")
    op.execute("DROP FUNCTION codeyard_identity_changed()")
