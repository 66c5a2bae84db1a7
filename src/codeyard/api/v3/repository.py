"""Repository reads: commits, a commit and its diff, comparisons, the tree, files and blobs at a ref."""

from __future__ import annotations

import base64

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from ...entities.commits import comparison, repo_commit, repo_commit_detail, repo_diff
from ...policies import projects as policy
from ...services import repository
from .. import paging
from ..context import Ctx
from ..guards import project_guard
from ..params import Str
from ..registry import API

READ = (project_guard(policy.DOWNLOAD_CODE),)
REPOSITORY = "/projects/:id/repository"


@API.get(
    REPOSITORY + "/commits",
    guards=READ,
    paginated=True,
    params=(Str("ref_name", doc="Branch, tag or SHA (default: the default branch)"),),
    summary="Commits reachable from a ref, newest first",
)
async def list_commits(ctx: Ctx):
    window = paging.window(ctx)
    project = ctx.project
    ctx.commit()  # counting commits runs git: end the read transaction before waiting on it
    total, found = await run_in_threadpool(
        repository.commits, ctx.rt, project, ctx.args.get("ref_name"), window.offset, window.limit
    )
    return paging.Page([repo_commit(info) for info in found], total, window)


@API.get(REPOSITORY + "/commits/:sha", guards=READ, summary="A commit")
def get_commit(ctx: Ctx):
    return repo_commit_detail(repository.commit(ctx.rt, ctx.project, ctx.path_params["sha"]))


@API.get(REPOSITORY + "/commits/:sha/diff", guards=READ, summary="What a commit changed against its first parent")
async def get_commit_diff(ctx: Ctx):
    project = ctx.project
    ctx.commit()  # diffing runs outside the event loop: end the read transaction first
    found = await run_in_threadpool(repository.commit_diff, ctx.rt, project, ctx.path_params["sha"])
    return [repo_diff(diff) for diff in found]


@API.get(
    REPOSITORY + "/compare",
    guards=READ,
    params=(Str("from", required=True), Str("to", required=True)),
    summary="Commits and diff from one ref to another (from the merge base, like `git diff from...to`)",
)
async def compare_refs(ctx: Ctx):
    project, base, head = ctx.project, ctx.args["from"], ctx.args["to"]
    ctx.commit()
    found = await run_in_threadpool(repository.compare, ctx.rt, project, base, head)
    return comparison(found, same_ref=base == head)


@API.get(
    REPOSITORY + "/tree",
    guards=READ,
    params=(Str("path"), Str("ref_name")),
    summary="Entries of a directory at a ref",
)
def get_tree(ctx: Ctx):
    entries = repository.tree(ctx.rt, ctx.project, ctx.args.get("ref_name"), ctx.args.get("path", ""))
    return [{"id": e.id, "name": e.name, "type": e.type, "mode": e.mode, "path": e.path} for e in entries]


@API.get(
    REPOSITORY + "/files",
    guards=READ,
    params=(Str("file_path", required=True), Str("ref", required=True)),
    summary="A file at a ref, base64 encoded",
)
def get_file(ctx: Ctx):
    file_path, ref = ctx.args["file_path"].strip("/"), ctx.args["ref"]
    found, last = repository.file_at(ctx.rt, ctx.project, ref, file_path)
    return {
        "file_name": file_path.rsplit("/", 1)[-1],
        "file_path": file_path,
        "size": found.size,
        "encoding": "base64",
        "content": base64.b64encode(found.content).decode(),
        "ref": ref,
        "blob_id": found.blob_id,
        "commit_id": found.commit_id,
        "last_commit_id": last,
    }


def _raw(content: bytes) -> Response:
    return Response(content, media_type="text/plain; charset=utf-8", headers={"x-content-type-options": "nosniff"})


@API.get(
    REPOSITORY + "/blobs/*sha",
    guards=READ,
    params=(Str("filepath", required=True),),
    summary="The raw content of a file at a commit, branch or tag",
)
def get_blob_at(ctx: Ctx):
    found, _ = repository.file_at(ctx.rt, ctx.project, ctx.path_params["sha"], ctx.args["filepath"])
    return _raw(found.content)


@API.get(REPOSITORY + "/raw_blobs/:sha", guards=READ, summary="The raw content of a blob by its SHA")
def get_raw_blob(ctx: Ctx):
    return _raw(repository.blob(ctx.rt, ctx.project, ctx.path_params["sha"]))
