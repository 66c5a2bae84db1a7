"""Merge requests (`/projects/:id/merge_requests`, reference section 10). Single requests answer on
both `merge_request/:merge_request_id` (GitLab 8.0-8.4, the spec) and `merge_requests/...` (8.5+)."""

from __future__ import annotations

import functools

from ...db.models.merge_requests import is_work_in_progress
from ...db.readers import now
from ...entities.commits import RepoCommit, repo_commit, repo_diff
from ...entities.merge_requests import Comment, MergeRequest, MergeRequestChanges, listed_merge_request
from ...entities.merge_requests import comment as comment_entity
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, GitText, Id, IntList, Str
from ...http.refusals import answered
from ...http.replies import encoded
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import notes
from ...services.merge_requests import accept as merge_accept
from ...services.merge_requests import comparison, reads, records, status
from ..common.merge_requests import request_of
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.READ_MERGE_REQUEST),)
# A request's commits and changes are the repository's code: read under the rule of every other
# repository read (a guest of a private project reads the request, not its code).
READ_CODE = (project_guard(policy.READ_MERGE_REQUEST, policy.DOWNLOAD_CODE),)
CREATE = (project_guard(policy.CREATE_MERGE_REQUEST),)
UPDATE = (project_guard(policy.UPDATE_MERGE_REQUEST),)
LIST = "/projects/:id/merge_requests"
SINGLE_FORMS = (
    "/projects/:id/merge_requests/:merge_request_id",
    "/projects/:id/merge_request/:merge_request_id",
)


def single(method: str, suffix: str = "", **options):
    """Register the handler under both path forms (the singular one with its own operation name)."""

    def register(handler):
        plural, singular = SINGLE_FORMS
        routes.add(method, plural + suffix, handler, **options)

        @functools.wraps(handler)
        def twin(ctx: Ctx):
            return handler(ctx)

        twin.__name__ = twin.__qualname__ = handler.__name__ + "_singular_path"
        routes.add(method, singular + suffix, twin, **options)
        return handler

    return register


def render(ctx: Ctx, mr, with_iid: bool = True) -> MergeRequest:
    """MR's entity as this request's transaction holds it (after a write: what it wrote)."""
    return _listed(ctx, *now(reads.read_one(ctx.reader, mr.target_project_id, mr.id)), with_iid=with_iid)




@routes.get(
    LIST,
    guards=READ,
    paginated=True,
    params=(
        Choice("state", ("all", "opened", "closed", "merged"), doc="Default all"),
        IntList("iid", doc="Only the requests with these iids"),
        Choice("order_by", ("created_at", "updated_at"), doc="Default created_at"),
        Choice("sort", ("asc", "desc"), doc="Default desc"),
    ),
    summary="Merge requests of a project (its target)",
)
async def list_merge_requests(ctx: Ctx) -> paging.Page[MergeRequest]:
    window, iids = paging.window(ctx), ctx.args.get("iid") or []
    order = {"order_by": ctx.args.get("order_by", "created_at"), "sort": ctx.args.get("sort", "desc")}
    total, listed = await reads.read_page(
        ctx.rt.db.loop, ctx.project_id, state=ctx.args.get("state"), iids=iids, offset=window.offset, limit=window.limit,
        **order,
    )  # fmt: skip
    return paging.Page([_listed(ctx, *parts) for parts in listed], total, window)


def _listed(ctx: Ctx, row, author, assignee, with_iid: bool = True) -> MergeRequest:
    return listed_merge_request(row, ctx.view, author, assignee, is_work_in_progress(row.title), with_iid)


@single("GET", guards=READ, summary="A merge request (by its global id)")
async def get_merge_request(ctx: Ctx) -> MergeRequest:
    return _listed(ctx, *await reads.read_one(ctx.rt.db.loop, ctx.project_id, ctx.path_int("merge_request_id")))


@single("GET", "/commits", guards=READ_CODE, summary="Commits of the source not on the target, newest first")
async def merge_request_commits(ctx: Ctx) -> list[RepoCommit]:
    mr = await reads.compared(ctx.rt.db.loop, ctx.project_id, ctx.path_int("merge_request_id"))
    found = await ctx.off_loop(functools.partial(comparison.comparison, files=False), ctx.rt, ctx.project_row, mr)
    return [repo_commit(info) for info in reversed(found.commits)]


@single("GET", "/changes", guards=READ_CODE, summary="The request with its changes (merge base to source head)")
async def merge_request_changes(ctx: Ctx) -> MergeRequestChanges:
    # git starts first, from what one prebuilt statement finds; the request's entity is read (on the
    # fast path) while git works, and each change is JSON as soon as git's output for it is read.
    mr_id = ctx.path_int("merge_request_id")
    mr = await reads.compared(ctx.rt.db.loop, ctx.project_id, mr_id)
    work = comparison.comparer(ctx.rt, ctx.project_id, mr, commits=False,
                                   shape=lambda change: encoded(repo_diff(change)))  # fmt: skip

    def entity() -> MergeRequest:
        return _listed(ctx, *now(reads.read_one(ctx.rt.db.fast, ctx.project_id, mr_id)))

    data, found = await ctx.off_loop_while(work, entity)
    data["changes"] = found.diffs
    return data


