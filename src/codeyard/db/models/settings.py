"""The instance's application settings: one row, changed by admins through the API."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .base import Base, JsonList, UtcDateTime, utcnow


class ApplicationSetting(Base):
    __tablename__ = "application_settings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    default_projects_limit: Mapped[int] = mapped_column(Integer, default=10)
    signup_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    signin_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    avatarservice_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    sign_in_text: Mapped[str | None] = mapped_column(Text)
    home_page_url: Mapped[str | None] = mapped_column(String(2048))
    default_branch_protection: Mapped[int] = mapped_column(Integer, default=2)
    socialnetwork_sharing_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    restricted_visibility_levels: Mapped[list] = mapped_column(JsonList, default=list)
    max_attachment_size: Mapped[int] = mapped_column(Integer, default=10)
    session_expire_delay: Mapped[int] = mapped_column(Integer, default=10080)
    default_project_visibility: Mapped[int] = mapped_column(Integer, default=0)
    default_snippet_visibility: Mapped[int] = mapped_column(Integer, default=0)
    default_group_visibility: Mapped[int] = mapped_column(Integer, default=0)
    restricted_signup_domains: Mapped[list] = mapped_column(JsonList, default=list)
    user_oauth_applications: Mapped[bool] = mapped_column(Boolean, default=True)
    after_sign_out_path: Mapped[str | None] = mapped_column(String(2048))
    allow_local_requests_from_hooks: Mapped[bool] = mapped_column(Boolean, default=False)
    # CI: shared runners offered to projects, the artifacts size limit in megabytes, and the
    # shared runners' registration token (derived from the server's secret key and this nonce,
    # like a project's runners token; only its digest is stored).
    shared_runners_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    max_artifacts_size: Mapped[int] = mapped_column(Integer, default=100)
    runners_registration_token_nonce: Mapped[str | None] = mapped_column(String(32))
    runners_registration_token_digest: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)
