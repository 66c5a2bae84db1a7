"""Tags in v4: list (ordered, searched), one, create (annotated when a message is given, the caller
its tagger) and delete. Creating and deleting a tag is a push of it (services/tags.py): the push
rules decide who may, and tag push events and hooks follow."""

from __future__ import annotations

from ...entities.v4 import tags as entities
from ...entities.v4.branches import project_url
from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice, GitText, Str
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import tags
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
PUSH = (project_guard(policy.DOWNLOAD_CODE, policy.PUSH_CODE),)
TAGS = "/projects/:id/repository/tags"


@routes.get(
    TAGS,
    guards=READ,
    auth="optional",
    paginated=True,
    params=(
        Choice("order_by", tags.ORDERS, doc="name, updated (the commit's date) or version"),
        Choice("sort", ("asc", "desc"), doc="Default desc"),
        Str("search", max_length=255, doc="Names containing it; `^x` starting, `x$` ending with x"),
    ),
    summary="Tags, newest first by the commit's date unless ordered otherwise",
)
async def list_tags(ctx: Ctx) -> paging.Page[entities.TagV4]:
    window = paging.window(ctx)
    args = ctx.args
    total, found = await ctx.off_loop(tags.page, ctx.rt, ctx.project_row, args.get("order_by") or "updated",
                                      args.get("sort", "desc") != "asc", args.get("search"), window.offset, window.limit)  # fmt: skip
    url = project_url(ctx.view, ctx.project_row)
    return paging.Page([entities.tag(one, url) for one in found], total, window)


@routes.get(TAGS + "/*tag_name", guards=READ, auth="optional", summary="A tag")
async def get_tag(ctx: Ctx) -> entities.TagV4:
    found = await ctx.off_loop(tags.get, ctx.rt, ctx.project_row, ctx.path_params["tag_name"])
    return entities.tag(found, project_url(ctx.view, ctx.project_row))


@routes.post(
    TAGS,
    guards=PUSH,
    params=(
        GitText("tag_name", required=True, max_length=255),
        GitText("ref", required=True, max_length=255),
        Str("message", multiline=True, max_length=65536, doc="An annotated tag's message"),
    ),
    summary="Create a tag (a push of it)",
)
def create_tag(ctx: Ctx) -> entities.TagV4:
    args = ctx.args
    created = tags.create(ctx.session, ctx.rt, ctx.project, ctx.actor, ctx.access, args["tag_name"], args["ref"],
                          args.get("message"))  # fmt: skip
    return entities.tag(created, project_url(ctx.view, ctx.project_row))


@routes.delete(TAGS + "/*tag_name", guards=PUSH, status=204, summary="Delete a tag (maintainers: as a push of it)")
def delete_tag(ctx: Ctx) -> None:
    tags.delete(ctx.session, ctx.rt, ctx.project, ctx.actor, ctx.access, ctx.path_params["tag_name"])
