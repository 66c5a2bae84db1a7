"""What the database knows about repositories: protected branches (the git data is on disk)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UtcDateTime, utcnow
from .users import NO_ID_REUSE


class ProtectedBranch(Base):
    """A branch only masters may push to; nobody force-pushes to or deletes it.
    With `developers_can_push`, developers may push too (default branch protection level 1)."""

    __tablename__ = "protected_branches"
    __table_args__ = (UniqueConstraint("project_id", "name"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    developers_can_push: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)


class RecordedPush(Base):
    """A push whose follow-up (`services.pushes.post_push`) is recorded, by the id of its journal
    (services/push_journal.py): written in the same transaction, so that a journal replayed after a
    crash is recorded at most once. Rows older than a day are pruned when pushes are recorded."""

    __tablename__ = "recorded_pushes"

    push_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    recorded_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)
