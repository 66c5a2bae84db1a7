"""Branches: list, get, protect, unprotect, create, delete. Names may contain slashes."""

from __future__ import annotations

from ...entities.commits import Branch, DeletedBranch
from ...entities.commits import branch as branch_entity
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, GitText
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import branches, protected_branches, repository
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
ADMIN = (project_guard(policy.DOWNLOAD_CODE, policy.ADMIN_PROJECT),)
PUSH = (project_guard(policy.DOWNLOAD_CODE, policy.PUSH_CODE),)
BRANCHES = "/projects/:id/repository/branches"


@routes.get(BRANCHES, guards=READ, paginated=True, summary="Branches, sorted by name")
async def list_branches(ctx: Ctx) -> paging.Page[Branch]:
    window = paging.window(ctx)
    protected = await protected_branches.read_protections(ctx.rt.db, ctx.project_id)
    total, found = await ctx.off_loop(repository.branches, ctx.rt, ctx.project_row, window.offset, window.limit)
    listed = [branch_entity(branches.Branch(name, info, protected.get(name))) for name, info in found]
    return paging.Page(listed, total, window)


@routes.get(BRANCHES + "/*branch", guards=READ, summary="A branch")
async def get_branch(ctx: Ctx) -> Branch:
    name = ctx.path_params["branch"]
    info = await ctx.off_loop(branches.tip, ctx.rt, ctx.project_row, name)
    protected = await protected_branches.read_protections(ctx.rt.db, ctx.project_id)
    return branch_entity(branches.Branch(name, info, protected.get(name)))


@routes.put(
    BRANCHES + "/*branch/protect",
    guards=ADMIN,
    params=(Bool("developers_can_push", doc="Developers may push (nobody force-pushes or deletes)"),),
    summary="Protect a branch (idempotent)",
)
def protect_branch(ctx: Ctx) -> Branch:
    found = branches.protect(ctx.session, ctx.rt, ctx.project, ctx.path_params["branch"], ctx.args.get("developers_can_push"))
    return branch_entity(found)


@routes.put(BRANCHES + "/*branch/unprotect", guards=ADMIN, summary="Unprotect a branch (idempotent)")
def unprotect_branch(ctx: Ctx) -> Branch:
    return branch_entity(branches.unprotect(ctx.session, ctx.rt, ctx.project, ctx.path_params["branch"]))


@routes.post(
    BRANCHES,
    guards=PUSH,
    # No max_length on branch_name: the service refuses a long name with GitLab's message.
    params=(GitText("branch_name", required=True), GitText("ref", required=True, max_length=255)),
    summary="Create a branch at a ref",
)
def create_branch(ctx: Ctx) -> Branch:
    found = branches.create(ctx.session, ctx.rt, ctx.project, ctx.actor, ctx.args["branch_name"], ctx.args["ref"],
                            access=ctx.access)  # fmt: skip
    return branch_entity(found)


@routes.delete(BRANCHES + "/*branch", guards=PUSH, summary="Delete a branch (not the default or a protected one)")
def delete_branch(ctx: Ctx) -> DeletedBranch:
    name = ctx.path_params["branch"]
    branches.delete(ctx.session, ctx.rt, ctx.project, ctx.actor, name)
    return {"branch_name": name}
