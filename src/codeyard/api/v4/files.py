"""Repository files in v4: `/projects/:id/repository/files/:file_path` (the path URL-encoded, one
segment): read (GET, HEAD: the same facts as X-Gitlab-* headers), raw, blame; create, update and
delete, each a commit made like a push (services/files.py: checked against the branch's
protection, git off the event loop, recorded through the push's consequences)."""

from __future__ import annotations

import base64
import functools
import hashlib

from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

from ...entities.v4 import repository as entities
from ...errors import Invalid, MissingParam
from ...git.file_commits import Change
from ...git.paths import is_file_path
from ...http import paging
from ...http.context import Ctx
from ...http.params import Any_, Bool, Choice, GitText, ParamError, Str, to_int
from ...http.replies import Reply, json_body
from ...http.routing import MAX_FILE_BODY, Routes
from ...policies import projects as policy
from ...services import files, protected_branches, repository
from ..common.repository import raw
from ..guards import project_guard

routes = Routes()

READ = (project_guard(policy.DOWNLOAD_CODE),)
PUSH = (project_guard(policy.DOWNLOAD_CODE, policy.PUSH_CODE),)
FILE = "/projects/:id/repository/files/:file_path"


async def commit_to_branch(ctx: Ctx, branch: str, changes: list[Change], *, start: str | None, message: str,
                           author: tuple[str, str] | None) -> files.Moved:  # fmt: skip
    """Commit CHANGES on BRANCH as the caller, checked as a push of it, git in a worker thread; the
    push is recorded in the request's transaction."""
    protection = (await protected_branches.read_protections(ctx.rt.db, ctx.project_id)).get(branch)
    files.check_push(ctx.access, branch, protection, admin=ctx.by_admin)
    work = functools.partial(files.commit_changes, ctx.rt, ctx.project_row, ctx.actor, branch, changes,
                             start=start, message=message, author=author)  # fmt: skip
    moved = await ctx.off_loop(work)
    files.record(ctx.session, ctx.rt, moved)
    return moved


def author_of(ctx: Ctx) -> tuple[str, str] | None:
    name, email = ctx.args.get("author_name"), ctx.args.get("author_email")
    return (name or "", email or "") if name or email else None


def _path(ctx: Ctx) -> str:
    return ctx.path_params["file_path"].strip("/")


def _header(value: str) -> str:
    """A header value as its UTF-8 bytes (file names may be any text)."""
    return value.encode("utf-8", "surrogateescape").decode("latin-1")


def _facts(ctx: Ctx, found, last: str | None, ref: str) -> dict:
    file_path = _path(ctx)
    return {
        "file_name": file_path.rsplit("/", 1)[-1],
        "file_path": file_path,
        "size": found.size,
        "encoding": "base64",
        "ref": ref,
        "blob_id": found.id,
        "commit_id": found.commit_id,
        "last_commit_id": last,
        "execute_filemode": found.mode == 0o100755,
    }


def _headers(facts: dict, digest: str | None) -> dict[str, str]:
    shown = {**facts, "content_sha256": digest} if digest is not None else facts
    return {"x-gitlab-" + key.replace("_", "-"): _header(str(value).lower() if isinstance(value, bool) else str(value or ""))
            for key, value in shown.items()}  # fmt: skip


@routes.get(FILE, auth="optional", guards=READ, params=(GitText("ref", required=True),),
            summary="A file at a ref, base64 encoded; HEAD answers its facts as X-Gitlab-* headers")  # fmt: skip
async def get_file(ctx: Ctx) -> Reply[entities.RepoFile]:
    ref = ctx.args["ref"]
    found, last = await ctx.off_loop(repository.file_at, ctx.rt, ctx.project_row, ref, _path(ctx))
    facts = _facts(ctx, found, last, ref)
    if ctx.method == "HEAD":
        digest = await run_in_threadpool(repository.blob_sha256, ctx.rt, ctx.project_row, found)
        return Reply({**facts, "content_sha256": digest, "content": ""}, headers=_headers(facts, digest))
    if found.streamed:
        return StreamingResponse(_streamed(facts, found), media_type="application/json", headers=_headers(facts, None))
    data = await run_in_threadpool(repository.blob_content, ctx.rt, ctx.project_row, found)
    digest = hashlib.sha256(data).hexdigest()
    body = {**facts, "content_sha256": digest, "content": base64.b64encode(data).decode()}
    return Reply(body, headers=_headers(facts, digest))


