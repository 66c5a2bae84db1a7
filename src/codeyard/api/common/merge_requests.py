"""The merge request a request names, for both API versions."""

from __future__ import annotations

from ...http.context import Ctx
from ...services.merge_requests import records


def request_of(ctx: Ctx):
    """The merge request `:merge_request_id` names in the guarded project; 404 `404 Not found`."""
    return records.find(ctx.session, ctx.project_id, ctx.path_int("merge_request_id"))
