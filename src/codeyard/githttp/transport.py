"""Smart HTTP: `/<namespace>/<project>[.git]/info/refs`, `git-upload-pack`, `git-receive-pack`.

codeyard decides who may do what (HTTP Basic credentials, the project policy); git itself speaks
the protocol: each request runs `git upload-pack` or `git receive-pack` in stateless-RPC mode, with
request and response bodies streamed through in chunks (never a whole pack in memory). What `git
http-backend` would add is a few lines here: the content types, the `# service=` line of a v0
advertisement, inflating gzip request bodies and passing `Git-Protocol` on as `GIT_PROTOCOL`;
running the service directly saves a process start on every request of a fetch.

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
import re
import secrets
import signal
import sys
import time
import zlib
from pathlib import Path

from .. import datadir, githooks, metrics
from ..errors import (
    BadRequest,
    CodeyardError,
    Forbidden,
    NotFound,
    RepositoryUnavailable,
    Unauthorized,
    UnsupportedMediaType,
)
from ..git import storage
from ..http.context import Ctx
from ..http.routing import Routes
from ..policies import projects as policy
from ..services import credentials, loader, project_reads, protected_branches, push_journal
from ..services.loader import LoadRefused
from .credentials import BadCredentials, BuildCredential, user_for

routes = Routes()

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


@routes.get("/:namespace/:project/info/refs", kind="raw", auth="none", summary="git smart HTTP: ref advertisement")
@text_errors
async def info_refs(ctx: Ctx, receive, send):
    service = ctx.query.get("service")
    if service not in (UPLOAD, RECEIVE):
        raise BadRequest("400 (Bad request) only the smart HTTP protocol is served (service=git-upload-pack|git-receive-pack)")
    await serve(ctx, receive, send, service)


@routes.post("/:namespace/:project/git-upload-pack", kind="raw", auth="none", summary="git smart HTTP: fetch and clone")
@text_errors
async def upload_pack(ctx: Ctx, receive, send):
    await serve(ctx, receive, send, UPLOAD)


@routes.post("/:namespace/:project/git-receive-pack", kind="raw", auth="none", summary="git smart HTTP: push")
@text_errors
async def receive_pack(ctx: Ctx, receive, send):
    await serve(ctx, receive, send, RECEIVE)


async def serve(ctx: Ctx, receive, send, service: str) -> None:
    try:
        user = await user_for(ctx.rt, ctx.header("authorization"), ctx.client_address)
    except BadCredentials:
        raise GitUnauthorized() from None
    ctx.actor = user  # for the access log
    grant = await authorize(ctx, user, service)
    repository = storage.repository_path(ctx.rt.config.repositories_dir, grant.project_id)
    if ctx.method != "POST":
        await advertise(ctx, receive, send, service, repository, git_environment(ctx, user))
        return
    check_request_type(ctx, service)
    started, outcome = time.perf_counter(), "error"
    try:
        if service == UPLOAD:
            succeeded = await run_service(ctx, receive, send, service, repository, git_environment(ctx, user)) == 0
        else:
            succeeded = await push(ctx, receive, send, repository, grant, user)
        if succeeded:
            outcome = "ok"
    finally:
        metrics.GIT_SECONDS.labels(service.removeprefix("git-"), outcome).observe(time.perf_counter() - started)


async def push(ctx: Ctx, receive, send, repository: Path, grant: Grant, user) -> bool:
    """A push, journaled (services/push_journal), its rules those of the project's protected
    branches now; whether git succeeded."""
    protected = await protected_branches.read_protections(ctx.rt.db, grant.project_id)
    flags = {name: {"push_access_level": row.push_access_level, "allow_force_push": row.allow_force_push}
             for name, row in protected.items()}  # fmt: skip
    rules = githooks.push_rules(grant.access.abilities, flags, admin=bool(getattr(user, "is_admin", False)))
    received, commands = await read_commands(ctx, receive)
    if received[-1]["type"] == "http.disconnect":
        return False  # the client went away before its commands had come: nothing for git to do
    receive = replaying(received, receive)
    vetted = githooks.vet(commands, rules) if commands is not None else None
    env = git_environment(ctx, user, rules, vetted)
    journal = await asyncio.to_thread(push_journal.Journal.create, ctx.rt.config, grant.project_id, user.id)
    env["CODEYARD_PUSH_JOURNAL"] = str(journal.path)
    recording = []
    try:
        after = lambda: after_push(ctx, journal, recording)  # noqa: E731
        # git inherits the journal's lock: a server that dies leaves it held until git has finished.
        code = await run_service(ctx, receive, send, RECEIVE, repository, env, finish_once_received=True, after=after,
                                 keep_fds=(journal.fd,))  # fmt: skip
    finally:
        if not recording:
            journal.release()  # git may have moved refs: recovery records them
    collect_garbage(repository, env)
    return code == 0


class Grant:
    """What the request may do, decided before git starts."""

    def __init__(self, project_id: int, access: policy.Access):
        self.project_id = project_id
        self.access = access


async def authorize(ctx: Ctx, user, service: str) -> Grant:
    """Public projects: anyone reads; internal: signed-in users; private: reporters and up. Pushing
    needs developer rights. Anonymous callers are asked for credentials (401) rather than told that a
    project is missing or private; signed-in callers get 404 for what they cannot see.

    The project and the caller's memberships come from the one loader (`services.loader`: one
    prebuilt statement, awaited on the loop)."""
    need = policy.PUSH_CODE if service == RECEIVE else policy.DOWNLOAD_CODE
    ident = loader.path_ident(ctx.path_params["namespace"], _project_path(ctx))
    found = await loader.project(ctx.rt.db.loop, ident, user, (need,), member=not isinstance(user, BuildCredential),
                                 access_of=_access, sign_in=True)  # fmt: skip
    if found.refusal is LoadRefused.UNAUTHENTICATED:
        raise GitUnauthorized()
    if found.refusal is LoadRefused.NOT_FOUND:
        raise NotFound("Project")
    # A personal access token's scopes may allow less than the user's access (`credentials.GIT_*`).
    scopes = credentials.scopes_of(user)
    scoped_out = scopes is not None and not scopes & (credentials.GIT_WRITE_SCOPES if service == RECEIVE else credentials.GIT_READ_SCOPES)
    if found.refusal is LoadRefused.FORBIDDEN or scoped_out:
        verb = "push code to" if service == RECEIVE else "download code from"
        raise Forbidden(f"You are not allowed to {verb} this project")
    grant = Grant(found.row.id, found.access)
    path = storage.repository_path(ctx.rt.config.repositories_dir, grant.project_id)
    if not (path / "HEAD").exists():
        log.error("repository of project %s is missing at %s", grant.project_id, path)
        raise RepositoryUnavailable()
    return grant


BUILD_ACCESS = policy.Access(frozenset({policy.READ_PROJECT, policy.DOWNLOAD_CODE}))


def _access(user, row) -> policy.Access:
    """The caller's access to the project of ROW (a `project_reads` row); a running build's token
    reads its own project's code and nothing else."""
    if isinstance(user, BuildCredential):
        return BUILD_ACCESS if user.project_id == row.id else policy.NO_ACCESS
    return project_reads.access(user, row)


