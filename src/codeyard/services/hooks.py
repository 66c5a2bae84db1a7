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

from ..db.models import MergeRequest, Note, Project, ProjectHook, is_id
from ..db.queries import counted_page
from ..entities import merge_request_hooks as hook_entities
from ..errors import Invalid, RecordNotFound, Unprocessable
from . import outbound, webhooks
from . import settings as settings_service
from .merge_requests import trail

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


# What a test of each event needs first (GitLab's words), for the events codeyard sends.
TEST_NEEDS = {
    "tag_push_events": "Ensure the project has tags.",
    "merge_requests_events": "Ensure the project has merge requests.",
    "note_events": "Ensure the project has notes.",
    "issues_events": "Ensure the project has issues.",
    "build_events": "Ensure the project has jobs.",
}


def test(session: Session, rt, project: Project, hook: ProjectHook, actor, flag: str, sample: dict) -> dict:
    """Send HOOK a test of FLAG's event (a hook flag): the latest push (SAMPLE when there is none),
    tag push, merge request or comment on one of PROJECT; 422 when the project has none."""
    if flag == "push_events":
        return webhooks.test_event(session, hook, flag, webhooks.latest_push(session, project.id, ("push",)) or sample)
    payload = None
    if flag == "tag_push_events":
        payload = webhooks.latest_push(session, project.id, ("tag_push",))
    elif flag in ("merge_requests_events", "note_events"):
        payload = _merge_request_sample(session, rt, project, actor, flag)
    if payload is None:
        raise Unprocessable(TEST_NEEDS.get(flag, "This event cannot be tested: codeyard never sends it."))
    return webhooks.test_event(session, hook, flag, payload)


def _merge_request_sample(session: Session, rt, project: Project, actor, flag: str) -> dict | None:
    """The payload of the latest merge request into PROJECT, or of the latest comment on one."""
    if flag == "note_events":
        note = session.scalars(
            select(Note).where(Note.project_id == project.id, Note.merge_request_id.is_not(None), Note.system.is_(False))
            .order_by(Note.id.desc()).limit(1)
        ).first()  # fmt: skip
        mr = session.get(MergeRequest, note.merge_request_id) if note is not None else None
    else:
        note = None
        mr = session.scalars(
            select(MergeRequest).where(MergeRequest.target_project_id == project.id).order_by(MergeRequest.id.desc()).limit(1)
        ).first()
    if mr is None:
        return None
    view = rt.view()
    attributes = trail.attributes(session, rt, view, mr)
    if note is not None:
        return hook_entities.note_payload(view, actor, project, mr, attributes, note)
    return hook_entities.merge_request_payload(view, actor, project, mr, attributes, "open")


def delete(session: Session, project: Project, hook_id: int) -> ProjectHook | None:
    """Remove PROJECT's hook HOOK_ID; None when there is no such hook of this project."""
    hook = find(session, project, hook_id)
    if hook is not None:
        session.delete(hook)
        session.flush()
    return hook
