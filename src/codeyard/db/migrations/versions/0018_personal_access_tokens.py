"""personal access tokens: a token's scopes, whether it was revoked and when it was last used, for
the personal and impersonation tokens (kinds 'personal' and 'impersonation') of API v4

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs: no table rebuild. Private and OAuth tokens get no scopes: their kind lets
    # them do all (`services.credentials.scopes_of`).
    op.add_column("tokens", sa.Column("scopes", sa.JSON(), nullable=False, server_default=sa.text("'[]'")))
    op.add_column("tokens", sa.Column("revoked", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("tokens", sa.Column("last_used_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    # Plain DROP COLUMNs too: a batch rebuild would drop the table's indexes. Tokens that only
    # version 0017 understands go first: without their scopes they would grant everything.
    op.execute("DELETE FROM tokens WHERE kind IN ('personal', 'impersonation')")
    op.drop_column("tokens", "last_used_at")
    op.drop_column("tokens", "revoked")
    op.drop_column("tokens", "scopes")
