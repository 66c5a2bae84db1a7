"""Builds: the project's list (paginated, by state), one build with its trace, and cancel/retry.
Reading needs `read_build`, acting `update_build`, as in the API (api/v3/builds.py); both call
services.ci.builds. A running build's page follows its trace through `.../trace?offset=N`
(static/builds.js polls it; no inline script). Artifacts download at `.../artifacts/download`
(GitLab 8's path) through the API's response, never through an /api/v3 link."""

from __future__ import annotations

import math

from starlette.responses import Response

from ..db.models.ci import ACTIVE_STATES, BUILD_STATES
from ..db.readers import now
from ..errors import NotFound
from ..http.context import Ctx
from ..http.downloads import artifacts_response
from ..policies import projects as policy
from ..services import projects as project_service
from ..services.ci import builds
from .core import Pages, redirect, shown, signed_in
from .projects import ProjectPage, load
from .repository import PER_PAGE, PROJECT, _page_number, _render

pages = Pages()

ONE = PROJECT + "/builds/:build_id"
STATES = ("all", *BUILD_STATES)
MAX_TRACE_SHOWN = 1 << 20  # the page shows the trace's last MiB; the API serves it whole


@pages.page(PROJECT + "/builds")
def list_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.READ_BUILD)
    state = ctx.query.get("scope") if ctx.query.get("scope") in STATES else "all"
    number = _page_number(ctx)
    total, found = now(builds.read_page(ctx.reader, p.project.id, [] if state == "all" else [state],
                                        (number - 1) * PER_PAGE, PER_PAGE))  # fmt: skip
    listed = [shown(row, runner=runner, user=who) for row, runner, who in found]
    return _render(ctx, "builds.html", p, "builds", builds=listed, state=state, states=STATES,
                   page=number, pages=max(1, math.ceil(total / PER_PAGE)), total=total)  # fmt: skip


def _trace(ctx: Ctx, p: ProjectPage, build) -> bytes:
    token = project_service.runners_token(ctx.rt.secret_key, p.project)
    return builds.masked_trace(ctx.rt, build, token)


def _find(ctx: Ctx, p: ProjectPage):
    return builds.find(ctx.session, p.project, ctx.path_int("build_id", NotFound))


@pages.page(ONE)
async def build_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.READ_BUILD)
    build = _find(ctx, p)
    data = await ctx.off_loop(_trace, ctx, p, build)
    shown = data[-MAX_TRACE_SHOWN:]
    _row, runner, _user = now(builds.read_one(ctx.reader, p.project.id, build.id))
    may_update = ctx.actor is not None and p.can(policy.UPDATE_BUILD)
    buttons = {"cancel": may_update and build.status in ACTIVE_STATES,
               "retry": may_update and builds.retryable(p.project, build)}  # fmt: skip
    return _render(ctx, "build.html", p, "builds", build=build, runner=runner, buttons=buttons,
                   trace=shown.decode("utf-8", "replace"), cut=len(data) - len(shown), offset=len(data),
                   following=build.status in ACTIVE_STATES and not build.generic)  # fmt: skip


@pages.page(ONE + "/artifacts/download")
def artifacts_download(ctx: Ctx) -> Response:
    """The build's artifacts archive, as the API serves it (reference 9.2), for `read_build`."""
    p = load(ctx, policy.READ_BUILD)
    return artifacts_response(ctx, _find(ctx, p))


@pages.page(ONE + "/trace")
async def trace_part(ctx: Ctx) -> Response:
    """The masked trace from byte `offset` on, as text; the build's state in `x-build-status`."""
    p = load(ctx, policy.READ_BUILD)
    build = _find(ctx, p)
    text = ctx.query.get("offset")
    offset = int(text) if isinstance(text, str) and text.isascii() and text.isdigit() and len(text) < 19 else 0
    data = await ctx.off_loop(_trace, ctx, p, build)
    part = data[offset:][:MAX_TRACE_SHOWN]
    headers = {"x-build-status": build.status, "x-trace-offset": str(min(offset, len(data)) + len(part))}
    return Response(part, media_type="text/plain; charset=utf-8", headers=headers)


def _acting(ctx: Ctx):
    p = load(ctx, policy.READ_BUILD)
    signed_in(ctx)
    return p.need(policy.UPDATE_BUILD), _find(ctx, p)


@pages.action(ONE + "/cancel")
def cancel(ctx: Ctx) -> Response:
    p, build = _acting(ctx)
    builds.cancel(ctx.session, ctx.rt, build)
    return redirect(f"{p.url}/builds/{build.id}")


@pages.action(ONE + "/retry")
def retry(ctx: Ctx) -> Response:
    p, build = _acting(ctx)
    fresh = builds.retry(ctx.session, ctx.rt, p.project, ctx.actor, build)
    return redirect(f"{p.url}/builds/{fresh.id}")
