"""What a request's changes leave behind: its event, its web hook (with the attributes hooks show
of it) and the system notes the service writes on it."""

from __future__ import annotations

from sqlalchemy.orm import Session

from ...db.models import MergeRequest, Note, Project
from ...entities import merge_request_hooks as hook_entities
from ...entities.common import View
from ...git import merge_refs, repo
from .. import events, webhooks
from ..repository import path_of, reading


def source_of(session: Session, mr: MergeRequest) -> Project | None:
    """The request's source project; None once a deleted fork took it away."""
    return session.get(Project, mr.source_project_id) if mr.source_project_id else None


def record(session: Session, rt, project: Project, actor, mr: MergeRequest, action: int, hook_action: str) -> None:
    """ACTOR's ACTION on MR in PROJECT: its event, then its hook (HOOK_ACTION)."""
    events.record(session, project, actor.id, action, target_id=mr.id, target_type="MergeRequest", title=mr.title)
    hook(session, rt, project, actor, mr, hook_action)


def attributes(session: Session, rt, view: View, mr: MergeRequest) -> dict:
    """MR as its hooks show it (and the Note Hooks of its comments), its last commit its head's."""
    source = source_of(session, mr)
    target = session.get(Project, mr.target_project_id)
    last = None
    with reading(target.id, "Repository"):
        path = path_of(rt, target)
        head = merge_refs.head_sha(path, mr.iid)
        if head is not None:
            last = repo.commit(path, head)
    return hook_entities.merge_request_attributes(view, mr, source, target, last)


def hook(session: Session, rt, project: Project, actor, mr: MergeRequest, action: str) -> None:
    """Fire PROJECT's Merge Request Hooks for ACTION on MR by ACTOR."""
    view = rt.view()
    payload = hook_entities.merge_request_payload(view, actor, project, mr, attributes(session, rt, view, mr), action)
    webhooks.trigger(session, project.id, "merge_requests_events", payload)


def system_note(session: Session, mr: MergeRequest, author_id: int | None, text: str) -> Note:
    """A note the service writes on MR (caused by AUTHOR_ID): no event, no hook, nobody edits it."""
    note = Note(project_id=mr.target_project_id, merge_request_id=mr.id, author_id=author_id, note=text, system=True)
    session.add(note)
    return note

