"""The repository through the API: commits, diffs, comparisons, the tree, files and blobs at a ref,
archives, and commits of one file change."""

from __future__ import annotations

import base64
import os

from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

from ...entities import commits as shapes
from ...entities.commits import (
    Compare,
    RepoCommit,
    RepoCommitDetail,
    RepoDiff,
    comparison,
    repo_commit,
    repo_commit_detail,
    repo_diff,
)
from ...errors import Invalid
from ...git.paths import is_file_path
from ...http import paging
from ...http.context import Ctx
from ...http.params import Choice, GitText, Str
from ...http.replies import json_body
from ...http.routing import MAX_FILE_BODY, Routes
from ...policies import projects as policy
from ...services import files, repository
from ...services.ci import pipelines
from ..common.repository import file_chunks, raw
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
PUSH = (project_guard(policy.DOWNLOAD_CODE, policy.PUSH_CODE),)
REPOSITORY = "/projects/:id/repository"


async def _read(ctx: Ctx, read, *args):
    """READ(rt, project, *ARGS) off the event loop, so a slow git never holds up other requests.
    The project is the guard's row: git needs no session."""
    return await ctx.off_loop(read, ctx.rt, ctx.project_row, *args)


@routes.get(
    REPOSITORY + "/commits",
    guards=READ,
    paginated=True,
    params=(GitText("ref_name", doc="Branch, tag or SHA (default: the default branch)"),),
    summary="Commits reachable from a ref, newest first",
)
async def list_commits(ctx: Ctx) -> paging.Page[RepoCommit]:
    window = paging.window(ctx)
    total, found = await _read(ctx, repository.commits, ctx.args.get("ref_name"), window.offset, window.limit)
    return paging.Page([repo_commit(info) for info in found], total, window)


@routes.get(REPOSITORY + "/commits/:sha", guards=READ, summary="A commit")
async def get_commit(ctx: Ctx) -> RepoCommitDetail:
    info = await _read(ctx, repository.commit, ctx.path_params["sha"])
    return repo_commit_detail(info, await pipelines.read_commit_status(ctx.rt.db, ctx.project_id, info.id))


@routes.get(REPOSITORY + "/commits/:sha/diff", guards=READ, summary="What a commit changed against its first parent")
async def get_commit_diff(ctx: Ctx) -> list[RepoDiff]:
    found = await _read(ctx, repository.commit_diff, ctx.path_params["sha"])
    return [repo_diff(diff) for diff in found]


@routes.get(REPOSITORY + "/contributors", guards=READ, paginated=True,
         summary="Authors of the default branch by e-mail, the most recent first (its newest 2000 non-merge commits)")  # fmt: skip
async def list_contributors(ctx: Ctx) -> paging.Page[shapes.Contributor]:
    window = paging.window(ctx)
    found = await _read(ctx, repository.contributors)
    page = found[window.offset : window.offset + window.limit]
    return paging.Page([shapes.contributor(person) for person in page], len(found), window)


@routes.get(
    REPOSITORY + "/compare",
    guards=READ,
    params=(GitText("from", required=True), GitText("to", required=True)),
    summary="Commits and diff from one ref to another (from the merge base, like `git diff from...to`)",
)
async def compare_refs(ctx: Ctx) -> Compare:
    base, head = ctx.args["from"], ctx.args["to"]
    found = await _read(ctx, repository.compare, base, head)
    return comparison(found, same_ref=base == head)


@routes.get(
    REPOSITORY + "/tree",
    guards=READ,
    params=(GitText("path"), GitText("ref_name")),
    summary="Entries of a directory at a ref",
)
async def get_tree(ctx: Ctx) -> list[shapes.TreeEntry]:
    entries = await _read(ctx, repository.tree, ctx.args.get("ref_name"), ctx.args.get("path", ""))
    return [shapes.tree_entry(entry) for entry in entries]


@routes.get(
    REPOSITORY + "/files",
    guards=READ,
    params=(GitText("file_path", required=True), GitText("ref", required=True)),
    summary="A file at a ref, base64 encoded",
)
async def get_file(ctx: Ctx) -> shapes.RepoFile:
    file_path, ref = ctx.args["file_path"].strip("/"), ctx.args["ref"]
    found, last = await _read(ctx, repository.file_at, ref, file_path)
    head = {"file_name": file_path.rsplit("/", 1)[-1], "file_path": file_path, "size": found.size, "encoding": "base64"}
    tail = {"ref": ref, "blob_id": found.id, "commit_id": found.commit_id, "last_commit_id": last}
    if not found.streamed:
        data = await run_in_threadpool(repository.blob_content, ctx.rt, ctx.project_row, found)
        return {**head, "content": base64.b64encode(data).decode(), **tail}
    return StreamingResponse(_json_around(head, repository.blob_chunks(found, encoded=True), tail),
                             media_type="application/json")  # fmt: skip


