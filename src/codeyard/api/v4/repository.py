"""The repository in v4: the tree (paginated, recursive), blobs and their raw bytes, archives in
every format GitLab names, comparisons, contributors and merge bases. The reads are v3's services
(services/repository.py), run off the event loop."""

from __future__ import annotations

import base64
import os
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

from ...entities.v4 import commits as commit_entities
from ...entities.v4 import repository as entities
from ...errors import BadRequest
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, GitText, StrList
from ...http.replies import Reply
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import repository
from ..common.repository import file_chunks, raw
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
REPOSITORY = "/projects/:id/repository"


def _web_url(ctx: Ctx) -> str:
    return commit_entities.project_web_url(ctx.view, f"{ctx.project_row.ns_path}/{ctx.project_row.path}")


@routes.get(
    REPOSITORY + "/tree",
    auth="optional",
    guards=READ,
    paginated=True,
    params=(GitText("path", max_length=4096), GitText("ref", max_length=1024), Bool("recursive"),
            Choice("pagination", ("legacy", "keyset")), GitText("page_token", max_length=4096)),
    summary="Entries of a directory at a ref (default: the default branch); recursive: every entry below it. "
            "pagination=keyset pages by page_token (the path of the previous page's last entry)",
)
async def get_tree(ctx: Ctx) -> paging.Page[entities.TreeEntry]:
    window = paging.window(ctx)
    ref, path = ctx.args.get("ref"), ctx.args.get("path", "")
    entries = await ctx.off_loop(repository.tree_entries, ctx.rt, ctx.project_row, ref, path, bool(ctx.args.get("recursive")))
    if ctx.args.get("pagination") == "keyset":
        return _keyset_page(ctx, entries, window.per_page)
    page = entries[window.offset : window.offset + window.limit]
    return paging.Page([entities.tree_entry(entry) for entry in page], len(entries), window)


def _keyset_page(ctx: Ctx, entries: list, per_page: int) -> Reply[list[entities.TreeEntry]]:
    """The PER_PAGE entries after the one whose path is `page_token` (from the first without one);
    Link rel="next" names the next page's token, as GitLab's keyset pagination does."""
    token = ctx.args.get("page_token")
    start = 0
    if token is not None:
        start = next((position + 1 for position, entry in enumerate(entries) if entry.path == token), -1)
        if start < 0:
            raise BadRequest("page_token is invalid")
    page = entries[start : start + per_page]
    headers = {"x-per-page": str(per_page)}
    if start + per_page < len(entries):
        kept = [(k, v) for k, v in parse_qsl(ctx.query_string, keep_blank_values=True) if k not in ("page_token", "per_page")]
        query = urlencode([*kept, ("per_page", str(per_page)), ("page_token", page[-1].path)])
        headers["link"] = f'<{ctx.absolute_url(ctx.raw_path)}?{query}>; rel="next"'
    return Reply([entities.tree_entry(entry) for entry in page], headers=headers)


@routes.get(REPOSITORY + "/blobs/:sha", auth="optional", guards=READ, summary="A blob by its SHA, base64 encoded (at most 10 MiB)")
async def get_blob(ctx: Ctx) -> entities.Blob:
    found = await ctx.off_loop(repository.blob, ctx.rt, ctx.project_row, ctx.path_params["sha"])
    if found.size > MAX_BLOB_JSON:
        raise BadRequest("The blob is too big to be sent as JSON; read it raw")
    data = await run_in_threadpool(repository.blob_content, ctx.rt, ctx.project_row, found)
    return {"size": found.size, "encoding": "base64", "content": base64.b64encode(data).decode(), "sha": found.id}


MAX_BLOB_JSON = 10 * 1024 * 1024


@routes.get(REPOSITORY + "/blobs/:sha/raw", auth="optional", guards=READ, summary="The raw content of a blob by its SHA")
async def get_raw_blob(ctx: Ctx):
    return await raw(ctx, await ctx.off_loop(repository.blob, ctx.rt, ctx.project_row, ctx.path_params["sha"]))


