"""The v4 member: the user's basic form, the level, when the membership was made and by whom.

Built from a members read-path row (`services.members.read_v4_page`: the user's columns, its
`access_level` and `member_created_at`) and the membership's creator. codeyard keeps no membership
expiry: `expires_at` is always null.
"""

from __future__ import annotations

from typing import TypedDict

from ..common import View, iso
from .users import UserV4Basic, user_basic


class _MemberFields(TypedDict, total=False):
    created_by: UserV4Basic  # absent when unknown, as GitLab leaves it out


class MemberV4(UserV4Basic, _MemberFields):
    access_level: int
    created_at: str | None
    expires_at: str | None
    membership_state: str


def member(row, creator, view: View) -> MemberV4:
    """ROW and CREATOR (a contact, or None) as `services.members.read_v4_page` gives them."""
    data: MemberV4 = {
        **user_basic(row, view),
        "access_level": row.access_level,
        "created_at": iso(row.member_created_at),
        "expires_at": None,
        "membership_state": "active",
    }
    if creator is not None:
        data["created_by"] = user_basic(creator, view)
    return data
