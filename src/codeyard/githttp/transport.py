"""Smart HTTP: `/<namespace>/<project>[.git]/info/refs`, `git-upload-pack`, `git-receive-pack`.

codeyard decides who may do what (HTTP Basic credentials, the project policy); git itself speaks
the protocol: each request runs `git http-backend` as a CGI program in a subprocess, with request
and response bodies streamed through in chunks (never a whole pack in memory). That gives gzip
request bodies, protocol v2 (`Git-Protocol` -> `GIT_PROTOCOL`) and the exact smart-HTTP framing
from the git that is installed, instead of a second implementation of them.

Pushes run with codeyard's hooks (`codeyard.githooks`): pre-receive enforces branch protection with
the rights computed here before git starts; reference-transaction appends the refs git moved to the
push's journal (`services.push_journal`), which the server creates and locks before starting git, so
a push is on disk before git answers the client. Once git has finished, and before the response
ends, `services.pushes.post_push` records the push (bounded work in one short transaction; a failure
there is logged and never fails the push) and the journal is removed; a server that dies first
leaves the journal to the recovery that `codeyard serve` and the job worker run.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import secrets
import signal
import sys
import time
from pathlib import Path

from sqlalchemy import select

from .. import datadir, githooks, metrics
from ..api.context import Ctx
from ..api.registry import WEB
from ..db.models import ProtectedBranch
from ..errors import BadRequest, CodeyardError, Forbidden, NotFound, RepositoryUnavailable, Unauthorized
from ..git import storage
from ..policies import projects as policy
from ..services import project_reads, push_journal
from .credentials import BadCredentials, BuildCredential, user_for

log = logging.getLogger("codeyard.githttp")

UPLOAD, RECEIVE = "git-upload-pack", "git-receive-pack"
CHUNK = 64 * 1024
CHALLENGE = {"www-authenticate": 'Basic realm="codeyard"'}
RETIRED_HOOKS = ("post-receive",)  # written by earlier versions; a journal records pushes now


class GitUnauthorized(Unauthorized):
    def __init__(self):
        super().__init__(headers=dict(CHALLENGE))


def _project_path(ctx: Ctx) -> str:
    project = ctx.path_params["project"]
    return project[: -len(".git")] if project.endswith(".git") else project


NOSNIFF = (b"x-content-type-options", b"nosniff")


def text_errors(handler):
    """Git routes answer errors as plain text (what git shows its user), never as a page a browser
    could be made to sniff and render."""

    @functools.wraps(handler)
    async def answer(ctx: Ctx, receive, send):
        try:
            await handler(ctx, receive, send)
        except Exception as error:
            if ctx.scope.get("codeyard.response_started"):
                raise
            ctx.rollback()
            await send_text(send, *_error_text(ctx, error))

    return answer


def _error_text(ctx: Ctx, error: Exception) -> tuple[int, str, dict]:
    if isinstance(error, CodeyardError):
        message = error.message if isinstance(error.message, str) else json.dumps(error.message)
        return error.status, message, error.headers
    log.exception("unhandled error on %s %s", ctx.method, ctx.raw_path)
    return 500, "500 Internal Server Error", {}


async def send_text(send, status: int, message: str, headers: dict) -> None:
    body = f"{message}\n".encode()
    head = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), NOSNIFF]
    head += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


@WEB.get("/:namespace/:project/info/refs", kind="raw", auth="none", summary="git smart HTTP: ref advertisement")
@text_errors
async def info_refs(ctx: Ctx, receive, send):
    service = ctx.query.get("service")
    if service not in (UPLOAD, RECEIVE):
        raise BadRequest("400 (Bad request) only the smart HTTP protocol is served (service=git-upload-pack|git-receive-pack)")
    await serve(ctx, receive, send, service, "info/refs")


@WEB.post("/:namespace/:project/git-upload-pack", kind="raw", auth="none", summary="git smart HTTP: fetch and clone")
@text_errors
async def upload_pack(ctx: Ctx, receive, send):
    await serve(ctx, receive, send, UPLOAD, UPLOAD)


@WEB.post("/:namespace/:project/git-receive-pack", kind="raw", auth="none", summary="git smart HTTP: push")
@text_errors
async def receive_pack(ctx: Ctx, receive, send):
    await serve(ctx, receive, send, RECEIVE, RECEIVE)


async def serve(ctx: Ctx, receive, send, service: str, suffix: str) -> None:
    try:
        user = await user_for(ctx.rt, ctx.header("authorization"), ctx.client_address)
    except BadCredentials:
        raise GitUnauthorized() from None
    ctx.actor = user  # for the access log
    grant = await authorize(ctx, user, service)
    env = cgi_environment(ctx, user, grant, service, suffix)
    if ctx.method != "POST":
        await run_backend(ctx, receive, send, env, finish_once_received=False)
        return
    started, outcome = time.perf_counter(), "error"
    try:
        if await (upload(ctx, receive, send, env) if service == UPLOAD else push(ctx, receive, send, env, grant, user)):
            outcome = "ok"
    finally:
        metrics.GIT_SECONDS.labels(service.removeprefix("git-"), outcome).observe(time.perf_counter() - started)


async def upload(ctx: Ctx, receive, send, env: dict[str, str]) -> bool:
    """A fetch or clone; whether git succeeded."""
    return await run_backend(ctx, receive, send, env, finish_once_received=False) == 0


async def push(ctx: Ctx, receive, send, env: dict[str, str], grant: Grant, user) -> bool:
    """A push, journaled (services/push_journal); whether git succeeded."""
    journal = await asyncio.to_thread(push_journal.Journal.create, ctx.rt.config, grant.project_id, user.id)
    env["CODEYARD_PUSH_JOURNAL"] = str(journal.path)
    recording = []
    try:
        after = lambda: after_push(ctx, journal, recording)  # noqa: E731
        # git inherits the journal's lock: a server that dies leaves it held until git has finished.
        code = await run_backend(ctx, receive, send, env, finish_once_received=True, after=after, keep_fds=(journal.fd,))
    finally:
        if not recording:
            journal.release()  # git may have moved refs: recovery records them
    collect_garbage(storage.repository_path(ctx.rt.config.repositories_dir, grant.project_id), env)
    return code == 0


class Grant:
    """What the request may do, decided before git starts."""

    def __init__(self, project_id: int, access: policy.Access, protected: dict):
        self.project_id = project_id
        self.access = access
        self.protected = protected


async def authorize(ctx: Ctx, user, service: str) -> Grant:
    """Public projects: anyone reads; internal: signed-in users; private: reporters and up. Pushing
    needs developer rights. Anonymous callers are asked for credentials (401) rather than told that a
    project is missing or private; signed-in callers get 404 for what they cannot see.

    The project and the caller's memberships come from the API guards' read path (one prebuilt
    statement, awaited on the loop); only a push opens a session, for its protected branches."""
    need = policy.PUSH_CODE if service == RECEIVE else policy.DOWNLOAD_CODE
    member = user if not isinstance(user, BuildCredential) else None
    row = await project_reads.find_awaited(ctx.rt.db, f"{ctx.path_params['namespace']}/{_project_path(ctx)}", member)
    access = _access(user, row)
    if not access.can(policy.READ_PROJECT):
        raise GitUnauthorized() if user is None else NotFound("Project")
    if not access.can(need):
        if user is None:
            raise GitUnauthorized()
        verb = "push code to" if service == RECEIVE else "download code from"
        raise Forbidden(f"You are not allowed to {verb} this project")
    grant = Grant(row.id, access, _protected_branches(ctx, row.id) if service == RECEIVE else {})
    path = storage.repository_path(ctx.rt.config.repositories_dir, grant.project_id)
    if not (path / "HEAD").exists():
        log.error("repository of project %s is missing at %s", grant.project_id, path)
        raise RepositoryUnavailable()
    return grant


def _protected_branches(ctx: Ctx, project_id: int) -> dict:
    with ctx.rt.db.session(write=False) as session:
        rows = session.scalars(select(ProtectedBranch).where(ProtectedBranch.project_id == project_id))
        return {row.name: {"developers_can_push": row.developers_can_push} for row in rows}


BUILD_ACCESS = policy.Access(frozenset({policy.READ_PROJECT, policy.DOWNLOAD_CODE}))


def _access(user, row) -> policy.Access:
    """The caller's access to the project of ROW (a `project_reads` row, or None); a running
    build's token reads its own project's code and nothing else."""
    if row is None:
        return policy.NO_ACCESS
    if isinstance(user, BuildCredential):
        return BUILD_ACCESS if user.project_id == row.id else policy.NO_ACCESS
    return project_reads.access(user, row)


def hooks_dir(ctx: Ctx) -> Path:
    """The directory of codeyard's git hooks under the data dir, written on first use and again
    when this version's scripts differ (another interpreter, another launcher)."""
    directory = ctx.rt.config.data_dir / "githooks"
    for hook, text in githooks.scripts(sys.executable).items():
        path = directory / hook
        if _text(path) != text:
            datadir.private_dir(directory)
            temporary = directory / f".{hook}.{secrets.token_hex(4)}"
            temporary.write_text(text)
            temporary.chmod(0o700)
            temporary.replace(path)
    for hook in RETIRED_HOOKS:
        (directory / hook).unlink(missing_ok=True)
    return directory


