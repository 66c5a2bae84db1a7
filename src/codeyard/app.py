"""The ASGI application: route matching, the request pipeline of the JSON API, error mapping.

Pipeline of an API route (GitLab's order of checks):
  read body -> authenticate (401) -> admin check (403) -> guards, e.g. load the project (404/403)
  -> validate declared params (400) -> handler -> commit -> JSON.

Handlers are plain functions run on the event loop: their database work is a few indexed queries,
and a thread hop would cost more than the queries (docs/MEASUREMENTS.md, the requests floor). Work
that can take long (password hashing, git) goes to threads or subprocesses from async handlers.
"""

from __future__ import annotations

import gc
import inspect
import logging
from time import perf_counter

from sqlalchemy.exc import IntegrityError
from starlette.responses import Response

from . import config as config_module
from . import datadir, metrics, routes
from .errors import CodeyardError, Conflict, Forbidden, MissingParam, Unauthorized
from .http import auth, server
from .http.bodies import read_body
from .http.context import Ctx
from .http.params import validate
from .http.replies import encode_result, json_body, send_json
from .http.routing import MAX_TARGET, Router
from .runtime import Runtime
from .web import core as web

log = logging.getLogger("codeyard")


class CodeyardApp:
    def __init__(self, runtime: Runtime, router: Router, owns_runtime: bool = True):
        self.rt = runtime
        self.router = router
        self.owns_runtime = owns_runtime
        self.access_log = runtime.config.access_log not in ("", "0")
        metrics.requests.start()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.owns_runtime:
                    self.rt.db.start_checkpointer()
                    server.watch_children_by_pidfd()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                metrics.requests.flush()
                if self.owns_runtime:
                    self.rt.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope, receive, send):
        """Answer, then count the request by its route's template (metrics.py) and log it when asked."""
        started = perf_counter()
        status = 0

        async def answer(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        failed = True
        try:
            await self._answer(scope, receive, answer)
            failed = False
        finally:
            # No answer began: the server's own 500 after an error, else the client left first (499).
            status = status or (500 if failed else 499)
            ctx = scope.get("codeyard.ctx")
            route = ctx.route.template if ctx is not None else metrics.UNMATCHED
            seconds = perf_counter() - started
            metrics.record_request(route, scope["method"], status, seconds)
            if self.access_log:
                log_access(scope["method"], route, status, seconds, ctx)

    async def _answer(self, scope, receive, send):
        method = scope["method"]
        raw = scope.get("raw_path")
        path = raw.decode("latin-1").split("?", 1)[0] if raw else scope["path"]
        head = method == "HEAD"
        if len(raw or scope["path"]) + len(scope.get("query_string", b"")) > MAX_TARGET:
            # Before routing and authentication: a long target must cost nothing more.
            await send_json(send, 414, json_body({"message": "414 Request-URI Too Large"}), head=head)
            return
        match = self.router.match(method, path)
        if match is not None and match.route is not None and match.route.kind == "page" and path.startswith("/api/"):
            match = None  # under /api a miss stays a JSON 404, whatever page path it resembles
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
        ctx = scope["codeyard.ctx"] = Ctx(self.rt, scope, match.route, match.params)
        try:
            if match.route.kind == "raw":
                await self._raw(ctx, receive, send)
            elif match.route.kind == "page":
                await web.handle(ctx, receive, send)
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
            if ctx.actor is None and (route.auth == "required" or auth.refuses_a_bad_credential(ctx)):
                raise Unauthorized()
        if route.admin and not ctx.by_admin:
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


def log_access(method: str, route: str, status: int, seconds: float, ctx: Ctx | None) -> None:
    """One line on `codeyard.access`: what was asked (the route's template, never the path or query,
    which can carry tokens), the answer, its time and the caller's user id (or -)."""
    actor = ctx.actor if ctx is not None else None
    user = getattr(actor, "id", None) or "-"
    metrics.access_log.info("%s %s %d %.2fms user=%s", metrics.method_label(method), route, status, seconds * 1000, user)


def error_response(ctx: Ctx, error: Exception) -> tuple[int, bytes, list[tuple[str, str]]]:
    if isinstance(error, MissingParam) and ctx.api_route is not None and ctx.api_route[0] == "v4":
        # v4 names a missing parameter as Grape's `requires` does; v3 as GitLab 8's helpers did.
        return error.status, json_body({"error": f"{error.name} is missing"}), []
    if isinstance(error, CodeyardError):
        return error.status, json_body(error.body()), list(error.headers.items())
    if isinstance(error, IntegrityError):
        # A uniqueness race lost to a concurrent request: the services check first, the database decides.
        log.info("integrity error on %s %s: %s", ctx.method, ctx.raw_path, error.orig)
        return Conflict.status, json_body({"message": Conflict.default_message}), []
    log.exception("unhandled error on %s %s", ctx.method, ctx.raw_path)
    return 500, json_body({"message": "500 Internal Server Error"}), []


# --- assembly ---------------------------------------------------------------------------------


def build_router() -> Router:
    return Router(routes.every_route())


def create_app(config: config_module.Config | None = None) -> CodeyardApp:
    """The application for CONFIG (default: from the environment), as uvicorn's factory calls it."""
    config = config or config_module.load()
    datadir.restrict_umask()
    logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    metrics.start_access_log(config.access_log)
    app = CodeyardApp(Runtime(config), build_router())
    # What start-up built (models, routes, compiled statements) lives as long as the process: kept
    # out of the collector's generations, a full collection no longer walks it (a long pause every few
    # thousand requests: docs/MEASUREMENTS.md, the requests floor).
    gc.collect()
    gc.freeze()
    return app

