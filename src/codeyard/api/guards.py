"""Route guards: run after authentication and before parameter validation (GitLab's order).

`project_guard(ability)` loads the project named by `:id` (an id or `namespace%2Fpath`) and the
caller's access to it through `services.loader`: a project the caller may not read is 404
`404 Project Not Found`, never 403; a readable project without ABILITY is 403.
"""

from __future__ import annotations

from sqlalchemy import Row

from ..db.models import Project
from ..db.readers import now
from ..errors import Forbidden, NotFound
from ..http.context import Ctx
from ..http.refusals import load_error
from ..policies import projects as policy
from ..policies.projects import Access
from ..policies.users import anonymous_reads_users
from ..services import loader, settings
from ..services.merge_requests import reads as merge_request_reads


def _checked(found: loader.Loaded, not_found: str) -> tuple[Row, Access]:
    if found.refusal is not None:
        raise load_error(found.refusal, not_found)
    return found.row, found.access


async def find_project(ctx: Ctx, param: str = "id", not_found: str = "Project", needed=()) -> tuple[Row, Access]:
    """(entity row, access) of the project named by the path parameter PARAM, if the caller can read
    it and has every ability in NEEDED: one prebuilt statement awaited on `db.loop` (PostgreSQL's
    round trip does not hold the loop), no ORM."""
    found = await loader.project(ctx.rt.db.loop, ctx.path_params[param], ctx.actor, needed)
    return _checked(found, not_found)


def load_project(ctx: Ctx, param: str = "id", not_found: str = "Project") -> tuple[Project, Access]:
    """`find_project` for a handler that changes the project: read in the request's transaction
    (`ctx.reader`), with the project's model loaded in its session."""
    row, access = _checked(now(loader.project(ctx.reader, ctx.path_params[param], ctx.actor)), not_found)
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
        ctx.project_row, ctx.access = await find_project(ctx, needed=needed)

    guard.__name__ = "needs_" + "_and_".join(needed)
    guard.loads = "project"  # what the route guard test looks for
    return guard


READ = project_guard()
ADMIN = project_guard(policy.ADMIN_PROJECT)


def group_guard(*abilities: str):
    """Find the group named by `:id` (an id or path) on the read path: 404 `404 Group Not Found`
    when the caller may not read it, 403 when a further ability in ABILITIES is missing. Its row is
    loaded only when the handler reads `ctx.group`."""

    async def guard(ctx: Ctx) -> None:
        found = await loader.group(ctx.rt.db, ctx.path_params["id"], ctx.actor, abilities)
        if found.refusal is not None:
            raise load_error(found.refusal, "Group")
        ctx.group_row, ctx.group_abilities = found.row, found.abilities

    guard.__name__ = "group_needs_" + ("_and_".join(abilities) or "read")
    guard.loads = "group"
    return guard


async def merge_request_iid(ctx: Ctx) -> None:
    """After a project guard: `:merge_request_iid` (v4's name for a request, its number in the
    project) becomes the request's global id in `:merge_request_id`, where the handlers, v3's too,
    read it; 404 `404 Not found` when the project has no request so numbered."""
    iid = ctx.path_int("merge_request_iid")
    mr_id = await merge_request_reads.id_of_iid(ctx.rt.db.loop, ctx.project_id, iid)
    ctx.path_params = {**ctx.path_params, "merge_request_id": str(mr_id)}


def users_guard(refusal=Forbidden):
    """Users are readable without a token unless the public visibility level is restricted (GitLab:
    the directory is then 403, a user or their projects 404 `404 User Not Found`). The settings
    are read for anonymous callers only."""

    def guard(ctx: Ctx) -> None:
        if ctx.actor is None and not anonymous_reads_users(settings.load(ctx.session).restricted_visibility_levels):
            raise refusal()

    return guard
