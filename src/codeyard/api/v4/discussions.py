"""Discussions on merge requests in v4: `/projects/:id/merge_requests/:merge_request_iid/discussions`
(GitLab's Discussions API): the request's notes by discussion, threads started and replied to,
resolved a note or a thread at once, a thread on a line of the request's diff (`position`)."""

from __future__ import annotations

from ...db.readers import now
from ...entities.v4 import notes as entities
from ...errors import MissingParam, RecordNotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Any_, Bool, Str
from ...http.routing import Routes
from ...services import discussions, notes
from ...services.merge_requests import reads
from ..common.merge_requests import request_of
from ..common.notes import BODY
from .notes import COMMENT, READ, REQUEST, mr_id, rendered

routes = Routes()

DISCUSSIONS = REQUEST + "/discussions"
ONE = DISCUSSIONS + "/:discussion_id"
POSITION = Any_("position", doc="A thread on a line of the diff: base_sha, start_sha, head_sha (the request's diff "
                                "refs), position_type (text), old_path, new_path, old_line, new_line")  # fmt: skip

OPTIONAL_BODY = Str("body", max_length=BODY.max_length, multiline=True, doc="The note's new text")


def _discussion(ctx: Ctx, discussion_id: str) -> entities.Discussion:
    """Discussion DISCUSSION_ID as this request's transaction holds it."""
    thread = now(discussions.read_discussion(ctx.reader, ctx.project_id, mr_id(ctx), discussion_id))
    return entities.discussion(thread, ctx.view)


@routes.get(DISCUSSIONS, auth="optional", guards=READ, paginated=True, summary="A merge request's discussions, in the order they started")
async def list_discussions(ctx: Ctx) -> paging.Page[entities.Discussion]:
    window = paging.window(ctx)
    total, found = await discussions.read_discussions(ctx.rt.db.loop, ctx.project_id, mr_id(ctx), window.offset, window.limit)
    return paging.Page([entities.discussion(thread, ctx.view) for thread in found], total, window)


@routes.get(ONE, auth="optional", guards=READ, summary="One discussion of a merge request")
async def get_discussion(ctx: Ctx) -> entities.Discussion:
    thread = await discussions.read_discussion(ctx.rt.db.loop, ctx.project_id, mr_id(ctx), ctx.path_params["discussion_id"])
    return entities.discussion(thread, ctx.view)


@routes.post(DISCUSSIONS, guards=COMMENT, params=(BODY, POSITION),
             summary="Start a thread (resolvable; with a position, on a line of the request's diff)")  # fmt: skip
async def create_discussion(ctx: Ctx) -> entities.Discussion:
    position = ctx.args.get("position")
    if position is not None:
        discussions.parsed_position(position)  # its shape, before git is asked
        compared = await reads.compared(ctx.rt.db.loop, ctx.project_id, mr_id(ctx))
        position = await ctx.off_loop(discussions.checked_position, ctx.rt, ctx.project_row, compared, position)
    row = discussions.start(ctx.session, ctx.rt, ctx.project, ctx.actor, request_of(ctx), ctx.args["body"], position)
    return _discussion(ctx, row.discussion_id)


@routes.put(ONE, guards=READ, params=(Bool("resolved", required=True, doc="true: resolve the thread; false: reopen it"),),
            summary="Resolve or unresolve a thread: the request's author, or developers and above")  # fmt: skip
def resolve_discussion(ctx: Ctx) -> entities.Discussion:
    mr, discussion_id = request_of(ctx), ctx.path_params["discussion_id"]
    found = discussions.thread_notes(ctx.session, mr, discussion_id)
    discussions.resolve(ctx.session, ctx.access, ctx.actor, mr, found, ctx.args["resolved"])
    return _discussion(ctx, discussion_id)


@routes.post(ONE + "/notes", guards=COMMENT, params=(BODY,), summary="Reply to a discussion")
def reply_to_discussion(ctx: Ctx) -> entities.NoteV4:
    row = discussions.reply(ctx.session, ctx.rt, ctx.project, ctx.actor, request_of(ctx), ctx.path_params["discussion_id"],
                            ctx.args["body"])  # fmt: skip
    return rendered(ctx, row.id)


def _thread_note(ctx: Ctx):
    """(request, note) of `:note_id` in discussion `:discussion_id`; 404 otherwise."""
    mr = request_of(ctx)
    row = notes.merge_request_note(ctx.session, mr, ctx.path_int("note_id"))
    if row.discussion_id != ctx.path_params["discussion_id"]:
        discussions.thread_notes(ctx.session, mr, ctx.path_params["discussion_id"])  # 404 Discussion Not Found
        raise RecordNotFound()
    return mr, row


@routes.get(ONE + "/notes/:note_id", auth="optional", guards=READ, summary="A note of a discussion")
def get_discussion_note(ctx: Ctx) -> entities.NoteV4:
    _mr, row = _thread_note(ctx)
    return rendered(ctx, row.id)


@routes.put(ONE + "/notes/:note_id", guards=READ,
            params=(OPTIONAL_BODY, Bool("resolved", doc="Resolve (true) or unresolve (false) this note")),
            summary="Change a thread's note: its text (its author, maintainers), or whether it is resolved")  # fmt: skip
def update_discussion_note(ctx: Ctx) -> entities.NoteV4:
    mr, row = _thread_note(ctx)
    if ctx.args.get("body") is not None:
        notes.update(ctx.session, ctx.access, ctx.actor, row, ctx.args["body"])
    elif ctx.args.get("resolved") is not None:
        discussions.resolve(ctx.session, ctx.access, ctx.actor, mr, [row], ctx.args["resolved"])
    else:
        raise MissingParam("body")
    return rendered(ctx, row.id)


@routes.delete(ONE + "/notes/:note_id", guards=READ, status=204,
               summary="Delete a thread's note: its author, or maintainers and above")  # fmt: skip
def delete_discussion_note(ctx: Ctx) -> None:
    _mr, row = _thread_note(ctx)
    notes.delete(ctx.session, ctx.access, ctx.actor, row)
