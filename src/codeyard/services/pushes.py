"""After a push: the one entry point every consequence of a push goes through.

The git transport calls `post_push` once per push, after git has updated the refs, inside a
short transaction of its own. Work here must be bounded (it delays the end of the push); anything
slow belongs in a background job that a listener enqueues.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from ..db.models import Project
from . import events


@dataclass(frozen=True)
class RefUpdate:
    ref: str  # full name: refs/heads/x or refs/tags/x
    before: str  # forty zeros for a new ref
    after: str  # forty zeros for a deleted ref


# Later capabilities (CI, webhooks) register here: listener(session, rt, project, user, updates).
LISTENERS: list[Callable] = []


def post_push(session: Session, rt, project: Project, user, updates: list[RefUpdate]) -> None:
    """Record one push event per updated ref, then tell the listeners."""
    for update in updates:
        events.record(
            session,
            project,
            user.id,
            events.PUSHED,
            data={
                "before": update.before,
                "after": update.after,
                "ref": update.ref,
                "user_id": user.id,
                "user_name": user.name,
            },
        )
    for listener in LISTENERS:
        listener(session, rt, project, user, updates)
