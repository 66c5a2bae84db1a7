"""Background work (jobs) and the record of every webhook delivery attempt."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, UtcDateTime, utcnow
from .users import NO_ID_REUSE

PENDING, RUNNING, FAILED = "pending", "running", "failed"


class Job(Base):
    """One piece of background work. A finished job is deleted; a failed one stays with its reason."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_state_run_at", "state", "run_at"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(16), default=PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=5)
    run_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    locked_by: Mapped[str | None] = mapped_column(String(128))
    locked_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)


class HookDelivery(Base):
    """One attempt to deliver one event to one hook; attempts of the same event share `delivery`."""

    __tablename__ = "hook_deliveries"
    __table_args__ = (Index("ix_hook_deliveries_hook_id_id", "hook_id", "id"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hook_id: Mapped[int] = mapped_column(ForeignKey("project_hooks.id", ondelete="CASCADE"))
    delivery: Mapped[str] = mapped_column(String(36), index=True)
    event: Mapped[str] = mapped_column(String(64))
    attempt: Mapped[int] = mapped_column(Integer)
    url: Mapped[str] = mapped_column(String(2048))
    request_headers: Mapped[dict] = mapped_column(JSON)
    request_body: Mapped[str] = mapped_column(Text)
    response_status: Mapped[int | None] = mapped_column(Integer)
    response_headers: Mapped[dict | None] = mapped_column(JSON)
    response_body: Mapped[str | None] = mapped_column(Text)
    duration: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
