"""Award emoji (GitLab 8.9+, the v4 API): a user's emoji on a merge request or on one of its notes,
each name once per user and awardable. `thumbsup` / `thumbsdown` on a request are its votes, beside
the `:+1:` / `:-1:` comments of old (`merge_requests.reads`).

GitLab checks a name against its list of emoji; codeyard keeps no such list and takes any name of
1 to 64 characters of `a-z 0-9 _ + -` (`NAME`), which every GitLab emoji name is."""

from __future__ import annotations

import functools

from sqlalchemy import Integer, String, and_, bindparam, delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from ..db.models import AwardEmoji, Note, User, is_id
from ..db.models.merge_requests import MERGE_REQUEST_AWARDABLE, NOTE_AWARDABLE
from ..db.queries import api_text, joined_columns, joined_part, page_statements, read_page, read_row
from ..errors import Forbidden, NotFound
from .identity import CONTACT_FIELDS, Contact

NAME = r"[a-z0-9_+\-]{1,64}"

_USER = aliased(User, name="award_user")
COLUMNS = (
    AwardEmoji.id, AwardEmoji.name, AwardEmoji.awardable_type, AwardEmoji.awardable_id,
    api_text(AwardEmoji.created_at, "created_at"), api_text(AwardEmoji.updated_at, "updated_at"),
    *joined_columns(_USER, CONTACT_FIELDS, "user_"),
)  # fmt: skip
_SOURCE = AwardEmoji.__table__.join(_USER, _USER.id == AwardEmoji.user_id)
_OF_AWARDABLE = (
    AwardEmoji.awardable_type == bindparam("awardable_type", type_=String),
    AwardEmoji.awardable_id == bindparam("awardable_id", type_=Integer),
)


class AwardEmojiNotFound(NotFound):
    def __init__(self):
        super().__init__("Award Emoji")


@functools.cache
def _pages():
    return page_statements(COLUMNS, _SOURCE, _OF_AWARDABLE, (AwardEmoji.id.asc(),))


_ONE = select(*COLUMNS).select_from(_SOURCE).where(*_OF_AWARDABLE, AwardEmoji.id == bindparam("award_id", type_=Integer))


def parts(row) -> tuple:
    """(row, user) of an award's row: what `entities.v4.award_emoji.award_emoji` takes."""
    return row, joined_part(Contact, row, "user_")


async def read_awards(reader, awardable_type: str, awardable_id: int, offset: int, limit: int) -> tuple[int, list[tuple]]:
    """(total, [parts] of one page) of the emoji awarded to AWARDABLE_TYPE AWARDABLE_ID, oldest first.
    The caller has checked the awardable is the one the path names."""
    params = {"awardable_type": awardable_type, "awardable_id": awardable_id, "offset": offset, "limit": limit}
    total, rows = await read_page(reader, _pages(), params)
    return total, [parts(row) for row in rows]


async def read_award(reader, awardable_type: str, awardable_id: int, award_id: int) -> tuple:
    """The parts of award AWARD_ID of AWARDABLE_TYPE AWARDABLE_ID; 404 `404 Award Emoji Not Found`."""
    params = {"awardable_type": awardable_type, "awardable_id": awardable_id, "award_id": award_id}
    return parts(await read_row(reader, _ONE, params, award_id, AwardEmojiNotFound))


def award(session: Session, project_id: int, actor, awardable_type: str, awardable_id: int, name: str) -> AwardEmoji:
    """ACTOR awards NAME to AWARDABLE_TYPE AWARDABLE_ID (of project PROJECT_ID). Awarded already: 404
    `404 Award Emoji Name has already been taken Not Found`, as GitLab answers a failed award."""
    found = AwardEmoji(project_id=project_id, user_id=actor.id, awardable_type=awardable_type,
                       awardable_id=awardable_id, name=name)  # fmt: skip
    try:
        with session.begin_nested():
            session.add(found)
            session.flush()
    except IntegrityError:
        raise NotFound("Award Emoji Name has already been taken") from None
    return found


def remove(session: Session, actor, awardable_type: str, awardable_id: int, award_id: int) -> None:
    """Take back award AWARD_ID of AWARDABLE_TYPE AWARDABLE_ID: its user may, and an administrator
    (GitLab's rule; 403 for anybody else); 404 `404 Award Emoji Not Found` when there is no such award."""
    found = session.get(AwardEmoji, award_id) if is_id(award_id) else None
    if found is None or (found.awardable_type, found.awardable_id) != (awardable_type, awardable_id):
        raise AwardEmojiNotFound()
    if found.user_id != actor.id and not actor.is_admin:
        raise Forbidden()
    session.delete(found)
    session.flush()


def forget_request(session: Session, mr_id: int) -> None:
    """Delete the emoji awarded to request MR_ID and to its notes: what deleting the request must do
    first (awards name what they are on by type and id, with no foreign key to cascade)."""
    on_notes = select(Note.id).where(Note.merge_request_id == mr_id)
    session.execute(delete(AwardEmoji).where(or_(
        and_(AwardEmoji.awardable_type == MERGE_REQUEST_AWARDABLE, AwardEmoji.awardable_id == mr_id),
        and_(AwardEmoji.awardable_type == NOTE_AWARDABLE, AwardEmoji.awardable_id.in_(on_notes)),
    )))  # fmt: skip