async def _json_around(head: dict, text, tail: dict):
    """`{**HEAD, "content": <TEXT>, **TAIL}` as JSON, TEXT (JSON-safe bytes) streamed in between."""
    yield json_body(head)[:-1] + b',"content":"'
    async for chunk in text:
        yield chunk
    yield b'",' + json_body(tail)[1:]


# format parameter -> (git archive --format, file extension, Content-Type)
ARCHIVE_FORMATS = {
    "tar.gz": ("tar.gz", "tar.gz", "application/x-gzip"),
    "tgz": ("tgz", "tar.gz", "application/x-gzip"),
    "tar": ("tar", "tar", "application/x-tar"),
    "zip": ("zip", "zip", "application/zip"),
}


@routes.get(
    REPOSITORY + "/archive",
    guards=READ,
    params=(GitText("sha", doc="Commit, branch or tag (default: the default branch)"), Choice("format", tuple(ARCHIVE_FORMATS))),
    summary="An archive of the repository at a commit (cached on disk per commit and format)",
)
async def get_archive(ctx: Ctx):
    path, sha = await _read(ctx, repository.archive_source, ctx.args.get("sha"))
    git_format, extension, media_type = ARCHIVE_FORMATS[ctx.args.get("format", "tar.gz")]
    name = f"{ctx.project_row.path}-{sha}"
    handle = await ctx.rt.archives.open(path, ctx.project_id, sha, git_format, name, f"{name}.{extension}")
    headers = {"content-disposition": f'attachment; filename="{name}.{extension}"',
               "content-length": str(os.fstat(handle.fileno()).st_size)}  # fmt: skip
    return StreamingResponse(file_chunks(handle), media_type=media_type, headers=headers)




def _file_params(with_content: bool) -> tuple:
    params = (
        GitText("file_path", required=True, max_length=4096),
        GitText("branch_name", required=True, max_length=255),
        Str("commit_message", required=True, max_length=100_000, multiline=True),
    )
    if not with_content:
        return params
    return (*params, Str("content", required=True, verbatim=True), Choice("encoding", ("text", "base64")))


def _change_file(ctx: Ctx, action: str) -> dict:
    file_path = ctx.args["file_path"].strip("/")
    if not is_file_path(file_path):
        raise Invalid.field("file_path", "is invalid")
    content = None
    if action != files.DELETE:
        text = ctx.args["content"]
        try:
            content = base64.b64decode(text, validate=True) if ctx.args.get("encoding") == "base64" else text.encode()
        except ValueError:
            raise Invalid.field("content", "is not valid base64") from None
    if "\x00" in ctx.args["commit_message"]:
        raise Invalid.field("commit_message", "is invalid")
    branch = ctx.args["branch_name"]
    files.change(ctx.session, ctx.rt, ctx.project, ctx.actor, ctx.access, action, branch, file_path, content,
                 ctx.args["commit_message"])  # fmt: skip
    return {"file_path": file_path, "branch_name": branch}


@routes.post(REPOSITORY + "/files", guards=PUSH, params=_file_params(True), max_body=MAX_FILE_BODY, summary="Commit a new file to a branch")
def create_file(ctx: Ctx) -> shapes.FileChange:
    return _change_file(ctx, files.CREATE)


@routes.put(REPOSITORY + "/files", guards=PUSH, params=_file_params(True), max_body=MAX_FILE_BODY, summary="Commit a change of a file to a branch")
def update_file(ctx: Ctx) -> shapes.FileChange:
    return _change_file(ctx, files.UPDATE)


@routes.delete(REPOSITORY + "/files", guards=PUSH, params=_file_params(False), summary="Commit the removal of a file")
def delete_file(ctx: Ctx) -> shapes.FileChange:
    return _change_file(ctx, files.DELETE)






async def get_blob_at(ctx: Ctx):
    found = await _read(ctx, repository.file_blob, ctx.path_params["sha"], ctx.args["filepath"])
    return await raw(ctx, found)


async def get_commit_blob(ctx: Ctx):
    return await get_blob_at(ctx)


# GitLab 8.6 served one endpoint under both paths (`commits/:sha/blob` is the older form).
for _path, _handler in (("/blobs/*sha", get_blob_at), ("/commits/*sha/blob", get_commit_blob)):
    routes.get(REPOSITORY + _path, guards=READ, params=(GitText("filepath", required=True),),
            summary="The raw content of a file at a commit, branch or tag")(_handler)  # fmt: skip


@routes.get(REPOSITORY + "/raw_blobs/:sha", guards=READ, summary="The raw content of a blob by its SHA (4 to 40 hex digits)")
async def get_raw_blob(ctx: Ctx):
    return await raw(ctx, await _read(ctx, repository.blob, ctx.path_params["sha"]))
