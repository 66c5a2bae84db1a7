"""The repository through the API: commits, diffs, comparisons, the tree, files and blobs at a ref,
archives, and commits of one file change."""

from __future__ import annotations

import asyncio
import base64
import logging

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

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
from ...policies import projects as policy
from ...services import files, repository
from .. import paging
from ..context import Ctx
from ..guards import project_guard
from ..params import Choice, Str
from ..registry import API

log = logging.getLogger("codeyard.repository")
READ = (project_guard(policy.DOWNLOAD_CODE),)
PUSH = (project_guard(policy.DOWNLOAD_CODE, policy.PUSH_CODE),)
REPOSITORY = "/projects/:id/repository"


@API.get(
    REPOSITORY + "/commits",
    guards=READ,
    paginated=True,
    params=(Str("ref_name", doc="Branch, tag or SHA (default: the default branch)"),),
    summary="Commits reachable from a ref, newest first",
)
async def list_commits(ctx: Ctx) -> paging.Page[RepoCommit]:
    window = paging.window(ctx)
    project = ctx.project
    ctx.commit()  # counting commits runs git: end the read transaction before waiting on it
    total, found = await run_in_threadpool(
        repository.commits, ctx.rt, project, ctx.args.get("ref_name"), window.offset, window.limit
    )
    return paging.Page([repo_commit(info) for info in found], total, window)


@API.get(REPOSITORY + "/commits/:sha", guards=READ, summary="A commit")
def get_commit(ctx: Ctx) -> RepoCommitDetail:
    return repo_commit_detail(repository.commit(ctx.rt, ctx.project, ctx.path_params["sha"]))


@API.get(REPOSITORY + "/commits/:sha/diff", guards=READ, summary="What a commit changed against its first parent")
async def get_commit_diff(ctx: Ctx) -> list[RepoDiff]:
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
async def compare_refs(ctx: Ctx) -> Compare:
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
def get_tree(ctx: Ctx) -> list[shapes.TreeEntry]:
    entries = repository.tree(ctx.rt, ctx.project, ctx.args.get("ref_name"), ctx.args.get("path", ""))
    return [{"id": e.id, "name": e.name, "type": e.type, "mode": e.mode, "path": e.path} for e in entries]


@API.get(
    REPOSITORY + "/files",
    guards=READ,
    params=(Str("file_path", required=True), Str("ref", required=True)),
    summary="A file at a ref, base64 encoded",
)
def get_file(ctx: Ctx) -> shapes.RepoFile:
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


# format parameter -> (git archive --format, file extension, Content-Type)
ARCHIVE_FORMATS = {
    "tar.gz": ("tar.gz", "tar.gz", "application/x-gzip"),
    "tgz": ("tgz", "tar.gz", "application/x-gzip"),
    "tar": ("tar", "tar", "application/x-tar"),
    "zip": ("zip", "zip", "application/zip"),
}


@API.get(
    REPOSITORY + "/archive",
    guards=READ,
    params=(Str("sha", doc="Commit, branch or tag (default: the default branch)"), Choice("format", tuple(ARCHIVE_FORMATS))),
    summary="An archive of the repository at a commit, streamed from `git archive`",
)
def get_archive(ctx: Ctx):
    path, sha = repository.archive_source(ctx.rt, ctx.project, ctx.args.get("sha"))
    git_format, extension, media_type = ARCHIVE_FORMATS[ctx.args.get("format", "tar.gz")]
    name = f"{ctx.project.path}-{sha}"
    return StreamingResponse(
        _git_archive(path, git_format, name, sha),
        media_type=media_type,
        headers={"content-disposition": f'attachment; filename="{name}.{extension}"'},
    )


async def _git_archive(path, git_format: str, prefix: str, sha: str):
    """The archive's bytes as git writes them; git is stopped if the client goes away."""
    process = await asyncio.create_subprocess_exec(
        "git", "--git-dir", str(path), "archive", f"--format={git_format}", f"--prefix={prefix}/", sha,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        while chunk := await process.stdout.read(64 * 1024):
            yield chunk
        if await process.wait() != 0:
            log.error("git archive of %s at %s failed (exit %s)", path, sha, process.returncode)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def _file_params(with_content: bool) -> tuple:
    params = (
        Str("file_path", required=True, max_length=4096),
        Str("branch_name", required=True, max_length=255),
        Str("commit_message", required=True, max_length=100_000, multiline=True),
    )
    if not with_content:
        return params
    return (*params, Str("content", required=True, verbatim=True), Choice("encoding", ("text", "base64")))


def _change_file(ctx: Ctx, action: str) -> dict:
    file_path = ctx.args["file_path"].strip("/")
    if not file_path or any(part in ("", ".", "..", ".git") for part in file_path.split("/")):
        raise Invalid.field("file_path", "is invalid")
    content = None
    if action != files.DELETE:
        text = ctx.args["content"]
        try:
            content = base64.b64decode(text, validate=True) if ctx.args.get("encoding") == "base64" else text.encode()
        except ValueError:
            raise Invalid.field("content", "is not valid base64") from None
    branch = ctx.args["branch_name"]
    files.change(ctx.session, ctx.rt, ctx.project, ctx.actor, ctx.access, action, branch, file_path, content,
                 ctx.args["commit_message"])  # fmt: skip
    return {"file_path": file_path, "branch_name": branch}


@API.post(REPOSITORY + "/files", guards=PUSH, params=_file_params(True), summary="Commit a new file to a branch")
def create_file(ctx: Ctx) -> shapes.FileChange:
    return _change_file(ctx, files.CREATE)


@API.put(REPOSITORY + "/files", guards=PUSH, params=_file_params(True), summary="Commit a change of a file to a branch")
def update_file(ctx: Ctx) -> shapes.FileChange:
    return _change_file(ctx, files.UPDATE)


@API.delete(REPOSITORY + "/files", guards=PUSH, params=_file_params(False), summary="Commit the removal of a file")
def delete_file(ctx: Ctx) -> shapes.FileChange:
    return _change_file(ctx, files.DELETE)


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
