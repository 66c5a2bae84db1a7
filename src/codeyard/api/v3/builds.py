"""Builds of a project (`/projects/:id/builds`, reference section 9): list, by commit, get, cancel,
retry, trace. Reading needs `read_build` (reporters; everyone who can read the project when
`public_builds` is on); cancel and retry need `update_build` (developers)."""

from __future__ import annotations

from starlette.responses import Response

from ...db.readers import now
from ...entities.builds import Build, build
from ...entities.commits import repo_commit
from ...errors import NotFound
from ...git.refs import is_revision
from ...http import paging
from ...http.context import Ctx
from ...http.params import Any_
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import projects
from ...services.ci import builds
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.READ_BUILD),)
UPDATE = (project_guard(policy.UPDATE_BUILD),)
SCOPE = Any_("scope", doc="A state or a hash-style list of states (scope[0]=pending&scope[1]=running): "
             "pending, running, success, failed, canceled")  # fmt: skip
SINGLE = "/projects/:id/builds/:build_id"


async def render(ctx: Ctx, found) -> Build:
    """The Build entity of FOUND (a model, as this request's transaction holds it), with its commit
    read from git off the event loop."""
    row, runner, who = now(builds.read_one(ctx.reader, found.project_id, found.id))
    return (await _with_commits(ctx, [build(row, ctx.view, None, runner, who)], [row.sha]))[0]


async def _with_commits(ctx: Ctx, shaped: list[Build], shas: list[str]) -> list[Build]:
    """SHAPED with the commit of each sha of SHAS (in their order), read from git off the event loop."""
    commits = await ctx.off_loop(builds.commits, ctx.rt, ctx.project_id, shas)
    for data, sha in zip(shaped, shas, strict=True):
        info = commits.get(sha)
        data["commit"] = repo_commit(info) if info is not None else None
    return shaped


async def _page(ctx: Ctx, sha: str | None = None) -> paging.Page[Build]:
    """One page of the project's builds (of commit SHA) on the read path: no session."""
    states = builds.scopes(ctx.args.get("scope"))
    window, view = paging.window(ctx), ctx.view
    total, listed = await builds.read_page(ctx.rt.db.loop, ctx.project_id, states, window.offset, window.limit, sha)
    shaped = [build(row, view, None, runner, who) for row, runner, who in listed]
    return paging.Page(await _with_commits(ctx, shaped, [row.sha for row, _, _ in listed]), total, window)


@routes.get("/projects/:id/builds", guards=READ, paginated=True, params=(SCOPE,), summary="Builds of a project, newest first")
async def list_builds(ctx: Ctx) -> paging.Page[Build]:
    return await _page(ctx)


@routes.get(
    "/projects/:id/repository/commits/:sha/builds",
    guards=READ,
    paginated=True,
    params=(SCOPE,),
    summary="Builds of one commit, newest first; 404 for a commit without builds",
)
async def list_commit_builds(ctx: Ctx) -> paging.Page[Build]:
    sha = ctx.path_params["sha"]
    if not is_revision(sha) or not await builds.commit_has_pipeline(ctx.rt.db, ctx.project_id, sha):
        raise NotFound()
    return await _page(ctx, sha)


@routes.get(SINGLE, guards=READ, summary="A build")
async def get_build(ctx: Ctx) -> Build:
    row, runner, who = await builds.read_one(ctx.rt.db.loop, ctx.project_id, ctx.path_int("build_id", NotFound))
    return (await _with_commits(ctx, [build(row, ctx.view, None, runner, who)], [row.sha]))[0]


@routes.post(SINGLE + "/cancel", guards=UPDATE, summary="Cancel a pending or running build (a finished one is unchanged); 201")
async def cancel_build(ctx: Ctx) -> Build:
    found = builds.find(ctx.session, ctx.project, ctx.path_int("build_id", NotFound))
    builds.cancel(ctx.session, ctx.rt, found)
    return await render(ctx, found)


@routes.post(SINGLE + "/retry", guards=UPDATE, summary="Run a build again as a new pending build; 201")
async def retry_build(ctx: Ctx) -> Build:
    found = builds.find(ctx.session, ctx.project, ctx.path_int("build_id", NotFound))
    fresh = builds.retry(ctx.session, ctx.rt, ctx.project, ctx.actor, found)
    return await render(ctx, fresh)


@routes.get(SINGLE + "/trace", guards=READ, summary="The build's log as text/plain, the project's runners token masked")
async def get_trace(ctx: Ctx):
    found = await builds.read_traced(ctx.rt.db.loop, ctx.project_id, ctx.path_int("build_id", NotFound))
    token = projects.runners_token(ctx.rt.secret_key, ctx.project_row)
    data = await ctx.off_loop(builds.masked_trace, ctx.rt, found, token)
    headers = {"content-disposition": f'infile; filename="{found.id}.log"', "x-content-type-options": "nosniff"}
    return Response(data, media_type="text/plain; charset=utf-8", headers=headers)
