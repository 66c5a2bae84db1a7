"""The job kinds a worker runs: one explicit table, not registration by import.

A handler is `handler(rt, job)`: it returns when the work is done, raises `queue.Retry(reason)` to
run again after a back-off (until the job's attempts are used up), or `queue.Fail(reason)` to stop
for good. Any other exception is retried like `Retry`. A handler that records its effect in a
transaction of its own may end its job there too (`queue.finish_in`) and return `queue.FINISHED`. A handler may run again after it did its
effect (a worker can die before recording the outcome), so its effect carries a stable id or is
idempotent.
"""

from __future__ import annotations

from ..services import merge_accept, merge_requests, webhooks

HANDLERS = {
    webhooks.KIND: webhooks.deliver,
    merge_accept.SETTLE_KIND: merge_accept.settle_lock,
    merge_requests.AFTER_PUSH_KIND: merge_requests.refresh_after_push,
    merge_requests.CHECK_KIND: merge_requests.check_later,
    merge_requests.MWBS_KIND: merge_accept.merge_when_build_succeeded,
}
