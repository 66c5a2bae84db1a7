"""The ASGI application: route matching, the request pipeline of the JSON API, error mapping.

Pipeline of an API route (GitLab's order of checks):
  read body -> authenticate (401) -> admin check (403) -> guards, e.g. load the project (404/403)
  -> validate declared params (400) -> handler -> commit -> JSON.

Handlers are plain functions run on the event loop: their database work is a few indexed queries,
and a thread hop would cost more than the queries (docs/ARCHITECTURE.md has the figures). Work
that can take long (password hashing, git) goes to threads or subprocesses from async handlers.
"""

from __future__ import annotations

import inspect
import logging
from urllib.parse import parse_qsl

import orjson
from sqlalchemy.exc import IntegrityError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from . import config as config_module
from .api import auth
from .api.context import Ctx
from .api.params import parse_pairs, validate
from .api.replies import encode_result, json_body, send_json
from .api.routing import Router
from .errors import (
    BadRequest,
    CodeyardError,
    Conflict,
    Forbidden,
    PayloadTooLarge,
    Unauthorized,
    UnsupportedMediaType,
)
from .runtime import Runtime

log = logging.getLogger("codeyard")


class CodeyardApp:
    def __init__(self, runtime: Runtime, router: Router, owns_runtime: bool = True):
        self.rt = runtime
        self.router = router
        self.owns_runtime = owns_runtime

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.owns_runtime:
                    self.rt.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope, receive, send):
        method = scope["method"]
        raw = scope.get("raw_path")
        path = raw.decode("latin-1").split("?", 1)[0] if raw else scope["path"]
        head = method == "HEAD"
        match = self.router.match(method, path)
        if match is None:
            await send_json(send, 404, json_body({"message": "404 Not Found"}), head=head)
            return
        if match.route is None:
            allow = [("allow", ", ".join(match.allowed))]
            if method == "OPTIONS":
                await send({"type": "http.response.start", "status": 204, "headers": [(b"allow", allow[0][1].encode())]})
                await send({"type": "http.response.body", "body": b""})
                return
            await send_json(send, 405, json_body({"message": "405 Method Not Allowed"}), allow, head=head)
            return
        ctx = Ctx(self.rt, scope, match.route, match.params)
        try:
            if match.route.kind == "raw":
                await self._raw(ctx, receive, send)
            else:
                await self._api(ctx, receive, send, head)
        finally:
            await ctx.close()

    async def _api(self, ctx: Ctx, receive, send, head: bool) -> None:
        route = ctx.route
        try:
            await read_body(ctx, receive)
            await self._prepare(ctx)
            ctx.args = validate(route.params, ctx.raw_params())
            result = route.handler(ctx)
            if inspect.isawaitable(result):
                result = await result
            if isinstance(result, Response):
                ctx.commit()
                await result(ctx.scope, receive, send)
                return
            ctx.commit()
            status, body, headers = encode_result(ctx, result)
        except Exception as error:
            ctx.rollback()
            status, body, headers = error_response(ctx, error)
        await send_json(send, status, body, headers, head=head)

    async def _prepare(self, ctx: Ctx) -> None:
        """Authentication, the admin check and the route's guards, in GitLab's order."""
        route = ctx.route
        if route.auth != "none":
            ctx.actor = auth.authenticate(ctx)
            if ctx.actor is None and route.auth == "required":
                raise Unauthorized()
        if route.admin and not (ctx.actor is not None and ctx.actor.is_admin):
            raise Forbidden() if ctx.actor is not None else Unauthorized()
        for guard in route.guards:
            outcome = guard(ctx)
            if inspect.isawaitable(outcome):
                await outcome

    async def _raw(self, ctx: Ctx, receive, send) -> None:
        """Routes that speak their own protocol (git smart HTTP, file downloads)."""
        try:
            await ctx.route.handler(ctx, receive, send)
        except Exception as error:
            ctx.rollback()
            if ctx.scope.get("codeyard.response_started"):
                log.exception("error after the response started: %s %s", ctx.method, ctx.raw_path)
                return
            status, body, headers = error_response(ctx, error)
            await send_json(send, status, body, headers, head=ctx.method == "HEAD")


def error_response(ctx: Ctx, error: Exception) -> tuple[int, bytes, list[tuple[str, str]]]:
    if isinstance(error, CodeyardError):
        return error.status, json_body({"message": error.message}), list(error.headers.items())
    if isinstance(error, IntegrityError):
        # A uniqueness race lost to a concurrent request: the services check first, the database decides.
        log.info("integrity error on %s %s: %s", ctx.method, ctx.raw_path, error.orig)
        return Conflict.status, json_body({"message": Conflict.default_message}), []
    log.exception("unhandled error on %s %s", ctx.method, ctx.raw_path)
    return 500, json_body({"message": "500 Internal Server Error"}), []


# --- request bodies ---------------------------------------------------------------------------

MAX_FORM_FIELDS = 1000
MAX_FORM_FILES = 10


async def read_body(ctx: Ctx, receive) -> None:
    """Parse a JSON, form or multipart body into `ctx.body`."""
    route = ctx.route
    declared = ctx.header("content-length")
    if declared in (None, "0") and "transfer-encoding" not in ctx.headers:
        return
    limit = route.max_body(ctx) if callable(route.max_body) else route.max_body
    if declared and declared.isdigit() and int(declared) > limit:
        raise route.too_large(limit) if route.too_large else PayloadTooLarge()
    mime = (ctx.header("content-type") or "").split(";", 1)[0].strip().lower()
    limited = _limited_receive(receive, limit, route)
    if mime == "multipart/form-data":
        try:
            form = await Request(ctx.scope, limited).form(max_files=MAX_FORM_FILES, max_fields=MAX_FORM_FIELDS)
        except HTTPException as error:
            raise BadRequest(f"400 (Bad request) {error.detail}") from None
        ctx.on_close(form.close)
        ctx.body = parse_pairs(form.multi_items())
        return
    body = await _read_all(limited)
    if not body.strip():
        return
    if mime == "application/x-www-form-urlencoded":
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("400 (Bad request) the form body is not UTF-8") from None
        ctx.body = parse_pairs(parse_qsl(text, keep_blank_values=True))
    elif mime in ("", "application/json") or mime.endswith("+json"):
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise BadRequest("400 (Bad request) the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise BadRequest("400 (Bad request) the JSON body must be an object")
        ctx.body = data
    elif not mime.startswith("text/"):
        raise UnsupportedMediaType(f"415 Unsupported Media Type: {mime}")


def _limited_receive(receive, limit: int, route):
    received = 0

    async def limited():
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise route.too_large(limit) if route.too_large else PayloadTooLarge()
        return message

    return limited


async def _read_all(receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


# --- assembly ---------------------------------------------------------------------------------


def build_router() -> Router:
    from .api import registry

    return Router(registry.all_routes())


def create_app(config: config_module.Config | None = None) -> CodeyardApp:
    """The application for CONFIG (default: from the environment), as uvicorn's factory calls it."""
    config = config or config_module.load()
    logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return CodeyardApp(Runtime(config), build_router())

