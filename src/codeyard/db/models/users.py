"""Who: users, the namespaces that hold projects, tokens that authenticate, and tombstones of deletions."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import Base, JsonList, UtcDateTime, utcnow

# Tables keep AUTOINCREMENT on SQLite so a deleted row's id is never handed out again
# (tombstones and webhook payloads refer to ids).
NO_ID_REUSE = {"sqlite_autoincrement": True}


class User(Base):
    __tablename__ = "users"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(255))
    email: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    password_digest: Mapped[str | None] = mapped_column(String(255))
    state: Mapped[str] = mapped_column(String(16), default="active")
    bio: Mapped[str | None] = mapped_column(String(255))
    website_url: Mapped[str] = mapped_column(String(255), default="")
    profnet: Mapped[str] = mapped_column(String(255), default="")
    messenger: Mapped[str] = mapped_column(String(255), default="")
    microblog: Mapped[str] = mapped_column(String(255), default="")
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    external: Mapped[bool] = mapped_column(Boolean, default=False)
    projects_limit: Mapped[int] = mapped_column(Integer)
    can_create_group: Mapped[bool] = mapped_column(Boolean, default=True)
    sign_in_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)
    confirmed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    current_sign_in_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    last_sign_in_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)

    namespace: Mapped[Namespace] = relationship(
        primaryjoin="and_(Namespace.owner_id == User.id, Namespace.kind == 'user')",
        uselist=False,
        viewonly=True,
    )

    @property
    def blocked(self) -> bool:
        return self.state == "blocked"


class Namespace(Base):
    """Where projects live: a user's personal namespace (kind 'user') or a group (kind 'group')."""

    __tablename__ = "namespaces"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    path: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(8))
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    description: Mapped[str] = mapped_column(String(2000), default="")
    visibility_level: Mapped[int] = mapped_column(Integer, default=20)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)

    owner: Mapped[User | None] = relationship(foreign_keys=[owner_id])


# Usernames, e-mails and namespace paths are unique whatever their case.
Index("uq_users_username_lower", func.lower(User.username), unique=True)
Index("uq_users_email_lower", func.lower(User.email), unique=True)
Index("uq_namespaces_path_lower", func.lower(Namespace.path), unique=True)


class Email(Base):
    """A user's secondary e-mail address (API v4's `/user/emails`). Unique across users, whatever its
    case, and never anyone's primary e-mail (the services check both)."""

    __tablename__ = "emails"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(255))
    confirmed_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


Index("uq_emails_email_lower", func.lower(Email.email), unique=True)


class Token(Base):
    """A credential stored as the SHA-256 digest of its secret: 'private' tokens, 'oauth' access
    tokens, and 'personal' and 'impersonation' access tokens, which carry scopes (migration 0017).
    A personal or impersonation token's `expires_at` is the end (midnight UTC) of its expiry date."""

    __tablename__ = "tokens"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    scopes: Mapped[list[str]] = mapped_column(JsonList, default=list)  # a personal or impersonation token's; the others may do all
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)


class Tombstone(Base):
    """Remembers a deleted object, so that a repeated DELETE answers 200 instead of 404."""

    __tablename__ = "tombstones"

    kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    object_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    label: Mapped[str] = mapped_column(String(512), default="")
    namespace_id: Mapped[int | None] = mapped_column(Integer)  # where a deleted project lived
    deleted_by_id: Mapped[int | None] = mapped_column(Integer)
    deleted_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class PasswordFailure(Base):
    """One failed password attempt, kept for the throttle's window (`services.passwords`).
    `user_id` is empty when the login named nobody: then only the address counts."""

    __tablename__ = "password_failures"
    __table_args__ = (
        Index("ix_password_failures_user_id_created_at", "user_id", "created_at"),
        Index("ix_password_failures_address_created_at", "address", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    address: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)


class WebSession(Base):
    """A signed-in browser: the SHA-256 digest of its cookie's secret. Signing out deletes the row,
    so the cookie stops working at once; `expires_at` is null when sessions do not expire."""

    __tablename__ = "web_sessions"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