def _text(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def cgi_environment(ctx: Ctx, user, grant: Grant, service: str, suffix: str) -> dict[str, str]:
    config = ctx.rt.config
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_PROJECT_ROOT=str(config.repositories_dir),
        GIT_HTTP_EXPORT_ALL="1",
        PATH_INFO=f"/{storage.repository_path(config.repositories_dir, grant.project_id).name}/{suffix}",
        REQUEST_METHOD=ctx.method,
        QUERY_STRING=ctx.query_string,
        CONTENT_TYPE=ctx.header("content-type") or "",
        REMOTE_USER=user.username if user is not None else "",
        REMOTE_ADDR=(ctx.scope.get("client") or ("", 0))[0] or "",
    )
    for header, variable in (("content-length", "CONTENT_LENGTH"), ("content-encoding", "HTTP_CONTENT_ENCODING"),
                             ("git-protocol", "GIT_PROTOCOL")):  # fmt: skip
        if ctx.header(header):
            env[variable] = ctx.header(header)
    if service == RECEIVE:
        env.update(
            GIT_CONFIG_COUNT="3",
            GIT_CONFIG_KEY_0="core.hooksPath",
            GIT_CONFIG_VALUE_0=str(hooks_dir(ctx)),
            GIT_CONFIG_KEY_1="http.receivepack",  # who may push was decided above
            GIT_CONFIG_VALUE_1="true",
            # receive-pack's own `gc --auto` would detach from the request; the server runs it instead.
            GIT_CONFIG_KEY_2="receive.autogc",
            GIT_CONFIG_VALUE_2="false",
            CODEYARD_PUSH_RULES=githooks.push_rules(grant.access.abilities, grant.protected),
        )
    return env


