"""v4 project hook shapes: v3's hook (`entities/hooks.py`) with JSON booleans, `job_events` for
v3's `build_events`, the flags of events codeyard never sends (always false), and the hook's
recorded deliveries as v4's hook events."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

import orjson

from ..common import iso

# Events codeyard never sends: v4 clients may set them, they are not stored and read false.
NEVER_SENT = (
    "confidential_issues_events",
    "confidential_note_events",
    "pipeline_events",
    "wiki_page_events",
    "deployment_events",
    "releases_events",
    "feature_flag_events",
    "emoji_events",
    "milestone_events",
    "repository_update_events",
    "resource_access_token_events",
)
# v4's name -> the stored flag (services.hooks.FLAGS)
STORED = {
    "push_events": "push_events",
    "issues_events": "issues_events",
    "merge_requests_events": "merge_requests_events",
    "tag_push_events": "tag_push_events",
    "note_events": "note_events",
    "job_events": "build_events",
    "enable_ssl_verification": "enable_ssl_verification",
}


class ProjectHookV4(TypedDict):
    id: int
    url: str
    project_id: int
    created_at: str | None
    push_events: bool
    push_events_branch_filter: str | None
    branch_filter_strategy: str
    issues_events: bool
    confidential_issues_events: bool
    merge_requests_events: bool
    tag_push_events: bool
    note_events: bool
    confidential_note_events: bool
    job_events: bool
    pipeline_events: bool
    wiki_page_events: bool
    deployment_events: bool
    releases_events: bool
    feature_flag_events: bool
    emoji_events: bool
    milestone_events: bool
    repository_update_events: bool
    resource_access_token_events: bool
    enable_ssl_verification: bool
    alert_status: Literal["executable", "disabled"]
    disabled_until: str | None
    url_variables: list[dict]
    custom_headers: list[dict]


class HookTested(TypedDict):
    message: str
    hook_id: int
    event: str
    delivery: str


class HookEvent(TypedDict):
    id: int
    url: str
    trigger: str
    request_headers: dict[str, str] | None
    request_data: dict | list[Any] | str | None
    response_headers: dict[str, str] | None
    response_body: str | None
    execution_duration: float | None
    response_status: str


def hook(row) -> ProjectHookV4:
    data = {"id": row.id, "url": row.url, "project_id": row.project_id, "created_at": iso(row.created_at)}
    data.update((name, bool(getattr(row, column))) for name, column in STORED.items())
    data.update((name, False) for name in NEVER_SENT)
    data["push_events_branch_filter"] = None
    data["branch_filter_strategy"] = "wildcard"
    data["alert_status"] = "disabled" if row.disabled_at is not None else "executable"
    data["disabled_until"] = None
    data["url_variables"] = []
    data["custom_headers"] = []
    return data


def trigger(event: str) -> str:
    """GitLab's trigger name of an X-Gitlab-Event ("Push Hook" -> "push_hooks")."""
    return event.lower().replace(" hook", "_hooks").replace(" ", "_")


def event(row) -> HookEvent:
    """One recorded delivery attempt (a `hook_deliveries` row) as v4 shows a hook's event."""
    try:
        data = orjson.loads(row.request_body) if row.request_body else None
    except orjson.JSONDecodeError:
        data = row.request_body
    status = str(row.response_status) if row.response_status is not None else "internal error"
    return {
        "id": row.id,
        "url": row.url,
        "trigger": trigger(row.event),
        "request_headers": row.request_headers,
        "request_data": data,
        "response_headers": row.response_headers,
        "response_body": row.response_body,
        "execution_duration": row.duration,
        "response_status": status,
    }
