"""The job kinds a worker runs: one explicit table, not registration by import.

A handler is `handler(rt, job)`: it returns when the work is done, raises `queue.Retry(reason)` to
run again after a back-off (until the job's attempts are used up), or `queue.Fail(reason)` to stop
for good. Any other exception is retried like `Retry`. A handler that records its effect in a
transaction of its own may end its job there too (`queue.finish_in`) and return `queue.FINISHED`. A handler may run again after it did its
effect (a worker can die before recording the outcome), so its effect carries a stable id or is
idempotent.
"""

from __future__ import annotations

from ..services import webhooks
from ..services.merge_requests import accept, reactions, rebase, status

HANDLERS = {
    webhooks.KIND: webhooks.deliver,
    accept.SETTLE_KIND: accept.settle_lock,
    reactions.AFTER_PUSH_KIND: reactions.refresh_after_push,
    status.CHECK_KIND: status.check_later,
    reactions.MWBS_KIND: accept.merge_when_build_succeeded,
    rebase.KIND: rebase.rebase_later,
}
