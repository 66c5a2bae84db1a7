"""Notes on merge requests in v4: `/projects/:id/merge_requests/:merge_request_iid/notes` (GitLab's
Notes API). The same rows, writes, events and Note Hooks as v3's notes and comments; v4's shape
shows each note's discussion fields."""

from __future__ import annotations

from ...db.readers import now
from ...entities.v4 import notes as entities
from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import discussions, notes
from ..common.merge_requests import request_of
from ..common.notes import BODY
from ..guards import merge_request_iid, project_guard

routes = Routes()

REQUEST = "/projects/:id/merge_requests/:merge_request_iid"
READ = (project_guard(policy.READ_MERGE_REQUEST), merge_request_iid)
COMMENT = (project_guard(policy.READ_MERGE_REQUEST, policy.CREATE_NOTE), merge_request_iid)


def mr_id(ctx: Ctx) -> int:
    """The request's global id, which the iid guard found."""
    return ctx.path_int("merge_request_id")


def rendered(ctx: Ctx, note_id: int) -> entities.NoteV4:
    """Note NOTE_ID as this request's transaction holds it (after a write: what it wrote)."""
    return entities.note(now(discussions.read_note(ctx.reader, ctx.project_id, mr_id(ctx), note_id)), ctx.view)


@routes.get(
    REQUEST + "/notes",
    auth="optional",
    guards=READ,
    paginated=True,
    params=(
        Choice("sort", ("asc", "desc"), doc="Default desc"),
        Choice("order_by", ("created_at", "updated_at"), doc="Default created_at"),
    ),
    summary="Notes on a merge request, newest first unless sorted otherwise",
)
async def list_notes(ctx: Ctx) -> paging.Page[entities.NoteV4]:
    window = paging.window(ctx)
    total, found = await discussions.read_notes(
        ctx.rt.db.loop, ctx.project_id, mr_id(ctx), order_by=ctx.args.get("order_by", "created_at"),
        sort=ctx.args.get("sort", "desc"), offset=window.offset, limit=window.limit,
    )  # fmt: skip
    return paging.Page([entities.note(parts, ctx.view) for parts in found], total, window)


@routes.get(REQUEST + "/notes/:note_id", auth="optional", guards=READ, summary="A note on a merge request")
async def get_note(ctx: Ctx) -> entities.NoteV4:
    found = await discussions.read_note(ctx.rt.db.loop, ctx.project_id, mr_id(ctx), ctx.path_int("note_id"))
    return entities.note(found, ctx.view)


@routes.post(REQUEST + "/notes", guards=COMMENT, params=(BODY,),
             summary="Comment on a merge request (a discussion of its own; an event and a Note Hook)")  # fmt: skip
def create_note(ctx: Ctx) -> entities.NoteV4:
    row = notes.comment_on_merge_request(ctx.session, ctx.rt, ctx.project, ctx.actor, request_of(ctx), ctx.args["body"])
    return rendered(ctx, row.id)


@routes.put(REQUEST + "/notes/:note_id", guards=READ, params=(BODY,),
            summary="Change a note's text: its author, or maintainers and above")  # fmt: skip
def update_note(ctx: Ctx) -> entities.NoteV4:
    row = notes.merge_request_note(ctx.session, request_of(ctx), ctx.path_int("note_id"))
    notes.update(ctx.session, ctx.access, ctx.actor, row, ctx.args["body"])
    return rendered(ctx, row.id)


@routes.delete(REQUEST + "/notes/:note_id", guards=READ, status=204,
               summary="Delete a note and its award emoji: its author, or maintainers and above")  # fmt: skip
def delete_note(ctx: Ctx) -> None:
    row = notes.merge_request_note(ctx.session, request_of(ctx), ctx.path_int("note_id"))
    notes.delete(ctx.session, ctx.access, ctx.actor, row)
