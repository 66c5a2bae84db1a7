"""What the database knows about repositories: protected branches (the git data is on disk)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.ext.hybrid import hybrid_property
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UtcDateTime, utcnow
from .users import NO_ID_REUSE


class ProtectedBranch(Base):
    """A protected branch: who may push to it and merge into it (access levels: 0 no one,
    30 developers and maintainers, 40 maintainers, 60 admins), who may unprotect it, and whether
    those who may push may also force-push. Nobody deletes it by a push.

    API v3's `developers_can_push` is derived: push level 30. Setting it sets the push and merge
    levels together (30, or 40), as v3 knew no separate merge right (GitLab 8.6 merged by push)."""

    __tablename__ = "protected_branches"
    __table_args__ = (UniqueConstraint("project_id", "name"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    push_access_level: Mapped[int] = mapped_column(Integer, default=40)
    merge_access_level: Mapped[int] = mapped_column(Integer, default=40)
    unprotect_access_level: Mapped[int] = mapped_column(Integer, default=40)
    allow_force_push: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)

    @hybrid_property
    def developers_can_push(self) -> bool:
        return self.push_access_level == DEVELOPERS

    @developers_can_push.inplace.setter
    def _developers_can_push_set(self, value: bool) -> None:
        self.push_access_level = self.merge_access_level = DEVELOPERS if value else MAINTAINERS

    @hybrid_property
    def developers_can_merge(self) -> bool:
        return self.merge_access_level == DEVELOPERS


DEVELOPERS, MAINTAINERS = 30, 40  # protected branch access levels (policies/branches.py has them all)


class RecordedPush(Base):
    """A push whose follow-up (`services.pushes.post_push`) is recorded, by the id of its journal
    (services/push_journal.py): written in the same transaction, so that a journal replayed after a
    crash is recorded at most once. Rows older than a day are pruned when pushes are recorded."""

    __tablename__ = "recorded_pushes"

    push_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    recorded_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)
