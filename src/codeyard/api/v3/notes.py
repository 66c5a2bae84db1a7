"""Notes: `/projects/:id/merge_requests/:merge_request_id/notes` (both path forms, the same rows as
the request's `comments`) and comments on commits, `/projects/:id/repository/commits/:sha/comments`."""

from __future__ import annotations

from ...entities.notes import CommitNote, Note
from ...entities.notes import commit_note as commit_note_entity
from ...entities.notes import note as note_entity
from ...http import paging
from ...http.context import Ctx
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import notes
from ..common.notes import BODY, COMMIT_COMMENT_PARAMS, comment_on_commit, commit_comments
from ..guards import project_guard
from .merge_requests import READ, request_of, single

routes = Routes()

CREATE = (project_guard(policy.READ_MERGE_REQUEST, policy.CREATE_NOTE),)


@single("GET", "/notes", guards=READ, paginated=True, summary="Notes on a merge request, oldest first")
async def list_merge_request_notes(ctx: Ctx) -> paging.Page[Note]:
    window, view = paging.window(ctx), ctx.view
    total, found = await notes.read_comments(
        ctx.rt.db.loop, ctx.project_id, ctx.path_int("merge_request_id"), window.offset, window.limit
    )
    return paging.Page([note_entity(row, view, author) for row, author in found], total, window)


@single("GET", "/notes/:note_id", guards=READ, summary="A note on a merge request")
async def get_merge_request_note(ctx: Ctx) -> Note:
    row, author = await notes.read_comment(
        ctx.rt.db.loop, ctx.project_id, ctx.path_int("merge_request_id"), ctx.path_int("note_id")
    )
    return note_entity(row, ctx.view, author)


@single("POST", "/notes", guards=CREATE, params=(BODY,),
        summary="Add a note to a merge request (as a comment: event, Note Hook; :+1: and :-1: are votes)")  # fmt: skip
def create_merge_request_note(ctx: Ctx) -> Note:
    row = notes.comment_on_merge_request(ctx.session, ctx.rt, ctx.project, ctx.actor, request_of(ctx), ctx.args["body"])
    return note_entity(row, ctx.view, row.author)


@single("PUT", "/notes/:note_id", guards=READ, params=(BODY,),
        summary="Change a note's text: its author, or masters and above")  # fmt: skip
def update_merge_request_note(ctx: Ctx) -> Note:
    row = notes.merge_request_note(ctx.session, request_of(ctx), ctx.path_int("note_id"))
    changed = notes.update(ctx.session, ctx.access, ctx.actor, row, ctx.args["body"])
    return note_entity(changed, ctx.view, changed.author)


COMMIT_COMMENTS = "/projects/:id/repository/commits/:sha/comments"
READ_CODE = (project_guard(policy.DOWNLOAD_CODE),)
COMMENT_ON_CODE = (project_guard(policy.DOWNLOAD_CODE, policy.CREATE_NOTE),)


@routes.get(COMMIT_COMMENTS, guards=READ_CODE, paginated=True, summary="Comments on a commit, oldest first")
async def list_commit_comments(ctx: Ctx) -> paging.Page[CommitNote]:
    return await commit_comments(ctx, commit_note_entity)






@routes.post(
    COMMIT_COMMENTS,
    guards=COMMENT_ON_CODE,
    params=COMMIT_COMMENT_PARAMS,
    summary="Comment on a commit; with path, line and line_type, on that line of its diff when there is one",
)
async def create_commit_comment(ctx: Ctx) -> CommitNote:
    row = await comment_on_commit(ctx)
    return commit_note_entity(row, ctx.view, row.author)


