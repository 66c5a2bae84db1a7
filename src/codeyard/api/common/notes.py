"""Note parameters and the commit comment steps both API versions take (each renders its own shape)."""

from __future__ import annotations

from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice, GitText, Int, Str
from ...services import notes

BODY = Str("body", required=True, max_length=1_000_000, multiline=True, doc="The text of the note")
LINE = ("path", "line", "line_type")  # all three, or a comment on the whole commit (GitLab 8.6)


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


async def comment_on_commit(ctx: Ctx):
    """The comment made on `:sha` from the request's COMMIT_COMMENT_PARAMS (its Note row)."""
    args = ctx.args
    line = (args["path"], args["line"], args["line_type"]) if all(args.get(name) is not None for name in LINE) else None
    found, at = await ctx.off_loop(notes.locate, ctx.rt, ctx.project, ctx.path_params["sha"], line)
    return notes.comment_on_commit(ctx.session, ctx.rt, ctx.project, ctx.actor, found, args["note"], at)