async def _streamed(facts: dict, found):
    """The file's JSON with its content streamed from git; its SHA-256 comes after it."""
    digest = hashlib.sha256()
    yield json_body(facts)[:-1] + b',"content":"'
    async for chunk in repository.blob_chunks(found):
        digest.update(chunk)
        yield base64.b64encode(chunk)
    yield b'",' + json_body({"content_sha256": digest.hexdigest()})[1:]


@routes.get(FILE + "/raw", auth="optional", guards=READ, params=(GitText("ref"), Bool("lfs")),
            summary="A file's raw content at a ref (default: the default branch)")  # fmt: skip
async def get_raw_file(ctx: Ctx):
    ref = ctx.args.get("ref") or ctx.project_row.head_branch
    found = await ctx.off_loop(repository.file_blob, ctx.rt, ctx.project_row, ref, _path(ctx))
    return await raw(ctx, found)


def _line(value, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = to_int(value)
    except ParamError:
        raise Invalid.field(name, "is invalid") from None
    if number < 1:
        raise Invalid.field(name, "is invalid")
    return number


@routes.get(FILE + "/blame", auth="optional", guards=READ, paginated=True, params=(GitText("ref", required=True), Any_("range")),
            summary="A file at a ref as ranges of lines with the commit that last changed each; range[start], range[end]")  # fmt: skip
async def get_blame(ctx: Ctx) -> paging.Page[entities.BlameRange]:
    span = ctx.args.get("range")
    span = span if isinstance(span, dict) else {}
    start, end = _line(span.get("start"), "range[start]"), _line(span.get("end"), "range[end]")
    if start is not None and end is not None and end < start:
        raise Invalid.field("range[end]", "is invalid")
    window = paging.window(ctx)
    found = await ctx.off_loop(repository.blame, ctx.rt, ctx.project_row, ctx.args["ref"], _path(ctx), start, end)
    page = found[window.offset : window.offset + window.limit]
    return paging.Page([entities.blame_range(part) for part in page], len(found), window)


def _change_params(with_content: bool) -> tuple:
    params = (
        GitText("branch", required=True, max_length=255),
        GitText("start_branch", max_length=255),
        Str("commit_message", required=True, max_length=100_000, multiline=True),
        Str("author_email", max_length=255),
        Str("author_name", max_length=255),
        GitText("last_commit_id", max_length=40),
    )
    if not with_content:
        return params
    return (*params, Str("content", verbatim=True), Choice("encoding", ("text", "base64")), Bool("execute_filemode"))


def content_of(args: dict) -> bytes:
    """ARGS' content as bytes (base64 decoded when `encoding` says so); 400 for bad base64."""
    text = args.get("content") or ""
    if args.get("encoding") != "base64":
        return text.encode("utf-8", "surrogateescape")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise Invalid.field("content", "is not valid base64") from None


def checked_path(file_path: str, name: str = "file_path") -> str:
    if not is_file_path(file_path) or len(file_path) > 4096:
        raise Invalid.field(name, "is invalid")
    return file_path


async def _change(ctx: Ctx, action: str) -> files.Moved:
    file_path = checked_path(ctx.path_params["file_path"])  # as given: `/abs` and `dir/` are refused
    content = None
    if action != "delete":
        if ctx.param("content") is None:
            raise MissingParam("content")
        content = content_of(ctx.args)
    change = Change(action, file_path, content, executable=ctx.args.get("execute_filemode"),
                    last_commit_id=ctx.args.get("last_commit_id"))  # fmt: skip
    return await commit_to_branch(ctx, ctx.args["branch"], [change], start=ctx.args.get("start_branch"),
                                  message=ctx.args["commit_message"], author=author_of(ctx))  # fmt: skip


@routes.post(FILE, guards=PUSH, params=_change_params(True), max_body=MAX_FILE_BODY, summary="Commit a new file to a branch")
async def create_file(ctx: Ctx) -> entities.FileChange:
    await _change(ctx, "create")
    return {"file_path": _path(ctx), "branch": ctx.args["branch"]}


@routes.put(FILE, guards=PUSH, params=_change_params(True), max_body=MAX_FILE_BODY, summary="Commit a change of a file to a branch")
async def update_file(ctx: Ctx) -> entities.FileChange:
    await _change(ctx, "update")
    return {"file_path": _path(ctx), "branch": ctx.args["branch"]}


@routes.delete(FILE, guards=PUSH, params=_change_params(False), status=204, summary="Commit the removal of a file")
async def delete_file(ctx: Ctx) -> None:
    await _change(ctx, "delete")
