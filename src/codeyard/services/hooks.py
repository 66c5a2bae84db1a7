"""Project hooks: the URLs a project calls when events of the kinds its flags select happen.

Everything a delivery needs is stored as given: the URL (credentials in it included; delivery sends
them as basic auth), one flag per event kind and whether to verify TLS certificates.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db.models import Project, ProjectHook, is_id
from ..db.queries import counted_page
from ..errors import RecordNotFound

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


def create(session: Session, project: Project, url: str, flags: dict[str, Any]) -> ProjectHook:
    """A hook calling URL (already validated); flags not given take their defaults."""
    hook = ProjectHook(project_id=project.id, url=url, **{name: flags.get(name, default) for name, default in DEFAULTS.items()})
    session.add(hook)
    session.flush()
    return hook


def update(session: Session, hook: ProjectHook, url: str, flags: dict[str, Any]) -> ProjectHook:
    """Set the URL and the flags given; the others keep their values."""
    hook.url = url
    for name in FLAGS:
        if name in flags:
            setattr(hook, name, flags[name])
    session.flush()
    return hook


def delete(session: Session, project: Project, hook_id: int) -> ProjectHook | None:
    """Remove PROJECT's hook HOOK_ID; None when there is no such hook of this project."""
    hook = find(session, project, hook_id)
    if hook is not None:
        session.delete(hook)
        session.flush()
    return hook
