"""Who may read users (the directory, a profile, a user's projects)."""

from __future__ import annotations

from .projects import PUBLIC


def anonymous_reads_users(restricted_levels) -> bool:
    """GitLab's read_users_list / read_user without a token: allowed unless an admin restricted
    the public visibility level. Signed-in users always read them."""
    return PUBLIC not in (restricted_levels or ())
