"""Webhook delivery: the one entry point every hook event goes through, and the delivery job.

`trigger(session, project_id, flag, payload)` enqueues one delivery per enabled hook of the project
whose FLAG is on, in the caller's transaction (pushes call it; merge requests, comments and builds
will call it with their own payloads). Each delivery has a stable id (`X-Codeyard-Delivery`) that
every attempt and redelivery repeats, so a receiver can drop what it already has: a worker that
dies after sending and before recording sends again.

`deliver` is the job: POST the body (10 s, no redirects, local addresses refused unless the
`allow_local_requests_from_hooks` setting is on), record the attempt, and tell the queue what
next: done on 2xx; again later on network errors, 5xx, 408 and 429; never again otherwise. A hook
whose attempts fail DISABLE_AFTER times in a row is disabled with the reason; editing it enables
it again.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

import orjson
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from .. import metrics
from ..db.models import ApplicationSetting, Event, HookDelivery, ProjectHook, utcnow
from ..db.queries import counted_page
from ..errors import RecordNotFound
from ..jobs import queue
from . import events, outbound
from .settings import SETTINGS_ID

KIND = "webhook.deliver"
ATTEMPTS = 5  # the first and four retries
DISABLE_AFTER = 20
# Attempts kept per hook: the newest; older ones go when a new one is recorded.
KEEP_DELIVERIES = 1000
RETRIED_STATUSES = (408, 429)
HIDDEN = "[hidden]"

# Hook flag -> the X-Gitlab-Event name of its payloads (reference 7.2).
EVENTS = {
    "push_events": "Push Hook",
    "tag_push_events": "Tag Push Hook",
    "issues_events": "Issue Hook",
    "merge_requests_events": "Merge Request Hook",
    "note_events": "Note Hook",
    "build_events": "Build Hook",
}


def trigger(session: Session, project_id: int, flag: str, payload: dict) -> int:
    """Enqueue PAYLOAD for every enabled hook of the project with FLAG on; how many."""
    return trigger_all(session, project_id, [(flag, payload)])


def trigger_all(session: Session, project_id: int, fired: list[tuple[str, dict]]) -> int:
    """`trigger` for several (flag, payload) pairs of one project, with one query for its hooks."""
    hooks = list(session.scalars(
        select(ProjectHook).where(ProjectHook.project_id == project_id, ProjectHook.disabled_at.is_(None))
    ))  # fmt: skip
    count = 0
    for flag, payload in fired:
        chosen = [hook.id for hook in hooks if getattr(hook, flag)]
        body = orjson.dumps(payload).decode() if chosen else ""
        for hook_id in chosen:
            enqueue(session, hook_id, EVENTS[flag], body)
        count += len(chosen)
    return count


def has_hooks_for(session: Session, project_id: int, flag: str) -> bool:
    """Whether an enabled hook of the project has FLAG on (so a payload is worth building)."""
    return session.scalar(select(ProjectHook.id).where(*enabled_with(flag, project_id)).limit(1)) is not None


def enabled_with(flag: str, project_id) -> tuple:
    """The conditions on project_hooks of an enabled hook of PROJECT_ID (a value or a column) with
    FLAG on."""
    return (
        ProjectHook.project_id == project_id,
        ProjectHook.disabled_at.is_(None),
        getattr(ProjectHook, flag).is_(True),
    )


def enqueue(session: Session, hook_id: int, event: str, body: str, delivery: str | None = None,
            test: bool = False) -> dict:  # fmt: skip
    """One delivery of BODY (JSON text) to the hook; DELIVERY repeats an earlier one's id."""
    data = {"hook_id": hook_id, "event": event, "delivery": delivery or str(uuid.uuid4()), "body": body}
    if test:
        data["test"] = True
    queue.enqueue(session, KIND, data, max_attempts=ATTEMPTS)
    return {"hook_id": hook_id, "event": event, "delivery": data["delivery"]}


# --- the job ---------------------------------------------------------------------------------------


def deliver(rt, job):
    """The delivery job: one attempt, recorded (with the job's end when it succeeded); raises
    queue.Retry or queue.Fail when it failed."""
    data = job.payload
    with rt.db.transaction(write=False) as session:
        hook = session.get(ProjectHook, data["hook_id"])
        if hook is None or (hook.disabled_at is not None and not data.get("test")):
            return  # deleted or disabled since: nothing to deliver
        settings = session.get(ApplicationSetting, SETTINGS_ID)
        allow_local = settings is not None and settings.allow_local_requests_from_hooks
        url, authorization = outbound.credentials(hook.url)
        token, verify = hook.token, hook.enable_ssl_verification
    body = data["body"].encode()
    headers = request_headers(data["event"], data["delivery"], body, token, authorization)
    outcome = outbound.post(url, body, headers, verify=verify, allow_local=allow_local)
    disabled = record(rt, job, url, headers, outcome)
    metrics.WEBHOOK_DELIVERIES.labels(_outcome_label(outcome)).inc()
    if outcome.ok:
        return queue.FINISHED
    reason = outcome.error or f"the receiver answered {outcome.status}"
    retried = outcome.status is None or outcome.status >= 500 or outcome.status in RETRIED_STATUSES
    if retried and not outcome.refused and not disabled:
        raise queue.Retry(reason)
    raise queue.Fail(reason)


