"""Commit status parameters and steps both API versions take (each renders its own shape)."""

from __future__ import annotations

from ...git.refs import is_ref_name
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Str, Url
from ...services import repository
from ...services.ci import builds, statuses

MAX_TEXT = 1024
POSTED = (
    Str("state", required=True, doc="pending, running, success, failed or canceled"),
    Str("ref", max_length=255, check=lambda ref: [] if is_ref_name(ref) else ["is invalid"],
        doc="The branch or tag (default: the first branch, by name, that has the commit)"),
    Str("name", max_length=255, aliases=("context",), doc="The status's label (alias `context`; default `default`)"),
    Url("target_url", max_length=MAX_TEXT, doc="An http or https URL where the status is explained"),
    Str("description", max_length=MAX_TEXT, multiline=True, doc="A short description of the status"),
)  # fmt: skip
FILTERS = (
    Str("ref", max_length=255, doc="Only statuses of this ref"),
    Str("stage", max_length=255, doc="Only statuses of this stage"),
    Str("name", max_length=255, doc="Only statuses with this name"),
    Bool("all", doc="Every status, retried builds too (default: the latest of each)"),
)


async def statuses_page(ctx: Ctx, shape) -> paging.Page:
    """A page of the statuses of `:sha` as FILTERS narrow them, each SHAPE(row, view, author) (v3's or v4's)."""
    # 404 Commit Not Found for a name the repository cannot resolve; a branch or short sha stands for its commit.
    info = await ctx.off_loop(repository.commit_by_id, ctx.rt, ctx.project_id, ctx.path_params["sha"])
    window, view = paging.window(ctx), ctx.view
    filters = {field: ctx.args.get(field) for field in builds.STATUS_FILTERS}
    total, found = await builds.read_statuses(
        ctx.rt.db, ctx.project_id, info.id, filters, bool(ctx.args.get("all")), window.offset, window.limit
    )
    return paging.Page([shape(row, view, author) for row, author in found], total, window)


async def posted_status(ctx: Ctx):
    """The status of `:sha` the request's POSTED parameters record (its Build row)."""
    info = await ctx.off_loop(repository.commit, ctx.rt, ctx.project, ctx.path_params["sha"])
    ref, tag = await ctx.off_loop(statuses.ref_for, ctx.rt, ctx.project, info.id, ctx.args.get("ref"))
    fields = {key: ctx.args.get(key) for key in ("state", "name", "target_url", "description")}
    return statuses.post(ctx.session, ctx.rt, ctx.project, ctx.actor, info.id, ref, tag, fields)