async def run_backend(ctx: Ctx, receive, send, env: dict[str, str], finish_once_received: bool, after=None,
                      keep_fds: tuple[int, ...] = ()) -> int:
    """Run `git http-backend`, stream the request body in and its CGI response out; its exit code.

    A client that goes away while sending stops git. With FINISH_ONCE_RECEIVED (pushes), git is let
    finish once the whole request has arrived: the refs may already be changing.
    """
    process = await asyncio.create_subprocess_exec(
        "git", "http-backend", env=env, start_new_session=True, pass_fds=keep_fds,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    feeder = asyncio.create_task(_feed(receive, process, finish_once_received))
    errors = asyncio.create_task(_tail(process.stderr))
    try:
        status, headers, rest = await _read_cgi_head(process.stdout)
        await send({"type": "http.response.start", "status": status, "headers": [*headers, NOSNIFF]})
        ctx.scope["codeyard.response_started"] = True
        if rest:
            await send({"type": "http.response.body", "body": rest, "more_body": True})
        while chunk := await process.stdout.read(CHUNK):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        code = await process.wait()
        if code != 0:
            log.warning("git http-backend exited with %s: %s", code, (await errors).decode(errors="replace"))
        if after is not None:
            await after()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return code
    finally:
        feeder.cancel()
        errors.cancel()
        if process.returncode is None:
            _signal(process, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 2)
            except TimeoutError:
                _signal(process, signal.SIGKILL)
                await process.wait()


async def _tail(stream, keep: int = 4096) -> bytes:
    """Read STREAM to its end (so git never blocks on a full pipe), keeping the last KEEP bytes."""
    kept = b""
    while chunk := await stream.read(CHUNK):
        kept = (kept + chunk)[-keep:]
    return kept


async def _feed(receive, process, finish_once_received: bool) -> None:
    """Copy the request body to git's stdin; stop git when the client goes away early."""
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            body = message.get("body", b"")
            if body:
                process.stdin.write(body)
                await process.stdin.drain()
            if not message.get("more_body"):
                process.stdin.close()
                if finish_once_received:
                    return
                # A fetch: stop sending a pack nobody reads once the client hangs up.
                while (await receive())["type"] != "http.disconnect":
                    pass
                break
    except (BrokenPipeError, ConnectionResetError):
        return
    if process.returncode is None:
        _signal(process, signal.SIGTERM)


def _signal(process, number: int) -> None:
    """Signal git http-backend and what it started (upload-pack, receive-pack, hooks): its process
    group. SIGTERM first lets git remove a half-received push's quarantine directory."""
    try:
        os.killpg(process.pid, number)
    except ProcessLookupError:
        pass


async def _read_cgi_head(stdout) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The CGI status and headers git printed, and the start of the body read with them."""
    buffer = b""
    while True:
        ends = [(buffer.find(mark), mark) for mark in (b"\r\n\r\n", b"\n\n") if mark in buffer]
        if ends:
            index, mark = min(ends)
            head, rest = buffer[:index], buffer[index + len(mark) :]
            break
        chunk = await stdout.read(CHUNK)
        if not chunk:
            raise RuntimeError("git http-backend ended without a response")
        buffer += chunk
    status, headers = 200, []
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.split()[0])
        elif name:
            headers.append((name.strip().lower().encode("latin-1"), value.strip().encode("latin-1")))
    return status, headers, rest


POST_PUSH_WAIT = 10.0  # seconds the response waits for the push to be recorded
_background: set[asyncio.Task] = set()


async def after_push(ctx: Ctx, journal: push_journal.Journal, recording: list) -> None:
    """Record the journal's push in a worker thread (it reads the repository), waiting at most
    POST_PUSH_WAIT seconds before ending the response; the recording itself always runs to its end
    and then removes the journal (or leaves it to recovery when it failed)."""
    task = asyncio.ensure_future(asyncio.to_thread(push_journal.record_journal, ctx.rt, journal))
    recording.append(task)
    _background.add(task)
    task.add_done_callback(_background.discard)
    try:
        await asyncio.wait_for(asyncio.shield(task), POST_PUSH_WAIT)
    except TimeoutError:
        log.warning("recording a push to project %s takes longer than %ss; the push response ends", journal.header.project_id, POST_PUSH_WAIT)


def collect_garbage(repository: Path, env: dict[str, str]) -> None:
    """`git gc --auto` after a push, as a subprocess the server owns (not one detached by git)."""

    async def run() -> None:
        process = await asyncio.create_subprocess_exec(
            "git", "--git-dir", str(repository), "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet",
            env={k: v for k, v in env.items() if not k.startswith(("GIT_", "CODEYARD_"))},
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await process.wait()

    task = asyncio.ensure_future(run())
    _background.add(task)
    task.add_done_callback(_background.discard)
