"""Commit statuses (GitLab 8.6 lib/api/commit_statuses.rb): the statuses of one commit, which are its
builds. Reading needs `read_commit_status` (reporters; everyone who can read a public or internal
project)."""

from __future__ import annotations

from ...entities.builds import CommitStatus, commit_status
from ...services import repository
from ...services.ci import builds
from .. import paging
from ..context import Ctx
from ..guards import project_guard
from ..params import Bool, Str
from ..registry import API

READ = (project_guard("read_commit_status"),)
FILTERS = (
    Str("ref", max_length=255, doc="Only statuses of this ref"),
    Str("stage", max_length=255, doc="Only statuses of this stage"),
    Str("name", max_length=255, doc="Only statuses with this name"),
    Bool("all", doc="Every status, retried builds too (default: the latest of each)"),
)


@API.get(
    "/projects/:id/repository/commits/:sha/statuses",
    guards=READ,
    paginated=True,
    params=FILTERS,
    summary="The commit's statuses (its builds), oldest first; 404 for a commit the repository lacks",
)
async def list_statuses(ctx: Ctx) -> paging.Page[CommitStatus]:
    # 404 Commit Not Found for a name the repository cannot resolve; a branch or short sha stands for its commit.
    info = await ctx.off_loop(repository.commit, ctx.rt, ctx.project, ctx.path_params["sha"])
    window = paging.window(ctx)
    filters = {field: ctx.args.get(field) for field in ("ref", "stage", "name")}
    total, found = builds.statuses(
        ctx.session, ctx.project, info.id, filters, bool(ctx.args.get("all")), window.offset, window.limit
    )
    return paging.Page([commit_status(b, ctx.view) for b in found], total, window)