def hooks_dir(ctx: Ctx, vetted: bool = False) -> Path:
    """The directory of codeyard's git hooks under the data dir (with the vetted push's pre-receive
    when VETTED), written on first use and again when this version's scripts differ (another
    interpreter, another launcher)."""
    directory = ctx.rt.config.data_dir / ("githooks-vetted" if vetted else "githooks")
    for hook, text in (githooks.VETTED_SCRIPTS if vetted else githooks.scripts(sys.executable)).items():
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


NO_CACHE = [(b"expires", b"Fri, 01 Jan 1980 00:00:00 GMT"), (b"pragma", b"no-cache"),
            (b"cache-control", b"no-cache, max-age=0, must-revalidate")]  # as git http-backend sends


def git_environment(ctx: Ctx, user, push_rules: str | None = None, vetted: tuple | None = None) -> dict[str, str]:
    """The environment of the git service: the caller's protocol version and, for a push
    (PUSH_RULES, see `githooks.push_rules`), codeyard's hooks with the rights decided here: the
    vetted push's (VETTED, from `githooks.vet`) when its commands were judged here, else the
    Python pre-receive that judges them itself."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    if ctx.header("git-protocol"):
        env["GIT_PROTOCOL"] = ctx.header("git-protocol")
    if push_rules is not None:
        name = user.username if user is not None else "anonymous"
        address = (ctx.scope.get("client") or ("", 0))[0] or "unknown"
        env.update(
            GIT_COMMITTER_NAME=name,  # the identity of the refs' reflog entries, as http-backend sets it
            GIT_COMMITTER_EMAIL=f"{name}@http.{address}",
            GIT_CONFIG_COUNT="2",
            GIT_CONFIG_KEY_0="core.hooksPath",
            GIT_CONFIG_VALUE_0=str(hooks_dir(ctx, vetted=vetted is not None)),
            # receive-pack's own `gc --auto` would detach from the request; the server runs it instead.
            GIT_CONFIG_KEY_1="receive.autogc",
            GIT_CONFIG_VALUE_1="false",
            CODEYARD_PUSH_RULES=push_rules,
        )
        if vetted is not None:
            env.update(CODEYARD_VETTED="\n".join(vetted[0]), CODEYARD_FAST_FORWARD="\n".join(vetted[1]))
    return env


COMMANDS_LIMIT = 16 * 1024  # bytes of a push's commands judged here; a longer list goes to the hook
PKT_LENGTH = re.compile(rb"[0-9a-fA-F]{4}")
COMMAND = re.compile(r"[0-9a-f]{40} [0-9a-f]{40} [^ \x00-\x1f\x7f]+")


async def read_commands(ctx: Ctx, receive) -> tuple[list[dict], list[str] | None]:
    """The request messages read until a push's command list has arrived (to be replayed to git),
    and its `<old> <new> <ref>` lines: None when the list is longer than COMMANDS_LIMIT, does not
    inflate, or holds anything but plain updates (shallow lines, a push certificate), all of which
    the Python hook judges."""
    received, body, inflate = [], b"", request_body(ctx)
    while True:  # push_commands answers once the body is past the limit
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            return received, None
        try:
            for piece in inflate(message.get("body", b"")):
                body += piece
                if len(body) > COMMANDS_LIMIT + 4:
                    break  # a bounded piece of an inflating body: never more than the limit and a chunk
        except zlib.error:
            return received, None
        commands = push_commands(body)
        if commands is not None or not message.get("more_body"):
            return received, commands or None


def push_commands(body: bytes) -> list[str] | None:
    """The update lines of a receive-pack request's first pkt-line section, up to its flush; None
    while the flush has not arrived, and [] when the section is not only plain updates or is longer
    than COMMANDS_LIMIT (each line goes into the hook's environment)."""
    lines, at = [], 0
    while len(body) >= at + 4:
        if not PKT_LENGTH.fullmatch(body[at : at + 4]):
            return []
        size = int(body[at : at + 4], 16)
        if size == 0:
            return lines
        if size < 4 or at + size > COMMANDS_LIMIT:
            return []
        if len(body) < at + size:
            return None
        line = body[at + 4 : at + size].split(b"\0", 1)[0].removesuffix(b"\n").decode("latin-1")
        if not COMMAND.fullmatch(line):
            return []
        lines.append(line)
        at += size
    return None


def replaying(messages: list[dict], receive):
    """A `receive` that gives MESSAGES again first, then what RECEIVE gives."""
    pending = list(messages)

    async def replay() -> dict:
        return pending.pop(0) if pending else await receive()

    return replay


def protocol_v2(ctx: Ctx) -> bool:
    return "version=2" in (ctx.header("git-protocol") or "").split(":")


def advertisement(ctx: Ctx, service: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The head and first bytes of an info/refs answer; under protocol v2 git sends no service line."""
    head = [(b"content-type", f"application/x-{service}-advertisement".encode()), *NO_CACHE]
    if protocol_v2(ctx):
        return head, b""
    line = f"# service={service}\n".encode()
    return head, b"%04x%s0000" % (len(line) + 4, line)


V2_CAPABILITIES: dict[bytes, bytes] = {}  # a repository's config file -> git's protocol v2 capabilities
V2_CAPABILITIES_KEPT = 64


async def advertise(ctx: Ctx, receive, send, service: str, repository: Path, env: dict[str, str]) -> None:
    """info/refs. Under protocol v2 upload-pack's answer is its capability list, which names no ref:
    it depends on git and its configuration only, so it is kept by the text of the repository's
    config file and a fetch starts git once less (the installation's own git configuration is
    read by the first fetch of each server process)."""
    if service != UPLOAD or not protocol_v2(ctx):
        await run_service(ctx, receive, send, service, repository, env, advertise=True)
        return
    try:
        key = (repository / "config").read_bytes()
    except OSError:
        key = None
    capabilities = V2_CAPABILITIES.get(key) if key is not None else None
    if capabilities is None:
        capabilities = await _capabilities_of(repository, env)
        if capabilities is None:  # git failed: answer as git does
            await run_service(ctx, receive, send, service, repository, env, advertise=True)
            return
        if key is not None:
            if len(V2_CAPABILITIES) >= V2_CAPABILITIES_KEPT:
                V2_CAPABILITIES.clear()
            V2_CAPABILITIES[key] = capabilities
    head, _ = advertisement(ctx, service)
    await send({"type": "http.response.start", "status": 200, "headers": [*head, NOSNIFF]})
    await send({"type": "http.response.body", "body": capabilities})


async def _capabilities_of(repository: Path, env: dict[str, str]) -> bytes | None:
    process = await asyncio.create_subprocess_exec(
        "git", "upload-pack", "--stateless-rpc", "--advertise-refs", str(repository), env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    output, _ = await process.communicate()
    return output if process.returncode == 0 and output.startswith(b"000eversion 2\n") and output.endswith(b"0000") else None


def check_request_type(ctx: Ctx, service: str) -> None:
    expected = f"application/x-{service}-request"
    if (ctx.header("content-type") or "") != expected:
        raise UnsupportedMediaType(f"Expected POST with Content-Type '{expected}', but received '{ctx.header('content-type') or ''}' instead.")


async def run_service(ctx: Ctx, receive, send, service: str, repository: Path, env: dict[str, str],
                      advertise: bool = False, finish_once_received: bool = False, after=None,
                      keep_fds: tuple[int, ...] = ()) -> int:
    """Run `git upload-pack` or `git receive-pack` in stateless-RPC mode (the smart-HTTP framing is
    the head and service line above); stream the request body in and git's answer out; its exit code.

    A client that goes away while sending stops git. With FINISH_ONCE_RECEIVED (pushes), git is let
    finish once the whole request has arrived: the refs may already be changing.
    """
    if advertise:
        head, prelude = advertisement(ctx, service)
    else:
        head, prelude = [(b"content-type", f"application/x-{service}-result".encode()), *NO_CACHE], b""
    options = ["--stateless-rpc", "--advertise-refs"] if advertise else ["--stateless-rpc"]
    process = await asyncio.create_subprocess_exec(
        "git", service.removeprefix("git-"), *options, str(repository), env=env, start_new_session=True, pass_fds=keep_fds,
        stdin=asyncio.subprocess.DEVNULL if advertise else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    feeder = None if advertise else asyncio.create_task(_feed(receive, process, request_body(ctx), finish_once_received))
    errors = asyncio.create_task(_tail(process.stderr))
    try:
        await send({"type": "http.response.start", "status": 200, "headers": [*head, NOSNIFF]})
        ctx.scope["codeyard.response_started"] = True
        if prelude:
            await send({"type": "http.response.body", "body": prelude, "more_body": True})
        while chunk := await process.stdout.read(CHUNK):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        code = await process.wait()
        if code != 0:
            log.warning("git %s exited with %s: %s", service, code, (await errors).decode(errors="replace"))
        if after is not None:
            await after()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return code
    finally:
        if feeder is not None:
            feeder.cancel()
        errors.cancel()
        if process.returncode is None:
            _signal(process, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 2)
            except TimeoutError:
                _signal(process, signal.SIGKILL)
                await process.wait()


GZIP = ("gzip", "x-gzip")


def request_body(ctx: Ctx):
    """A function from each received chunk to the bytes git reads: gzip bodies (git sends them for
    big negotiations) are inflated a bounded piece at a time, others pass through."""
    if (ctx.header("content-encoding") or "").strip().lower() not in GZIP:
        return lambda chunk: [chunk] if chunk else []
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def inflate(chunk: bytes):
        while chunk:
            yield inflater.decompress(chunk, CHUNK)
            chunk = inflater.unconsumed_tail

    return inflate


async def _tail(stream, keep: int = 4096) -> bytes:
    """Read STREAM to its end (so git never blocks on a full pipe), keeping the last KEEP bytes."""
    kept = b""
    while chunk := await stream.read(CHUNK):
        kept = (kept + chunk)[-keep:]
    return kept


async def _feed(receive, process, body, finish_once_received: bool) -> None:
    """Copy the request body (through BODY, see `request_body`) to git's stdin; stop git when the
    client goes away early or sends a body that does not inflate."""
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            for piece in body(message.get("body", b"")):
                process.stdin.write(piece)
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
    except zlib.error:
        log.info("a git request body that does not inflate; git is stopped")
    if process.returncode is None:
        _signal(process, signal.SIGTERM)


def _signal(process, number: int) -> None:
    """Signal git and what it started (pack-objects, index-pack, hooks): its process group. SIGTERM first lets git remove a half-received push's quarantine directory."""
    try:
        os.killpg(process.pid, number)
    except ProcessLookupError:
        pass


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
    """`git gc --auto` after a push, as a subprocess the server owns (not one detached by git),
    when git's estimate could find work (`storage.may_need_gc`)."""
    if not storage.may_need_gc(repository):
        return

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
