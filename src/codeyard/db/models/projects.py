"""Projects and what they own: members, group members, hooks, uploads, events, stars, fork links."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import JSON, Boolean, Date, ForeignKey, Index, Integer, String, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import Base, JsonList, UtcDateTime, utcnow
from .users import NO_ID_REUSE, Namespace, User

# Access levels and visibility levels, as numbers in the database and the API.
GUEST, REPORTER, DEVELOPER, MASTER, OWNER = 10, 20, 30, 40, 50
PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
INITIAL_BRANCH = "master"  # a project's branch before anything was pushed: what its new repository's HEAD names
NOTIFY_GLOBAL = 3


class Project(Base):
    __tablename__ = "projects"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # RESTRICT: a namespace goes only after its projects, which the services delete with their files.
    namespace_id: Mapped[int] = mapped_column(ForeignKey("namespaces.id", ondelete="RESTRICT"))
    name: Mapped[str] = mapped_column(String(255))
    path: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(String(2000))
    default_branch: Mapped[str | None] = mapped_column(String(255))
    visibility_level: Mapped[int] = mapped_column(Integer, default=PRIVATE)
    issues_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    merge_requests_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    builds_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    wiki_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    snippets_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    shared_runners_enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    public_builds: Mapped[bool] = mapped_column(Boolean, default=True)
    # CI: a build's time limit in seconds, whether runners may fetch instead of clone, and the
    # regular expression that finds the coverage figure in a finished build's trace.
    build_timeout: Mapped[int] = mapped_column(Integer, default=3600)
    build_allow_git_fetch: Mapped[bool] = mapped_column(Boolean, default=True)
    build_coverage_regex: Mapped[str | None] = mapped_column(String(255))
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    tag_list: Mapped[list] = mapped_column(JsonList, default=list)
    import_url: Mapped[str | None] = mapped_column(String(2048))
    creator_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    # The runners token is derived from the server's secret key and this nonce (services/projects);
    # only its digest is stored, for finding the project a runner names.
    runners_token_nonce: Mapped[str] = mapped_column(String(32))
    runners_token_digest: Mapped[str] = mapped_column(String(64), unique=True)
    # Lists sort by creation by default, and often by activity.
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)
    last_activity_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)

    namespace: Mapped[Namespace] = relationship(lazy="joined", innerjoin=True)
    creator: Mapped[User | None] = relationship()

    @property
    def path_with_namespace(self) -> str:
        return f"{self.namespace.path}/{self.path}"

    @property
    def public(self) -> bool:
        return self.visibility_level == PUBLIC

    @property
    def head_branch(self) -> str:
        """The default branch; before anything was pushed, the branch the new repository's HEAD names."""
        return self.default_branch or INITIAL_BRANCH


# (namespace, created_at): the projects of a user's namespaces in the lists' default order, read
# from index entries alone (`services.project_reads`); every lookup by namespace uses it too.
Index("ix_projects_namespace_id_created_at", Project.namespace_id, Project.created_at)
Index("uq_projects_namespace_path", Project.namespace_id, func.lower(Project.path), unique=True)
Index("uq_projects_namespace_name", Project.namespace_id, func.lower(Project.name), unique=True)


class ProjectMember(Base):
    __tablename__ = "project_members"
    # (user, project): the lists of a user's projects read only this index.
    __table_args__ = (
        UniqueConstraint("project_id", "user_id"),
        Index("ix_project_members_user_id_project_id", "user_id", "project_id"),
        NO_ID_REUSE,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    access_level: Mapped[int] = mapped_column(Integer)
    notification_level: Mapped[int] = mapped_column(Integer, default=NOTIFY_GLOBAL)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)

    user: Mapped[User] = relationship(foreign_keys=[user_id])


class GroupMember(Base):
    __tablename__ = "group_members"
    # (user, namespace): the lists of a user's projects read only this index.
    __table_args__ = (
        UniqueConstraint("namespace_id", "user_id"),
        Index("ix_group_members_user_id_namespace_id", "user_id", "namespace_id"),
        NO_ID_REUSE,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    namespace_id: Mapped[int] = mapped_column(ForeignKey("namespaces.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    access_level: Mapped[int] = mapped_column(Integer)
    notification_level: Mapped[int] = mapped_column(Integer, default=NOTIFY_GLOBAL)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)

    user: Mapped[User] = relationship(foreign_keys=[user_id])


class ProjectHook(Base):
    __tablename__ = "project_hooks"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    push_events: Mapped[bool] = mapped_column(Boolean, default=True)
    issues_events: Mapped[bool] = mapped_column(Boolean, default=False)
    merge_requests_events: Mapped[bool] = mapped_column(Boolean, default=False)
    tag_push_events: Mapped[bool] = mapped_column(Boolean, default=False)
    note_events: Mapped[bool] = mapped_column(Boolean, default=False)
    build_events: Mapped[bool] = mapped_column(Boolean, default=False)
    enable_ssl_verification: Mapped[bool] = mapped_column(Boolean, default=True)
    # Sent as X-Gitlab-Token and used to sign deliveries, so stored as given; never shown back.
    token: Mapped[str | None] = mapped_column(String(255))
    failure_count: Mapped[int] = mapped_column(Integer, default=0)  # failed attempts in a row
    disabled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime)
    disabled_reason: Mapped[str | None] = mapped_column(String(1024))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)


class Upload(Base):
    """A file attached to a project, stored under <data>/uploads/<project id>/<secret>/<filename>."""

    __tablename__ = "uploads"
    __table_args__ = (UniqueConstraint("project_id", "secret"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    secret: Mapped[str] = mapped_column(String(32))
    filename: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(Integer)
    content_type: Mapped[str] = mapped_column(String(255))
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class Event(Base):
    """Project activity. `action` holds GitLab's codes (services/events names them)."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_project_id_id", "project_id", "id"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    author_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    action: Mapped[int] = mapped_column(Integer)
    target_id: Mapped[int | None] = mapped_column(Integer)
    target_type: Mapped[str | None] = mapped_column(String(32))
    title: Mapped[str | None] = mapped_column(String(255))
    data: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)

    author: Mapped[User | None] = relationship()
    project: Mapped[Project] = relationship()


class Star(Base):
    __tablename__ = "stars"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True, index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class ProjectGroupLink(Base):
    """PROJECT is shared with GROUP: the group's members reach the project at their group level, at
    most GROUP_ACCESS, until EXPIRES_AT (a date; the link counts no more from that day)."""

    __tablename__ = "project_group_links"
    __table_args__ = (UniqueConstraint("project_id", "group_id"), NO_ID_REUSE)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    group_id: Mapped[int] = mapped_column(ForeignKey("namespaces.id", ondelete="CASCADE"), index=True)
    group_access: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[dt.date | None] = mapped_column(Date)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class ForkLink(Base):
    """FORKED_TO was forked from FORKED_FROM; a project has at most one source."""

    __tablename__ = "fork_links"
    __table_args__ = (NO_ID_REUSE,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    forked_to_project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), unique=True)
    forked_from_project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UtcDateTime, default=utcnow, onupdate=utcnow)