TITLE = Str("title", max_length=255, doc="The title; a [WIP], WIP: or WIP prefix marks work in progress")
DESCRIPTION = Str("description", max_length=1_000_000, multiline=True, nullable=True)
LABELS = Str("labels", max_length=10_000, nullable=True, doc="A comma-separated list of titles, none blank or holding & or ?")


@routes.post(
    LIST,
    guards=CREATE,
    params=(
        GitText("source_branch", required=True, max_length=255),
        GitText("target_branch", required=True, max_length=255),
        TITLE.as_required(),
        Id("assignee_id", nullable=True),
        DESCRIPTION,
        Id("target_project_id", doc="The upstream of this fork; default this project"),
        LABELS,
    ),
    status=200,
    summary="Create a merge request (:id is the source project); 200 (reference DECISIONS row 1)",
)
async def create_merge_request(ctx: Ctx) -> MergeRequest:
    mr, check = records.create(ctx.session, ctx.rt, ctx.actor, ctx.project, ctx.args)
    return render(ctx, await checked(ctx, mr, check), with_iid=False)


def checked(ctx: Ctx, mr, check):
    return status.checked(ctx.session, ctx.rt, ctx.actor, mr, check, ctx.off_loop)


@single(
    "PUT",
    guards=UPDATE,
    params=(
        GitText("target_branch", max_length=255),
        GitText("source_branch", doc="Refused: the source branch cannot change"),
        Id("assignee_id", nullable=True),
        TITLE,
        DESCRIPTION,
        Choice("state_event", ("close", "reopen", "merge")),
        LABELS,
    ),
    summary="Update a merge request; state_event close or reopen",
)
async def update_merge_request(ctx: Ctx) -> MergeRequest:
    mr, check = records.update(ctx.session, ctx.rt, ctx.actor, ctx.project, request_of(ctx), ctx.args)
    return render(ctx, await checked(ctx, mr, check), with_iid=False)


@single(
    "PUT",
    "/merge",
    guards=READ,
    params=(
        Str("merge_commit_message", max_length=100_000, multiline=True, nullable=True),
        Bool("should_remove_source_branch"),
        Bool("merged_when_build_succeeds", aliases=("merge_when_build_succeeds",),
             doc="Merge when the build succeeds; with no unfinished builds, merge now"),
        Str("sha", max_length=64, doc="The source head the caller saw (409 when it moved)"),
    ),
    summary="Accept a merge request: a merge commit on the target branch",
)  # fmt: skip
async def accept_merge_request(ctx: Ctx) -> MergeRequest:
    mr = request_of(ctx)
    outcome = await ctx.off_loop(functools.partial(merge_accept.accept, access=ctx.access), ctx.rt, mr.id,
                                 ctx.actor.id if ctx.actor else None, ctx.args)  # fmt: skip
    answered(outcome.refusal)
    ctx.session.refresh(mr)
    return render(ctx, mr)


def cancel_merge_when_build_succeeds(ctx: Ctx) -> MergeRequest:
    mr = request_of(ctx)
    answered(merge_accept.cancel_merge_when_build_succeeds(ctx.session, ctx.project, ctx.access, ctx.actor, mr))
    return render(ctx, mr)


for _method in ("PUT", "POST"):
    single(_method, "/cancel_merge_when_build_succeeds", guards=READ, status=200,
           summary="Cancel merge when build succeeds (POST too, as GitLab 8 routed it)")(cancel_merge_when_build_succeeds)  # fmt: skip


@single("GET", "/comments", guards=READ, paginated=True, summary="Comments on a merge request, oldest first")
async def list_comments(ctx: Ctx) -> paging.Page[Comment]:
    window, view = paging.window(ctx), ctx.view
    total, found = await notes.read_comments(
        ctx.rt.db.loop, ctx.project_id, ctx.path_int("merge_request_id"), window.offset, window.limit
    )
    return paging.Page([comment_entity(row, view, author) for row, author in found], total, window)


@single("POST", "/comments", guards=(project_guard(policy.CREATE_NOTE),),
        params=(Str("note", required=True, max_length=1_000_000, multiline=True),),
        summary="Comment on a merge request; :+1: and :-1: count as votes")  # fmt: skip
def add_comment(ctx: Ctx) -> Comment:
    note = notes.comment_on_merge_request(ctx.session, ctx.rt, ctx.project, ctx.actor, request_of(ctx), ctx.args["note"])
    return comment_entity(note, ctx.view, note.author)
