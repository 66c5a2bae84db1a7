"""Commit statuses (GitLab 8.6 lib/api/commit_statuses.rb): the statuses of one commit, which are its
builds and the external statuses posted for it. Reading needs `read_commit_status` (reporters;
everyone who can read a public or internal project); posting needs `create_commit_status`
(developers)."""

from __future__ import annotations

from ...entities.builds import CommitStatus, commit_status
from ...http import paging
from ...http.context import Ctx
from ...http.routing import Routes
from ...policies import projects as policy
from ..common.commit_statuses import FILTERS, POSTED, posted_status, statuses_page
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.READ_COMMIT_STATUS),)
CREATE = (project_guard(policy.CREATE_COMMIT_STATUS),)


@routes.get(
    "/projects/:id/repository/commits/:sha/statuses",
    guards=READ,
    paginated=True,
    params=FILTERS,
    summary="The commit's statuses (its builds), oldest first; 404 for a commit the repository lacks",
)
async def list_statuses(ctx: Ctx) -> paging.Page[CommitStatus]:
    return await statuses_page(ctx, commit_status)




@routes.post(
    "/projects/:id/statuses/:sha",
    guards=CREATE,
    params=POSTED,
    summary="Record an external status of a commit (created, or moved while pending or running): 201 with it",
)
async def post_status(ctx: Ctx) -> CommitStatus:
    found = await posted_status(ctx)
    return commit_status(found, ctx.view, found.user)


