"""Notes: `/projects/:id/merge_requests/:merge_request_id/notes` (both path forms, the same rows as
the request's `comments`) and comments on commits, `/projects/:id/repository/commits/:sha/comments`."""

from __future__ import annotations

from ...entities.notes import CommitNote, Note
from ...entities.notes import commit_note as commit_note_entity
from ...entities.notes import note as note_entity
from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice, GitText, Int, Str
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import notes
from ..guards import project_guard
from .merge_requests import READ, request_of, single

routes = Routes()

CREATE = (project_guard(policy.READ_MERGE_REQUEST, policy.CREATE_NOTE),)
BODY = Str("body", required=True, max_length=1_000_000, multiline=True, doc="The text of the note")


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
LINE = ("path", "line", "line_type")  # all three, or a comment on the whole commit (GitLab 8.6)


@routes.get(COMMIT_COMMENTS, guards=READ_CODE, paginated=True, summary="Comments on a commit, oldest first")
async def list_commit_comments(ctx: Ctx) -> paging.Page[CommitNote]:
    return await commit_comments(ctx, commit_note_entity)


async def commit_comments(ctx: Ctx, shape) -> paging.Page:
    """A page of the comments on `:sha`, each SHAPE(row, view, author) (v3's entity or v4's)."""
    window = paging.window(ctx)
    found = await ctx.off_loop(notes.commit, ctx.rt, ctx.project_row, ctx.path_params["sha"])
    total, listed = await notes.read_commit_comments(ctx.rt.db, ctx.project_id, found.id, window.offset, window.limit)
    return paging.Page([shape(row, ctx.view, author) for row, author in listed], total, window)


COMMIT_COMMENT_PARAMS = (
    Str("note", required=True, max_length=1_000_000, multiline=True, doc="The text of the comment"),
    GitText("path", max_length=4096, doc="A file the commit changed (its new path)"),
    Int("line", minimum=1, doc="The line's number on the new side"),
    Choice("line_type", ("new", "old"), doc="new: an added line; old: a removed one"),
)


@routes.post(
    COMMIT_COMMENTS,
    guards=COMMENT_ON_CODE,
    params=COMMIT_COMMENT_PARAMS,
    summary="Comment on a commit; with path, line and line_type, on that line of its diff when there is one",
)
async def create_commit_comment(ctx: Ctx) -> CommitNote:
    row = await comment_on_commit(ctx)
    return commit_note_entity(row, ctx.view, row.author)


async def comment_on_commit(ctx: Ctx):
    """The comment made on `:sha` from the request's COMMIT_COMMENT_PARAMS (its Note row)."""
    args = ctx.args
    line = (args["path"], args["line"], args["line_type"]) if all(args.get(name) is not None for name in LINE) else None
    found, at = await ctx.off_loop(notes.locate, ctx.rt, ctx.project, ctx.path_params["sha"], line)
    return notes.comment_on_commit(ctx.session, ctx.rt, ctx.project, ctx.actor, found, args["note"], at)
