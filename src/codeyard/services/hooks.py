"""Project hooks: the URLs a project calls when events of the kinds its flags select happen.

Everything a delivery needs is stored as given: the URL (credentials in it included; delivery sends
them as basic auth), one flag per event kind, whether to verify TLS certificates and the token
(sent as X-Gitlab-Token and signing the body, so kept as given; never shown back). A URL naming a
local address literally is refused while the `allow_local_requests_from_hooks` setting is off
(delivery checks the address resolved too). Editing a hook enables it again after deliveries
disabled it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db.models import Project, ProjectHook, is_id
from ..db.queries import counted_page
from ..errors import Invalid, RecordNotFound
from . import outbound
from . import settings as settings_service

# Event kinds and their defaults when a hook is created (GitLab 8.6's column defaults).
DEFAULTS = {
    "push_events": True,
    "issues_events": False,
    "merge_requests_events": False,
    "tag_push_events": False,
    "note_events": False,
    "build_events": False,
    "enable_ssl_verification": True,
}
FLAGS = tuple(DEFAULTS)


def page(session: Session, project: Project, offset: int, limit: int) -> tuple[int, list[ProjectHook]]:
    query = select(ProjectHook).where(ProjectHook.project_id == project.id)
    return counted_page(session, query, offset, limit, ProjectHook.id.asc())


def find(session: Session, project: Project, hook_id: int) -> ProjectHook | None:
    """The hook HOOK_ID if it belongs to PROJECT (a second call is served from the session)."""
    hook = session.get(ProjectHook, hook_id) if is_id(hook_id) else None
    if hook is None or hook.project_id != project.id:
        return None
    return hook


def get(session: Session, project: Project, hook_id: int) -> ProjectHook:
    hook = find(session, project, hook_id)
    if hook is None:
        raise RecordNotFound()
    return hook


LOCAL_URL = "is blocked: requests to the local network are not allowed"


def check_url(session: Session, url: str) -> None:
    """400 for a URL naming a local address while local requests from hooks are not allowed."""
    if outbound.literal_local(url) and not settings_service.load(session).allow_local_requests_from_hooks:
        raise Invalid.field("url", LOCAL_URL)


def create(session: Session, project: Project, url: str, flags: dict[str, Any], token: str | None = None) -> ProjectHook:
    """A hook calling URL (already validated); flags not given take their defaults."""
    check_url(session, url)
    fields = {name: flags.get(name, default) for name, default in DEFAULTS.items()}
    hook = ProjectHook(project_id=project.id, url=url, token=token or None, failure_count=0, **fields)
    session.add(hook)
    session.flush()
    return hook


KEEP = object()


def update(session: Session, hook: ProjectHook, url: str, flags: dict[str, Any], token: Any = KEEP) -> ProjectHook:
    """Set the URL, the flags and the token given (others keep their values); enable the hook again."""
    check_url(session, url)
    hook.url = url
    for name in FLAGS:
        if name in flags:
            setattr(hook, name, flags[name])
    if token is not KEEP:
        hook.token = token or None
    hook.failure_count = 0
    hook.disabled_at = hook.disabled_reason = None
    session.flush()
    return hook


def delete(session: Session, project: Project, hook_id: int) -> ProjectHook | None:
    """Remove PROJECT's hook HOOK_ID; None when there is no such hook of this project."""
    hook = find(session, project, hook_id)
    if hook is not None:
        session.delete(hook)
        session.flush()
    return hook
