"""The project hook entity. Its flags are the strings "true"/"false" (reference DECISIONS row 5);
the token is never shown; a hook disabled by failed deliveries says why and since when."""

from __future__ import annotations

from typing import TypedDict

from .common import iso


class Hook(TypedDict):
    id: int
    url: str
    project_id: int
    push_events: str
    issues_events: str
    merge_requests_events: str
    tag_push_events: str
    note_events: str
    build_events: str
    enable_ssl_verification: str
    created_at: str | None
    disabled_at: str | None
    disabled_reason: str | None


class Queued(TypedDict):
    hook_id: int
    event: str
    delivery: str


class Delivery(TypedDict):
    id: int
    hook_id: int
    delivery: str
    event: str
    attempt: int
    url: str
    response_status: int | None
    success: bool
    duration: float | None
    error: str | None
    created_at: str | None


class Exchange(TypedDict):
    headers: dict[str, str] | None
    body: str | None


class DeliveryDetail(Delivery, total=False):
    request: Exchange
    response: Exchange


FLAGS = (
    "push_events",
    "issues_events",
    "merge_requests_events",
    "tag_push_events",
    "note_events",
    "build_events",
    "enable_ssl_verification",
)


def flag(value: bool) -> str:
    return "true" if value else "false"


def hook(row) -> Hook:
    data = {"id": row.id, "url": row.url, "project_id": row.project_id}
    data.update((name, flag(getattr(row, name))) for name in FLAGS)
    data["created_at"] = iso(row.created_at)
    data["disabled_at"] = iso(row.disabled_at)
    data["disabled_reason"] = row.disabled_reason
    return data


def queued(delivery: dict) -> Queued:
    """A delivery put in the queue (test, redeliver): hook_id, event, delivery (its id)."""
    return {"hook_id": delivery["hook_id"], "event": delivery["event"], "delivery": delivery["delivery"]}


def delivery(row, full: bool = False) -> DeliveryDetail:
    """One recorded attempt; FULL adds the request and response bodies and headers."""
    data = {
        "id": row.id,
        "hook_id": row.hook_id,
        "delivery": row.delivery,
        "event": row.event,
        "attempt": row.attempt,
        "url": row.url,
        "response_status": row.response_status,
        "success": row.response_status is not None and 200 <= row.response_status < 300,
        "duration": row.duration,
        "error": row.error,
        "created_at": iso(row.created_at),
    }
    if full:
        data["request"] = {"headers": row.request_headers, "body": row.request_body}
        data["response"] = {"headers": row.response_headers, "body": row.response_body}
    return data
