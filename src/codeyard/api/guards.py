"""Route guards: run after authentication and before parameter validation (GitLab's order).

`project_guard(ability)` loads the project named by `:id` (an id or `namespace%2Fpath`) and the
caller's access to it: a project the caller may not read is 404 `404 Project Not Found`, never 403;
a readable project without ABILITY is 403.
"""

from __future__ import annotations

from sqlalchemy import Row

from ..db.models import Project
from ..errors import Forbidden, NotFound
from ..policies import groups as group_policy
from ..policies import projects as policy
from ..policies.projects import Access
from ..services import groups, project_reads
from .context import Ctx


def find_project(ctx: Ctx, param: str = "id", not_found: str = "Project") -> tuple[Row, Access]:
    """(entity row, access) of the project named by the path parameter PARAM, if the caller can read
    it: one prebuilt statement on the fast path (`project_reads.find`), no ORM."""
    row = project_reads.find(ctx.rt.db, ctx.path_params[param], ctx.actor)
    access = readable(ctx, row, not_found)
    return row, access


async def find_project_awaited(ctx: Ctx, param: str = "id", not_found: str = "Project") -> tuple[Row, Access]:
    """`find_project` for a coroutine: `project_reads.find_awaited` (PostgreSQL's round trip does
    not hold the loop)."""
    row = await project_reads.find_awaited(ctx.rt.db, ctx.path_params[param], ctx.actor)
    access = readable(ctx, row, not_found)
    return row, access


def readable(ctx: Ctx, row, not_found: str = "Project") -> Access:
    """The caller's access to the project of ROW (a `project_reads` row, or None) if they can read
    it, else NOT_FOUND's 404."""
    access = project_reads.access(ctx.actor, row) if row is not None else None
    if access is None or not access.can(policy.READ_PROJECT):
        raise NotFound(not_found)
    return access


def load_project(ctx: Ctx, param: str = "id", not_found: str = "Project") -> tuple[Project, Access]:
    """`find_project`, with the project's row loaded in the request's session."""
    row, access = find_project(ctx, param, not_found)
    project = ctx.session.get(Project, row.id)
    if project is None:  # deleted since
        raise NotFound(not_found)
    return project, access


def project_guard(*abilities: str):
    """Find the project and require every one of ABILITIES (default: reading it). The handler gets
    its entity row (`ctx.project_row`: what repository reads need); the model is loaded only when
    it reads `ctx.project`."""
    needed = abilities or (policy.READ_PROJECT,)

    async def guard(ctx: Ctx) -> None:
        ctx.project_row, ctx.access = await find_project_awaited(ctx)
        if not all(ctx.access.can(ability) for ability in needed):
            raise Forbidden()

    guard.__name__ = "needs_" + "_and_".join(needed)
    return guard


READ = project_guard()
ADMIN = project_guard(policy.ADMIN_PROJECT)


def group_guard(*abilities: str):
    """Find the group named by `:id` (an id or path) on the read path: 404 `404 Group Not Found`
    when the caller may not read it, 403 when a further ability in ABILITIES is missing. Its row is
    loaded only when the handler reads `ctx.group`."""

    async def guard(ctx: Ctx) -> None:
        row, found = await groups.read_guarded(ctx.rt.db, ctx.path_params["id"], ctx.actor)
        if group_policy.READ_GROUP not in found:
            raise NotFound("Group")
        if not all(ability in found for ability in abilities):
            raise Forbidden()
        ctx.group_row, ctx.group_abilities = row, found

    guard.__name__ = "group_needs_" + ("_and_".join(abilities) or "read")
    return guard
