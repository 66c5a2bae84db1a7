"""Groups in v4: list, one group, create, edit, delete. The services and guards are v3's.

codeyard has no subgroups: `parent_id` is refused, `POST /groups/:id/transfer` is not served, and a
group's projects are listed by `GET /groups/:id/projects`, not embedded in the group."""

from __future__ import annotations

from ...entities.v4 import VISIBILITY_LEVELS
from ...entities.v4 import groups as entities
from ...errors import Conflict, Invalid
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, Id, Str
from ...http.routing import Routes
from ...policies import groups as group_policy
from ...policies.projects import ACCESS_LEVELS, OWNER
from ...services import groups
from ..common.groups import NAME, PATH
from ..guards import group_guard

routes = Routes()

READ = (group_guard(),)
ADMIN = (group_guard(group_policy.ADMIN_GROUP),)
GROUP_FIELDS = (
    Str("description", max_length=2000, nullable=True, multiline=True),
    Choice("visibility", tuple(VISIBILITY_LEVELS)),
)
LIST_PARAMS = (
    Str("search"),
    Bool("owned", doc="Only groups the caller owns"),
    Choice("min_access_level", ACCESS_LEVELS, doc="Only groups where the caller has at least this level"),
    Bool("all_available", doc="Also the groups the caller may see but is not a member of (default for admins)"),
    Choice("order_by", tuple(groups.ORDERS), doc="Default name"),
    Choice("sort", ("asc", "desc"), doc="Default asc"),
    Bool("statistics", doc="Not served: no statistics are added"),
)


def _attrs(args: dict) -> dict:
    """The service's fields from v4's parameters (`visibility` is a word)."""
    attrs = {key: value for key, value in args.items() if key != "visibility"}
    if args.get("visibility") is not None:
        attrs["visibility_level"] = VISIBILITY_LEVELS[args["visibility"]]
    return attrs


@routes.get("/groups", auth="optional", paginated=True, params=LIST_PARAMS, summary="Groups of the caller (every group for admins, the public ones without a token)")
async def list_groups(ctx: Ctx) -> paging.Page[entities.GroupV4]:
    window = paging.window(ctx)
    args, actor = ctx.args, ctx.actor
    min_level = OWNER if args.get("owned") else args.get("min_access_level", 0)
    if min_level:
        scope = groups.AT_LEAST
    elif actor is None:  # GitLab: the public groups, whatever all_available says
        scope = groups.AVAILABLE if args.get("all_available", True) else groups.MEMBER
    elif args.get("all_available", actor.is_admin):
        scope = groups.EVERY if actor.is_admin else groups.AVAILABLE
    else:
        scope = groups.MEMBER
    total, rows = await groups.read_listed(
        ctx.rt.db,
        actor,
        scope,
        search=args.get("search"),
        min_level=min_level,
        order=(args.get("order_by", "name"), args.get("sort", "asc") == "desc"),
        offset=window.offset,
        limit=window.limit,
    )
    return paging.Page([entities.group(row, ctx.view) for row in rows], total, window)


@routes.get("/groups/:id", auth="optional", guards=READ, params=(Bool("with_projects", doc="Not served: projects are never embedded"),), summary="A group (by id or path)")
def get_group(ctx: Ctx) -> entities.GroupV4Detail:
    return entities.group_detail(ctx.group_row, ctx.view)


@routes.post(
    "/groups",
    params=(NAME.as_required(), PATH.as_required(), *GROUP_FIELDS, Id("parent_id", nullable=True, doc="Subgroups are not served")),
    summary="Create a group; the caller becomes its owner",
)
def create_group(ctx: Ctx) -> entities.GroupV4Detail:
    if ctx.args.get("parent_id"):
        raise Invalid({"parent_id": ["subgroups are not supported"]})
    try:
        group = groups.create(ctx.session, ctx.actor, _attrs(ctx.args))
    except Conflict as taken:  # v4 answers a taken path as any invalid field
        raise Invalid(taken.message) from None
    return entities.group_detail(group, ctx.view)


@routes.put("/groups/:id", guards=ADMIN, params=(NAME, PATH, *GROUP_FIELDS), summary="Change a group (owners)")
def update_group(ctx: Ctx) -> entities.GroupV4Detail:
    return entities.group_detail(groups.update(ctx.session, ctx.actor, ctx.group, _attrs(ctx.args)), ctx.view)


@routes.delete("/groups/:id", guards=ADMIN, status=202, summary="Delete a group with its projects (owners)")
def delete_group(ctx: Ctx) -> entities.Accepted:
    groups.delete(ctx.session, ctx.rt, ctx.actor, ctx.group)
    return entities.ACCEPTED