# extension -> (git archive --format, file extension, Content-Type)
_GZ, _BZ2 = "application/x-gzip", "application/x-bzip2"
ARCHIVE_FORMATS = {
    "tar.gz": ("tar.gz", "tar.gz", _GZ),
    "tgz": ("tar.gz", "tar.gz", _GZ),
    "gz": ("tar.gz", "tar.gz", _GZ),
    "tar.bz2": ("tar.bz2", "tar.bz2", _BZ2),
    "tbz": ("tar.bz2", "tar.bz2", _BZ2),
    "tbz2": ("tar.bz2", "tar.bz2", _BZ2),
    "tb2": ("tar.bz2", "tar.bz2", _BZ2),
    "bz2": ("tar.bz2", "tar.bz2", _BZ2),
    "tar": ("tar", "tar", "application/x-tar"),
    "zip": ("zip", "zip", "application/zip"),
}
ARCHIVE_PARAMS = (GitText("sha", max_length=1024, doc="Commit, branch or tag (default: the default branch)"),
                  Choice("format", tuple(ARCHIVE_FORMATS)))  # fmt: skip


async def get_archive(ctx: Ctx):
    extension = ctx.route.template.rsplit("/archive", 1)[1].lstrip(".") or ctx.args.get("format", "tar.gz")
    git_format, suffix, media_type = ARCHIVE_FORMATS[extension]
    path, sha = await ctx.off_loop(repository.archive_source, ctx.rt, ctx.project_row, ctx.args.get("sha"))
    name = f"{ctx.project_row.path}-{sha}"
    handle = await ctx.rt.archives.open(path, ctx.project_id, sha, git_format, name, f"{name}.{suffix}")
    headers = {"content-disposition": f'attachment; filename="{name}.{suffix}"',
               "content-length": str(os.fstat(handle.fileno()).st_size)}  # fmt: skip
    return StreamingResponse(file_chunks(handle), media_type=media_type, headers=headers)


for _suffix in ("", *(f".{extension}" for extension in ARCHIVE_FORMATS)):
    routes.get(REPOSITORY + "/archive" + _suffix, auth="optional", guards=READ, params=ARCHIVE_PARAMS,
               summary="An archive of the repository at a commit (cached on disk per commit and format)")(get_archive)  # fmt: skip


@routes.get(
    REPOSITORY + "/compare",
    auth="optional",
    guards=READ,
    params=(GitText("from", required=True, max_length=1024), GitText("to", required=True, max_length=1024),
            Bool("straight", doc="The diff from `from` to `to` directly (default: from their merge base)")),
    summary="Commits and diff from one ref to another (from their merge base, like `git diff from...to`)",
)
async def compare_refs(ctx: Ctx) -> entities.Compare:
    base, head = ctx.args["from"], ctx.args["to"]
    found = await ctx.off_loop(repository.compare, ctx.rt, ctx.project_row, base, head, bool(ctx.args.get("straight")))
    return entities.comparison(found, base == head, _web_url(ctx), base, head)


CONTRIBUTOR_ORDERS = ("name", "email", "commits")


@routes.get(
    REPOSITORY + "/contributors",
    auth="optional",
    guards=READ,
    paginated=True,
    params=(Choice("order_by", CONTRIBUTOR_ORDERS), Choice("sort", ("asc", "desc"))),
    summary="Authors of the default branch by e-mail (its newest 2000 non-merge commits), ordered by commits by default",
)
async def list_contributors(ctx: Ctx) -> paging.Page[entities.Contributor]:
    window = paging.window(ctx)
    found = await ctx.off_loop(repository.contributors, ctx.rt, ctx.project_row)
    order_by = ctx.args.get("order_by", "commits")
    found = sorted(found, key=lambda person: getattr(person, order_by), reverse=ctx.args.get("sort") == "desc")
    page = found[window.offset : window.offset + window.limit]
    return paging.Page([entities.contributor(person) for person in page], len(found), window)


MAX_MERGE_BASE_REFS = 10


@routes.get(REPOSITORY + "/merge_base", auth="optional", guards=READ, params=(StrList("refs", required=True),),
            summary="The common ancestor of two or more refs")  # fmt: skip
async def merge_base(ctx: Ctx) -> commit_entities.Commit:
    names = ctx.args["refs"]
    if not 2 <= len(names) <= MAX_MERGE_BASE_REFS:
        raise BadRequest(f"Provide at least 2 refs and at most {MAX_MERGE_BASE_REFS}")
    found = await ctx.off_loop(repository.merge_base, ctx.rt, ctx.project_row, names)
    return commit_entities.commit(found, _web_url(ctx))
