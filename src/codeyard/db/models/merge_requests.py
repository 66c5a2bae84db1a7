"""Merge requests, and the comments (notes) on them and on commits."""

from __future__ import annotations

import datetime as dt
import re
import secrets

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, func, select
from sqlalchemy.ext.hybrid import hybrid_property
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import Base, JsonList, UtcDateTime, utcnow
from .users import NO_ID_REUSE, User

OPENED, REOPENED, CLOSED, MERGED = "opened", "reopened", "closed", "merged"
OPEN_STATES = (OPENED, REOPENED)
LOCKED = "locked"  # while its merge commit is written (GitLab's transient state)
UNCHECKED, CAN_BE_MERGED, CANNOT_BE_MERGED = "unchecked", "can_be_merged", "cannot_be_merged"
# A title starting with [WIP], WIP: or "WIP " marks work in progress (GitLab 8).
WIP = re.compile(r"\A\s*(\[WIP\]|WIP:|WIP\s)", re.IGNORECASE)


class MergeRequest(Base):
    """`id` is global (used in paths), `iid` counts within the target project."""

    __tablename__ = "merge_requests"
    __table_args__ = (
        UniqueConstraint("target_project_id", "iid"),
        Index("ix_merge_requests_source", "source_project_id", "source_branch"),
        NO_ID_REUSE,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    iid: Mapped[int] = mapped_column(Integer)
    target_project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    # A fork's requests stay in the upstream when the fork goes (they are closed first).
    source_project_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id", ondelete="SET NULL"))
    source_branch: Mapped[str] = mapped_column(String(255))
    target_branch: Mapped[str] = mapped_column(String(255))
    title: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16), default=OPENED)
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    assignee_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    labels: Mapped[list] = mapped_column(JsonList, default=list)
    merge_when_build_succeeds: Mapped[bool] = mapped_column(Boolean, default=False)
    merge_user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    merge_params: Mapped[dict | None] = mapped_column(JSON)
    merge_status: Mapped[str] = mapped_column(String(32), default=UNCHECKED)
    merge_commit_sha: Mapped[str | None] = mapped_column(String(40))
    # What the request showed when it was merged or closed: its changes from the merge base to its
    # head, both kept reachable by its head ref. Null while it is open, and for requests merged or
    # closed before these were recorded (they are compared with their target branch as it is now).
    diff_base_sha: Mapped[str | None] = mapped_column(String(40))
    diff_head_sha: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)

    author: Mapped[User | None] = relationship(foreign_keys=[author_id])
    assignee: Mapped[User | None] = relationship(foreign_keys=[assignee_id])

    @hybrid_property
    def open(self) -> bool:
        """Opened or reopened; also a query condition (`where(MergeRequest.open)`)."""
        return self.state in OPEN_STATES

    @open.inplace.expression
    @classmethod
    def _open_expression(cls):
        return cls.state.in_(OPEN_STATES)

    @property
    def work_in_progress(self) -> bool:
        return is_work_in_progress(self.title)


# In a request's merge parameters: remove its source branch once merged (API v4's remove_source_branch).
FORCE_REMOVE = "force_remove_source_branch"


def kept_merge_params(mr) -> dict:
    """What MR's merge parameters keep whatever becomes of an automatic merge: the removal of its
    source branch asked at its creation."""
    return {FORCE_REMOVE: True} if (mr.merge_params or {}).get(FORCE_REMOVE) else {}


# API v4's drafts: GitLab's Draft prefixes (Draft:, [Draft], (Draft)) and GitLab 8's WIP ones.
DRAFT = re.compile(r"\A\s*(\[draft\]|\(draft\)|draft:|\[wip\]|wip:|wip\s)", re.IGNORECASE)


def is_draft(title: str | None) -> bool:
    """A title marking a draft in API v4 (`is_work_in_progress` in v3's words, and Draft's)."""
    return DRAFT.match(title or "") is not None


def is_work_in_progress(title: str | None) -> bool:
    """A title starting `WIP:`, `WIP ` or `[WIP]` (any case) marks a request as work in progress."""
    return WIP.match(title or "") is not None


