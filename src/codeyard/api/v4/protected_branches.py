"""Protected branches in v4: who may push, merge and unprotect (access levels) and whether force
pushes are taken. Names are exact branch names (no wildcards); a protection may name a branch that
does not exist yet, and then applies to its creation. Git pushes, API commits and branch creation,
and merge request acceptance enforce the levels (policies/branches.py)."""

from __future__ import annotations

from ...entities.v4 import protected_branches as entities
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, GitText, Str
from ...http.routing import Routes
from ...policies import branches as branch_policy
from ...policies import projects as policy
from ...services import protected_branches
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
ADMIN = (project_guard(policy.DOWNLOAD_CODE, policy.ADMIN_PROJECT),)
PROTECTED = "/projects/:id/protected_branches"

LEVELS = (
    Choice("push_access_level", branch_policy.PUSH_LEVELS, doc="Who may push: 0 no one, 30 developers, 40 maintainers, 60 admins"),
    Choice("merge_access_level", branch_policy.MERGE_LEVELS, doc="Who may merge into it (same levels)"),
    Choice("unprotect_access_level", branch_policy.UNPROTECT_LEVELS, doc="Who may unprotect it: 30 or 40 maintainers, 60 admins"),
    Bool("allow_force_push", doc="Those who may push may also force-push"),
)  # fmt: skip


def _levels(ctx: Ctx) -> protected_branches.Levels:
    args = ctx.args
    return protected_branches.Levels(args.get("push_access_level"), args.get("merge_access_level"),
                                     args.get("unprotect_access_level"), args.get("allow_force_push"))  # fmt: skip


@routes.get(
    PROTECTED,
    guards=READ,
    auth="optional",
    paginated=True,
    params=(Str("search", max_length=255, doc="Names containing it"),),
    summary="Protected branches, sorted by name",
)
async def list_protected(ctx: Ctx) -> paging.Page[entities.ProtectedBranchV4]:
    window = paging.window(ctx)
    found = await protected_branches.read_protections(ctx.rt.db, ctx.project_id)
    rows = protected_branches.searched(found, ctx.args.get("search"))
    page = rows[window.offset : window.offset + window.limit]
    return paging.Page([entities.protected_branch(row) for row in page], len(rows), window)


@routes.get(PROTECTED + "/*name", guards=READ, auth="optional", summary="One protected branch")
def get_protected(ctx: Ctx) -> entities.ProtectedBranchV4:
    return entities.protected_branch(protected_branches.get(ctx.session, ctx.project_row, ctx.path_params["name"]))


@routes.post(
    PROTECTED,
    guards=ADMIN,
    params=(GitText("name", required=True, max_length=255), *LEVELS),
    summary="Protect a branch (existing or not); levels default to maintainers",
)
def protect(ctx: Ctx) -> entities.ProtectedBranchV4:
    return entities.protected_branch(protected_branches.create(ctx.session, ctx.project_row, ctx.args["name"], _levels(ctx)))


@routes.route("PATCH", PROTECTED + "/*name", guards=ADMIN, params=LEVELS, summary="Change a protection's levels or force pushes")
def change_protection(ctx: Ctx) -> entities.ProtectedBranchV4:
    changed = protected_branches.change(ctx.session, ctx.project_row, ctx.path_params["name"], _levels(ctx))
    return entities.protected_branch(changed)


@routes.delete(PROTECTED + "/*name", guards=ADMIN, status=204, summary="Unprotect a branch")
def unprotect(ctx: Ctx) -> None:
    admin = ctx.by_admin
    protected_branches.remove(ctx.session, ctx.project_row, ctx.path_params["name"], ctx.access, admin)
