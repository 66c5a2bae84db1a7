"""What a service answers when it does not do what it was asked: a refusal with its reason.

Services say why; the edges say how: the API turns a reason into a status and a message, the web
pages into an error page, a job into a log line (see `http/refusals.py`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    """REASON (a member of the refusing service's reason enum) and DETAIL, what the reason names
    (a sha, say), or empty."""

    reason: enum.Enum
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.detail}" if self.detail else self.reason.value
