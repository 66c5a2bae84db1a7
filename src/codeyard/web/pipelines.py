"""Pipelines: the builds of one pipeline (`/pipelines/:id`) or of every pipeline of one commit
(`/commit/:sha/builds`, GitLab 8.6's commit builds page), grouped by stage with their statuses.
Reading needs `read_build`, as the build pages and the API; two queries whatever the build count."""

from __future__ import annotations

import re

from starlette.responses import Response

from ..errors import NotFound
from ..http.context import Ctx
from ..policies import projects as policy
from ..services.ci import pipelines
from .core import Pages
from .projects import load
from .repository import PROJECT, _render

pages = Pages()

FULL_SHA = re.compile(r"[0-9a-f]{40}")
MAX_PIPELINES = 20  # of one commit: one per ref it was pushed to, rarely more than a few


@pages.page(PROJECT + "/pipelines/:pipeline_id")
def pipeline_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.READ_BUILD)
    found = [pipelines.find(ctx.session, p.info.id, ctx.path_int("pipeline_id", NotFound))]
    return _render(ctx, "pipelines.html", p, "builds", pipelines=found, sha=found[0].sha,
                   stages=pipelines.stages_of(ctx.session, found))  # fmt: skip


@pages.page(PROJECT + "/commit/:sha/builds")
def commit_builds_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.READ_BUILD)
    sha = ctx.path_params["sha"]
    if not FULL_SHA.fullmatch(sha):
        raise NotFound()
    found = pipelines.of_commit(ctx.session, p.info.id, sha, MAX_PIPELINES)
    return _render(ctx, "pipelines.html", p, "builds", pipelines=found, sha=sha,
                   stages=pipelines.stages_of(ctx.session, found))  # fmt: skip
