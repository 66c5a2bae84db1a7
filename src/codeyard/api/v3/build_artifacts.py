"""`GET /projects/:id/builds/:build_id/artifacts`: a build's artifacts, for whoever may read the
project's builds (reference 9.2: attachment, octet-stream; 404 when there are none)."""

from __future__ import annotations

from ...db.models import Build, is_id
from ...errors import RecordNotFound
from ...http.context import Ctx
from ...http.downloads import artifacts_response
from ...http.routing import Routes
from ...policies import projects as policy
from ..guards import project_guard

routes = Routes()


@routes.get(
    "/projects/:id/builds/:build_id/artifacts",
    guards=(project_guard(policy.READ_BUILD),),
    summary="Download a build's artifacts (read_build; 404 when it has none)",
)
def download(ctx: Ctx):
    build_id = ctx.path_int("build_id")
    build = ctx.session.get(Build, build_id) if is_id(build_id) else None
    if build is None or build.project_id != ctx.project_id:
        raise RecordNotFound()
    return artifacts_response(ctx, build)
