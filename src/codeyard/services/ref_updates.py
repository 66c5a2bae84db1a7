"""One ref a push (or a branch created, deleted or merged into through the API) moved: the value the
push steps, the push journal and the webhook payloads share."""

from __future__ import annotations

from dataclasses import dataclass

from ..git.refs import HEADS


@dataclass(frozen=True)
class RefUpdate:
    ref: str  # full name: refs/heads/x or refs/tags/x
    before: str  # forty zeros for a new ref
    after: str  # forty zeros for a deleted ref

    @property
    def branch(self) -> str | None:
        return self.ref[len(HEADS) :] if self.ref.startswith(HEADS) else None