def _outcome_label(outcome: outbound.Outcome) -> str:
    if outcome.ok:
        return "delivered"
    if outcome.refused:
        return "blocked"  # a local address, not allowed
    return "unreachable" if outcome.status is None else "rejected"


def request_headers(event: str, delivery: str, body: bytes, token: str | None, authorization: str | None) -> dict:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "codeyard-hooks",
        "X-Gitlab-Event": event,
        "X-Codeyard-Delivery": delivery,
    }
    if token:
        headers["X-Gitlab-Token"] = token
        headers["X-Codeyard-Signature"] = "sha256=" + hmac.new(token.encode(), body, hashlib.sha256).hexdigest()
    if authorization:
        headers["Authorization"] = authorization
    return headers


def record(rt, job, url: str, headers: dict, outcome: outbound.Outcome) -> bool:
    """Store the attempt and count it for the hook; whether the hook is now disabled."""
    data = job.payload
    shown = {name: (HIDDEN if name in ("X-Gitlab-Token", "Authorization") else value) for name, value in headers.items()}
    with rt.db.transaction() as session:
        if outcome.ok:
            queue.finish_in(session, job)
        hook = session.get(ProjectHook, data["hook_id"])
        if hook is None:
            return True
        session.add(HookDelivery(
            hook_id=hook.id, delivery=data["delivery"], event=data["event"], attempt=job.attempts, url=url,
            request_headers=shown, request_body=data["body"], response_status=outcome.status,
            response_headers=outcome.headers, response_body=outcome.body, duration=round(outcome.duration, 6),
            error=outcome.error,
        ))  # fmt: skip
        _forget_old_deliveries(session, hook.id)
        if outcome.ok:
            if hook.failure_count:
                hook.failure_count = 0
            return False
        session.execute(update(ProjectHook).where(ProjectHook.id == hook.id).values(failure_count=ProjectHook.failure_count + 1))
        session.refresh(hook)
        if hook.failure_count >= DISABLE_AFTER and hook.disabled_at is None:
            last = outcome.error or f"the receiver answered {outcome.status}"
            hook.disabled_at = utcnow()
            hook.disabled_reason = f"{DISABLE_AFTER} deliveries failed in a row; the last: {last}"[:1024]
        return hook.disabled_at is not None


def _forget_old_deliveries(session: Session, hook_id: int) -> None:
    """Keep the newest KEEP_DELIVERIES attempts of the hook (one indexed lookup, then a range delete)."""
    newest = select(HookDelivery.id).where(HookDelivery.hook_id == hook_id).order_by(HookDelivery.id.desc())
    cutoff = session.scalar(newest.offset(KEEP_DELIVERIES).limit(1))
    if cutoff is not None:
        session.execute(delete(HookDelivery).where(HookDelivery.hook_id == hook_id, HookDelivery.id <= cutoff))


# --- the API's reads and actions -------------------------------------------------------------------


def page(session: Session, hook: ProjectHook, offset: int, limit: int) -> tuple[int, list[HookDelivery]]:
    """The recorded attempts of HOOK, newest first."""
    query = select(HookDelivery).where(HookDelivery.hook_id == hook.id)
    return counted_page(session, query, offset, limit, HookDelivery.id.desc())


def get(session: Session, hook: ProjectHook, delivery_id: int) -> HookDelivery:
    found = session.get(HookDelivery, delivery_id)
    if found is None or found.hook_id != hook.id:
        raise RecordNotFound()
    return found


def redeliver(session: Session, hook: ProjectHook, delivery_id: int) -> dict:
    """Send a recorded delivery's body again, under the same delivery id."""
    attempt = get(session, hook, delivery_id)
    return enqueue(session, hook.id, attempt.event, attempt.request_body, attempt.delivery)


def test(session: Session, hook: ProjectHook, sample: dict) -> dict:
    """Send the payload of the project's latest push (SAMPLE when there is none) to HOOK."""
    latest = latest_push(session, hook.project_id, ("push", "tag_push"), within=1)
    payload = latest if latest is not None else sample
    event = EVENTS["tag_push_events" if payload.get("object_kind") == "tag_push" else "push_events"]
    return enqueue(session, hook.id, event, orjson.dumps(payload).decode(), test=True)


def test_event(session: Session, hook: ProjectHook, flag: str, payload: dict) -> dict:
    """Send PAYLOAD to HOOK as FLAG's event, a test (sent even while the hook is disabled)."""
    return enqueue(session, hook.id, EVENTS[flag], orjson.dumps(payload).decode(), test=True)


LATEST_PUSHES = 100  # how far back the latest push of a kind is looked for


def latest_push(session: Session, project_id: int, kinds: tuple[str, ...], within: int = LATEST_PUSHES) -> dict | None:
    """The payload of the project's latest push whose `object_kind` is among KINDS (of its last
    WITHIN pushes), or None."""
    recent = session.scalars(
        select(Event.data)
        .where(Event.project_id == project_id, Event.action == events.PUSHED)
        .order_by(Event.id.desc())
        .limit(within)
    )
    return next((data for data in recent if isinstance(data, dict) and data.get("object_kind") in kinds), None)
