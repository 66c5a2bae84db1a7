"""Commits in v4: the list (filtered), one commit with its line counts, commits of several actions,
a commit's diff and refs, cherry-pick and revert, comments and statuses. Commits made here go
through the files API's path (`files.commit_to_branch`, services/files.py): checked as a push,
git off the event loop, recorded as a push."""

from __future__ import annotations

import datetime as dt
import functools
from typing import TypedDict

from ...entities.v4 import commits as entities
from ...entities.v4 import repository as repo_entities
from ...errors import Invalid
from ...git import history
from ...git.file_commits import MAX_CHANGES, Change
from ...http import paging
from ...http.context import Ctx
from ...http.params import Any_, Bool, Choice, GitText, Str
from ...http.replies import Reply
from ...http.routing import MAX_FILE_BODY, Routes
from ...policies import projects as policy
from ...services import files, protected_branches, repository
from ...services.ci import pipelines
from ..common.commit_statuses import FILTERS as STATUS_FILTERS
from ..common.commit_statuses import POSTED as STATUS_POSTED
from ..common.commit_statuses import posted_status, statuses_page
from ..common.notes import COMMIT_COMMENT_PARAMS, comment_on_commit, commit_comments
from ..guards import project_guard
from .files import author_of, checked_path, commit_to_branch, content_of

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
PUSH = (project_guard(policy.DOWNLOAD_CODE, policy.PUSH_CODE),)
COMMENT = (project_guard(policy.DOWNLOAD_CODE, policy.CREATE_NOTE),)
READ_STATUS = (project_guard(policy.READ_COMMIT_STATUS),)
CREATE_STATUS = (project_guard(policy.CREATE_COMMIT_STATUS),)
COMMITS = "/projects/:id/repository/commits"
ONE = COMMITS + "/:sha"


def _web_url(ctx: Ctx) -> str:
    return entities.project_web_url(ctx.view, f"{ctx.project_row.ns_path}/{ctx.project_row.path}")


def _time(name: str):
    def check(text: str) -> list[str]:
        try:
            dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return ["is invalid"]
        return []

    return Str(name, max_length=64, check=check, doc="An ISO 8601 time")


