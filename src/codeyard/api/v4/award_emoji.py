"""Award emoji in v4 (GitLab's Emoji reactions API): on a merge request,
`/projects/:id/merge_requests/:merge_request_iid/award_emoji`, and on one of its notes,
`.../notes/:note_id/award_emoji`. A name is 1 to 64 of `a-z 0-9 _ + -` (GitLab checks its own
list of emoji; codeyard keeps none)."""

from __future__ import annotations

from ...db.models.merge_requests import MERGE_REQUEST_AWARDABLE, NOTE_AWARDABLE
from ...db.readers import now
from ...entities.v4 import award_emoji as entities
from ...http import paging
from ...http.context import Ctx
from ...http.params import Str
from ...http.routing import Routes
from ...services import award_emoji, discussions
from .notes import COMMENT, READ, REQUEST, mr_id

routes = Routes()

ON_REQUEST = REQUEST + "/award_emoji"
ON_NOTE = REQUEST + "/notes/:note_id/award_emoji"
NAME = Str("name", required=True, pattern=award_emoji.NAME,
           pattern_message="is not a valid emoji name (1 to 64 of a-z, 0-9, _, + and -)",
           doc="The emoji's name without colons, e.g. thumbsup")  # fmt: skip


async def _awardable(ctx: Ctx, reader) -> tuple[str, int]:
    """(type, id) of what the path names: the request, or its note `:note_id` (404 `404 Not found`
    when the request has no such note)."""
    if "note_id" not in ctx.path_params:
        return MERGE_REQUEST_AWARDABLE, mr_id(ctx)
    note_id = ctx.path_int("note_id")
    await discussions.read_note(reader, ctx.project_id, mr_id(ctx), note_id)
    return NOTE_AWARDABLE, note_id


def _each(template: str, kind: str) -> None:
    """The four routes of award emoji on an awardable at TEMPLATE (KIND: its name in summaries)."""

    async def list_awards(ctx: Ctx) -> paging.Page[entities.AwardEmoji]:
        window, reader = paging.window(ctx), ctx.rt.db.loop
        total, found = await award_emoji.read_awards(reader, *await _awardable(ctx, reader), window.offset, window.limit)
        return paging.Page([entities.award_emoji(parts, ctx.view) for parts in found], total, window)

    async def get_award(ctx: Ctx) -> entities.AwardEmoji:
        reader = ctx.rt.db.loop
        found = await award_emoji.read_award(reader, *await _awardable(ctx, reader), ctx.path_int("award_id"))
        return entities.award_emoji(found, ctx.view)

    def create_award(ctx: Ctx) -> entities.AwardEmoji:
        awardable = now(_awardable(ctx, ctx.reader))
        row = award_emoji.award(ctx.session, ctx.project_id, ctx.actor, *awardable, ctx.args["name"])
        return entities.award_emoji(now(award_emoji.read_award(ctx.reader, *awardable, row.id)), ctx.view)

    def delete_award(ctx: Ctx) -> None:
        award_emoji.remove(ctx.session, ctx.actor, *now(_awardable(ctx, ctx.reader)), ctx.path_int("award_id"))

    suffix = "" if kind == "request" else "_on_note"
    for handler in (list_awards, get_award, create_award, delete_award):
        handler.__name__ = handler.__qualname__ = handler.__name__ + suffix
    routes.get(template, auth="optional", guards=READ, paginated=True, summary=f"The emoji awarded to a merge {kind}")(list_awards)
    routes.get(template + "/:award_id", auth="optional", guards=READ, summary=f"An emoji awarded to a merge {kind}")(get_award)
    routes.post(template, guards=COMMENT, params=(NAME,),
                summary=f"Award an emoji to a merge {kind} (each name once per user)")(create_award)  # fmt: skip
    routes.delete(template + "/:award_id", guards=READ, status=204,
                  summary=f"Take back an emoji awarded to a merge {kind}: its user, or an administrator")(delete_award)  # fmt: skip


_each(ON_REQUEST, "request")
_each(ON_NOTE, "request's note")
