"""Team members of a project (`:id` is an id or `namespace%2Fpath`).

Reading needs read_project_member, changing admin_project_member (master and up); a project the
caller may not read is 404. The rules of membership are in services/members.py.
"""

from __future__ import annotations

from ...db.models import ProjectMember
from ...entities.common import Revoked
from ...entities.members import Member
from ...entities.members import member as member_entity
from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice, Id, Str
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import members
from ..guards import project_guard

routes = Routes()

READ_MEMBERS = project_guard(policy.READ_MEMBERS)
ADMIN_MEMBERS = project_guard(policy.ADMIN_MEMBERS)
LEVEL_DOC = "10 guest, 20 reporter, 30 developer, 40 master, 50 owner"


def render(ctx: Ctx, member) -> dict:
    return member_entity(member.user, member.access_level, ctx.view)


@routes.get(
    "/projects/:id/members",
    guards=(READ_MEMBERS,),
    paginated=True,
    params=(Str("query", max_length=255, doc="Part of the username or name (any case)"),),
    summary="Direct members of a project",
)
async def list_members(ctx: Ctx) -> paging.Page[Member]:
    window = paging.window(ctx)
    total, rows = await members.read_page(ctx.rt.db.loop, ProjectMember, ctx.project_id, ctx.args.get("query"), window.offset, window.limit)
    return paging.Page([member_entity(row, row.access_level, ctx.view) for row in rows], total, window)


@routes.get("/projects/:id/members/:user_id", guards=(READ_MEMBERS,), summary="One member of a project")
async def get_member(ctx: Ctx) -> Member:
    row = await members.read_one(ctx.rt.db.loop, ProjectMember, ctx.project_id, ctx.path_int("user_id"))
    return member_entity(row, row.access_level, ctx.view)


@routes.post(
    "/projects/:id/members",
    guards=(ADMIN_MEMBERS,),
    params=(
        Id("user_id", required=True),
        Choice("access_level", policy.ACCESS_LEVELS, required=True, doc=LEVEL_DOC),
    ),
    summary="Add a member (an existing member is returned unchanged)",
)
def add_member(ctx: Ctx) -> Member:
    member = members.add(ctx.session, ctx.actor, ctx.project, ctx.args["user_id"], ctx.args["access_level"])
    return render(ctx, member)


@routes.put(
    "/projects/:id/members/:user_id",
    guards=(ADMIN_MEMBERS,),
    params=(Choice("access_level", policy.ACCESS_LEVELS, required=True, doc=LEVEL_DOC),),
    summary="Change a member's access level",
)
def update_member(ctx: Ctx) -> Member:
    member = members.change_level(ctx.session, ctx.project, ctx.path_int("user_id"), ctx.args["access_level"])
    return render(ctx, member)


@routes.delete(
    "/projects/:id/members/:user_id",
    guards=(ADMIN_MEMBERS,),
    summary="Remove a member; removing a non-member succeeds too",
)
def remove_member(ctx: Ctx) -> Member | Revoked:
    user_id = ctx.path_int("user_id")
    member = members.remove(ctx.session, ctx.project, user_id)
    if member is None:
        return {"message": "Access revoked", "id": user_id}
    return render(ctx, member)
