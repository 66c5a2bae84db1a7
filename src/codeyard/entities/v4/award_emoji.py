"""v4 award emoji (GitLab's Emoji reactions API)."""

from __future__ import annotations

from typing import TypedDict

from ..common import View, iso
from .users import UserV4Basic, user_basic


class AwardEmoji(TypedDict):
    id: int
    name: str
    user: UserV4Basic
    created_at: str | None
    updated_at: str | None
    awardable_id: int
    awardable_type: str


def award_emoji(parts: tuple, view: View) -> AwardEmoji:
    """An award from its read path's parts (`services.award_emoji.parts`: row, user)."""
    row, user = parts
    return {
        "id": row.id,
        "name": row.name,
        "user": user_basic(user, view),
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "awardable_id": row.awardable_id,
        "awardable_type": row.awardable_type,
    }