def _moment(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


LIST_PARAMS = (
    GitText("ref_name", max_length=1024, doc="Branch, tag or SHA (default: the default branch)"),
    _time("since"),
    _time("until"),
    GitText("path", max_length=4096, doc="Only commits that changed this file or directory"),
    Str("author", max_length=255, doc="Only commits whose author's name or e-mail holds this text"),
    Bool("all", doc="Commits of every ref"),
    Bool("with_stats", doc="Each commit's line counts"),
    Bool("first_parent", doc="Follow only the first parent of merges"),
    Choice("order", ("default", "topo")),
)


@routes.get(COMMITS, auth="optional", guards=READ, paginated=True, params=LIST_PARAMS, summary="Commits reachable from a ref, newest first")
async def list_commits(ctx: Ctx) -> paging.Page[entities.CommitWithStats]:
    args, window = ctx.args, paging.window(ctx)
    filters = history.LogFilter(since=_moment(args.get("since")), until=_moment(args.get("until")), path=args.get("path"),
                                author=args.get("author"), first_parent=bool(args.get("first_parent")),
                                topo=args.get("order") == "topo")  # fmt: skip
    ref = None if args.get("all") else args.get("ref_name") or ctx.project_row.head_branch
    if ref is not None and filters == history.LogFilter():
        read = functools.partial(repository.commits, ctx.rt, ctx.project_row, ref, window.offset, window.limit)
    else:
        read = functools.partial(repository.filtered_commits, ctx.rt, ctx.project_row, ref, filters, window.offset, window.limit)
    total, found = await ctx.off_loop(read)
    web_url = _web_url(ctx)
    listed = [entities.commit(info, web_url) for info in found]
    if args.get("with_stats"):
        counted = await ctx.off_loop(lambda: [repository.commit_stats(ctx.rt, ctx.project_row, info.id) for info in found])
        listed = [{**shown, "stats": _stats(stats)} for shown, stats in zip(listed, counted, strict=True)]
    return paging.Page(listed, total, window)


def _stats(stats: history.Stats) -> entities.CommitStats:
    return {"additions": stats.additions, "deletions": stats.deletions, "total": stats.total}


async def _detail(ctx: Ctx, sha: str, with_stats: bool = True) -> entities.CommitDetail:
    info = await ctx.off_loop(repository.commit, ctx.rt, ctx.project_row, sha)
    stats = await ctx.off_loop(repository.commit_stats, ctx.rt, ctx.project_row, info.id) if with_stats else None
    status = await pipelines.read_commit_status(ctx.rt.db, ctx.project_id, info.id)
    return entities.commit_detail(info, _web_url(ctx), ctx.project_id, stats, status)


@routes.get(ONE, auth="optional", guards=READ, params=(Bool("stats"),), summary="A commit, with its line counts (unless stats=false)")
async def get_commit(ctx: Ctx) -> entities.CommitDetail:
    return await _detail(ctx, ctx.path_params["sha"], ctx.args.get("stats", True))


ACTIONS = ("create", "delete", "move", "update", "chmod")


def _actions(raw) -> list[Change]:
    """The `actions` parameter (a JSON array, or form fields `actions[][action]`...) as changes; one
    400 naming what is wrong."""
    items = list(raw.values()) if isinstance(raw, dict) else raw
    if not isinstance(items, list) or not items:
        raise Invalid.field("actions", "is invalid")
    if len(items) > MAX_CHANGES:
        raise Invalid.field("actions", f"are too many (maximum is {MAX_CHANGES})")
    changes = []
    for item in items:
        if not isinstance(item, dict) or item.get("action") not in ACTIONS or not isinstance(item.get("file_path"), str):
            raise Invalid.field("actions", "is invalid")
        action = item["action"]
        previous = item.get("previous_path")
        if action == "move" and not isinstance(previous, str):
            raise Invalid.field("actions", "previous_path is missing")
        content = item.get("content")
        if content is not None and not isinstance(content, str):
            raise Invalid.field("actions", "content is invalid")
        if item.get("encoding") not in (None, "text", "base64"):
            raise Invalid.field("actions", "encoding does not have a valid value")
        if action in ("create", "update") and content is None:
            content = ""
        executable = item.get("execute_filemode")
        if action == "chmod" and executable is None:
            raise Invalid.field("actions", "execute_filemode is missing")
        last = item.get("last_commit_id")
        changes.append(Change(
            action, checked_path(item["file_path"]),
            content_of({"content": content, "encoding": item.get("encoding")}) if content is not None else None,
            previous_path=checked_path(previous, "previous_path") if action == "move" else None,
            executable=None if executable is None else executable in (True, "true", "1", 1),
            last_commit_id=last if isinstance(last, str) and last else None,
        ))  # fmt: skip
    return changes


@routes.post(
    COMMITS,
    guards=PUSH,
    params=(
        GitText("branch", required=True, max_length=255),
        Str("commit_message", required=True, max_length=100_000, multiline=True),
        GitText("start_branch", max_length=255),
        GitText("start_sha", max_length=40),
        Any_("actions", required=True),
        Str("author_email", max_length=255),
        Str("author_name", max_length=255),
        Bool("stats"),
    ),
    max_body=MAX_FILE_BODY,
    summary="Commit several file actions at once (all or none), as a push of that commit",
)
async def create_commit(ctx: Ctx) -> entities.CommitDetail:
    changes = _actions(ctx.args["actions"])
    start = ctx.args.get("start_sha") or ctx.args.get("start_branch")
    moved = await commit_to_branch(ctx, ctx.args["branch"], changes, start=start, message=ctx.args["commit_message"],
                                   author=author_of(ctx))  # fmt: skip
    ctx.commit()
    return await _detail(ctx, moved.update.after, ctx.args.get("stats", True))


@routes.get(ONE + "/diff", auth="optional", guards=READ, paginated=True, summary="What a commit changed against its first parent")
async def get_commit_diff(ctx: Ctx) -> paging.Page[repo_entities.Diff]:
    window = paging.window(ctx)
    found = await ctx.off_loop(repository.commit_diff, ctx.rt, ctx.project_row, ctx.path_params["sha"])
    page = found[window.offset : window.offset + window.limit]
    return paging.Page([repo_entities.diff(part) for part in page], len(found), window)


REF_KINDS = {"branch": ("branch",), "tag": ("tag",), "all": ("branch", "tag")}


@routes.get(ONE + "/refs", auth="optional", guards=READ, paginated=True, params=(Choice("type", tuple(REF_KINDS)),),
            summary="The branches and tags whose history holds the commit")  # fmt: skip
async def get_commit_refs(ctx: Ctx) -> paging.Page[entities.CommitRef]:
    window = paging.window(ctx)
    kinds = REF_KINDS[ctx.args.get("type", "all")]
    found = await ctx.off_loop(repository.commit_refs, ctx.rt, ctx.project_row, ctx.path_params["sha"], kinds)
    page = found[window.offset : window.offset + window.limit]
    return paging.Page([{"type": kind, "name": name} for kind, name in page], len(found), window)


class DryRun(TypedDict):
    dry_run: str  # "success"


async def _pick(ctx: Ctx, revert: bool) -> entities.Commit | Reply[DryRun]:
    branch = ctx.args["branch"]
    info = await ctx.off_loop(repository.commit, ctx.rt, ctx.project_row, ctx.path_params["sha"])
    protection = (await protected_branches.read_protections(ctx.rt.db, ctx.project_id)).get(branch)
    files.check_push(ctx.access, branch, protection, admin=ctx.by_admin)
    if ctx.args.get("dry_run"):
        await ctx.off_loop(files.try_pick, ctx.rt, ctx.project_row, ctx.actor, info.id, branch, revert)
        return Reply({"dry_run": "success"}, status=200)
    moved = await ctx.off_loop(files.pick, ctx.rt, ctx.project_row, ctx.actor, info.id, branch, revert)
    files.record(ctx.session, ctx.rt, moved)
    ctx.commit()
    made = await ctx.off_loop(repository.commit, ctx.rt, ctx.project_row, moved.update.after)
    return entities.commit(made, _web_url(ctx))


PICK_PARAMS = (GitText("branch", required=True, max_length=255), Bool("dry_run"))


@routes.post(ONE + "/cherry_pick", guards=PUSH, params=PICK_PARAMS, summary="Cherry-pick a commit onto a branch")
async def cherry_pick(ctx: Ctx) -> entities.Commit | DryRun:
    return await _pick(ctx, revert=False)


@routes.post(ONE + "/revert", guards=PUSH, params=PICK_PARAMS, summary="Revert a commit on a branch")
async def revert(ctx: Ctx) -> entities.Commit | DryRun:
    return await _pick(ctx, revert=True)


@routes.get(ONE + "/comments", auth="optional", guards=READ, paginated=True, summary="Comments on a commit, oldest first")
async def list_commit_comments(ctx: Ctx) -> paging.Page[entities.CommitNote]:
    return await commit_comments(ctx, entities.commit_note)


@routes.post(ONE + "/comments", guards=COMMENT, params=COMMIT_COMMENT_PARAMS,
             summary="Comment on a commit; with path, line and line_type, on that line of its diff when there is one")  # fmt: skip
async def create_commit_comment(ctx: Ctx) -> entities.CommitNote:
    row = await comment_on_commit(ctx)
    return entities.commit_note(row, ctx.view, row.author)


@routes.get(ONE + "/statuses", auth="optional", guards=READ_STATUS, paginated=True, params=STATUS_FILTERS,
            summary="The commit's statuses (its jobs and external statuses), oldest first")  # fmt: skip
async def list_statuses(ctx: Ctx) -> paging.Page[entities.CommitStatus]:
    return await statuses_page(ctx, entities.commit_status)


@routes.post("/projects/:id/statuses/:sha", guards=CREATE_STATUS, params=STATUS_POSTED,
             summary="Record an external status of a commit (created, or moved while pending or running)")  # fmt: skip
async def post_status(ctx: Ctx) -> entities.CommitStatus:
    found = await posted_status(ctx)
    return entities.commit_status(found, ctx.view, found.user)
