"""Branches in v4: list (searched), one, create, delete, and the removal of merged branches.

Names with slashes arrive whole or URL-encoded (`feature/x`, `feature%2Fx`): `*branch` takes both.
Creation and deletion are pushes (services/branches.py): the caller's push rights and the branch's
protection decide them, and they are recorded like a `git push`.
"""

from __future__ import annotations

from typing import TypedDict

from ...entities.v4 import branches as entities
from ...http import paging
from ...http.context import Ctx
from ...http.params import GitText, Str
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import branches, protected_branches
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
PUSH = (project_guard(policy.DOWNLOAD_CODE, policy.PUSH_CODE),)
BRANCHES = "/projects/:id/repository/branches"


class DeletionAccepted(TypedDict):
    message: str


def _rendered(ctx: Ctx, found: list[branches.Listed]) -> list[entities.BranchV4]:
    url = entities.project_url(ctx.view, ctx.project_row)
    return [entities.branch(one, url) for one in found]


@routes.get(
    BRANCHES,
    guards=READ,
    auth="optional",
    paginated=True,
    params=(Str("search", max_length=255, doc="Names containing it; `^x` starting, `x$` ending with x"),),
    summary="Branches, sorted by name",
)
async def list_branches(ctx: Ctx) -> paging.Page[entities.BranchV4]:
    window = paging.window(ctx)
    protected = await protected_branches.read_protections(ctx.rt.db, ctx.project_id)

    def read() -> tuple[int, list[branches.Listed]]:
        total, found = branches.page(ctx.rt, ctx.project_row, ctx.args.get("search"), window.offset, window.limit)
        return total, branches.listed(ctx.rt, ctx.project_row, found, protected, ctx.access, ctx.by_admin)

    total, found = await ctx.off_loop(read)
    return paging.Page(_rendered(ctx, found), total, window)


@routes.get(BRANCHES + "/*branch", guards=READ, auth="optional", summary="A branch")
async def get_branch(ctx: Ctx) -> entities.BranchV4:
    name = ctx.path_params["branch"]
    protected = await protected_branches.read_protections(ctx.rt.db, ctx.project_id)

    def read() -> list[branches.Listed]:
        info = branches.tip(ctx.rt, ctx.project_row, name)
        return branches.listed(ctx.rt, ctx.project_row, [(name, info)], protected, ctx.access, ctx.by_admin)

    return _rendered(ctx, await ctx.off_loop(read))[0]


@routes.post(
    BRANCHES,
    guards=PUSH,
    # No max_length on branch: the service refuses a long name with GitLab's message.
    params=(GitText("branch", required=True), GitText("ref", required=True, max_length=255)),
    summary="Create a branch at a ref (a push of it: protection applies)",
)
def create_branch(ctx: Ctx) -> entities.BranchV4:
    name = ctx.args["branch"]
    created = branches.create(ctx.session, ctx.rt, ctx.project, ctx.actor, name, ctx.args["ref"], access=ctx.access)
    protected = protected_branches.protections(ctx.session, ctx.project)
    found = branches.listed(ctx.rt, ctx.project_row, [(name, created.commit)], protected, ctx.access, ctx.by_admin)
    return _rendered(ctx, found)[0]


@routes.delete(
    BRANCHES + "/*branch",
    guards=PUSH,
    status=204,
    summary="Delete a branch (not the default; a protected one by maintainers only)",
)
def delete_branch(ctx: Ctx) -> None:
    branches.remove(ctx.session, ctx.rt, ctx.project, ctx.actor, ctx.access, ctx.path_params["branch"])


@routes.delete(
    "/projects/:id/repository/merged_branches",
    guards=PUSH,
    status=202,
    summary="Delete the branches the default branch contains (not protected ones; at most 1000 a request)",
)
async def delete_merged_branches(ctx: Ctx) -> DeletionAccepted:
    candidates = await ctx.off_loop(branches.merged_to_remove, ctx.rt, ctx.project_row)
    branches.remove_merged(ctx.session, ctx.rt, ctx.project, ctx.actor, candidates)
    return {"message": "202 Accepted"}
