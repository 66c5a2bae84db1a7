"""About the service itself: a health check and the metrics (the OpenAPI document is `api/openapi.py`'s)."""

from __future__ import annotations

import ipaddress

from sqlalchemy import text
from starlette.responses import Response

from ... import metrics
from ...errors import NotFound
from ...http.context import Ctx
from ...http.routing import Routes
from ...jobs import queue

routes = Routes()  # mounted at the root, outside the API


@routes.get("/-/health", auth="none", summary="Health check: the database answers")
def health(ctx: Ctx) -> dict[str, str]:
    ctx.session.execute(text("SELECT 1"))
    return {"status": "ok"}


@routes.get("/-/metrics", auth="none", summary="Prometheus metrics, for the addresses CODEYARD_METRICS_ALLOW names (404 elsewhere)")
def metrics_page(ctx: Ctx):
    if not allowed(ctx.client_address, ctx.rt.config.metrics_networks):
        raise NotFound()
    depth, oldest = queue.backlog(ctx.session)
    body = metrics.exposition([
        metrics.gauge("codeyard_job_queue_depth", "Jobs due and not yet taken by a worker", depth),
        metrics.gauge("codeyard_job_queue_oldest_due_age_seconds", "How long the oldest due job has waited", oldest),
    ])  # fmt: skip
    return Response(body, media_type=metrics.CONTENT_TYPE)


def allowed(address: str, networks) -> bool:
    """ADDRESS (the socket's peer, or a trusted proxy's X-Forwarded-For: DECISIONS C67) is in NETWORKS."""
    try:
        found = ipaddress.ip_address(address)
    except ValueError:
        return False  # "unknown", a Unix socket's peer
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        found = found.ipv4_mapped
    return any(found in network for network in networks)