Index("ix_merge_requests_target_created", MergeRequest.target_project_id, MergeRequest.created_at)


MERGE_REQUEST_NOTE, COMMIT_NOTE = "MergeRequest", "Commit"
# A note's `type` (GitLab's STI class): None for a comment (its own discussion), a reply in a thread,
# or a thread's note on one line of a diff (`position`).
DISCUSSION_NOTE, DIFF_NOTE = "DiscussionNote", "DiffNote"
# What an emoji is awarded to (`AwardEmoji.awardable_type`): GitLab's class names.
MERGE_REQUEST_AWARDABLE, NOTE_AWARDABLE = "MergeRequest", "Note"


def new_discussion_id() -> str:
    """A discussion's id: 40 hex characters, as GitLab's (SHA-1 sized), not derived from anything."""
    return secrets.token_hex(20)


class Note(Base):
    """A comment on a merge request (`merge_request_id`) or on a commit (`commit_id`, optionally on one
    line of its diff: `path`, `line`, `line_type`). A `system` note is written by the service, not
    typed by its author (who caused it): it records what happened to a request and why.

    Every note belongs to a discussion (`discussion_id`): a comment is a discussion of its own; a
    thread's notes (`type` DiscussionNote, or DiffNote with its `position` on the request's diff,
    JSON text) share one. What a note is on stays in its own foreign key (`merge_request_id`,
    `commit_id`; another kind of noteable adds its own), so deleting the request deletes its notes;
    the thread columns are not the request's: `resolvable` says whether a note can be resolved
    (a thread's notes on a merge request), `resolved_at` / `resolved_by_id` whether and by whom."""

    __tablename__ = "notes"
    __table_args__ = (
        Index("ix_notes_merge_request_id_id", "merge_request_id", "id"),
        Index("ix_notes_project_id_commit_id_id", "project_id", "commit_id", "id"),
        NO_ID_REUSE,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    merge_request_id: Mapped[int | None] = mapped_column(ForeignKey("merge_requests.id", ondelete="CASCADE"))
    commit_id: Mapped[str | None] = mapped_column(String(40))
    path: Mapped[str | None] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer)
    line_type: Mapped[str | None] = mapped_column(String(8))
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    note: Mapped[str] = mapped_column(Text)
    system: Mapped[bool] = mapped_column(Boolean, default=False)
    discussion_id: Mapped[str] = mapped_column(String(40), default=new_discussion_id)
    type: Mapped[str | None] = mapped_column(String(32))
    resolvable: Mapped[bool] = mapped_column(Boolean, default=False)
    resolved_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    resolved_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    position: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)

    author: Mapped[User | None] = relationship(foreign_keys=[author_id])

    @property
    def noteable_type(self) -> str:
        return noteable_type_of(self.commit_id)


def noteable_type_of(commit_id: str | None) -> str:
    """What a note is on: a commit (it has a commit id) or a merge request."""
    return COMMIT_NOTE if commit_id is not None else MERGE_REQUEST_NOTE


def unresolved_notes(mr_id):
    """The number of request MR_ID's (a column or a bound parameter) resolvable notes nobody has
    resolved, as a scalar subquery: 0 is GitLab's `blocking_discussions_resolved`."""
    return (
        select(func.count()).select_from(Note)
        .where(Note.merge_request_id == mr_id, Note.resolvable.is_(True), Note.resolved_at.is_(None))
        .scalar_subquery()
    )  # fmt: skip


class AwardEmoji(Base):
    """An emoji a user awarded to something (`awardable_type` and `awardable_id`: a merge request or a
    note; GitLab's names, so that issues and snippets can be awarded to alike). `project_id` is the
    awardable's project: awards go with it. A user awards a name once per awardable."""

    __tablename__ = "award_emoji"
    __table_args__ = (
        UniqueConstraint("awardable_type", "awardable_id", "user_id", "name", name="uq_award_emoji_awardable_user_name"),
        NO_ID_REUSE,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    awardable_type: Mapped[str] = mapped_column(String(32))
    awardable_id: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)

    user: Mapped[User] = relationship()
