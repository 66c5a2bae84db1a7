"""The runner protocol (reference 12.1-12.4): what runners call, under `/ci/api/v1/...` (the paths
gitlab-runner of GitLab 8's generation calls, `.json` suffix optional) and the same under
`/api/v3/ci/...` (the spec's `/ci/builds/register`).

Runner endpoints authenticate by the runner's token (`token`); a build's own endpoints (trace
appends, artifacts) by the build's token (`token` or the `BUILD-TOKEN` header), which exists only
while the build runs. User tokens mean nothing here.
"""

from __future__ import annotations

from ..entities import runners as runner_entities
from ..entities.runners import Registration, RunnerRecord
from ..errors import BadRequest
from ..services.ci import runners
from .context import Ctx
from .params import Any_, Str
from .registry import API, WEB

V1 = "/ci/api/v1"


def runner_route(method: str, template: str, **options):
    """Declare a runner endpoint at `/ci/api/v1<TEMPLATE>` and `/api/v3/ci<TEMPLATE>`."""

    def register(handler):
        WEB.add(method, V1 + template, handler, auth="none", tags=("runners",), **options)
        API.add(method, "/ci" + template, handler, auth="none", tags=("runners",), **options)
        return handler

    return register


# --- registration ---------------------------------------------------------------------------------


INFO = Any_("info", doc="info[name|version|revision|platform|architecture]: what the runner says of itself")


def _info(ctx: Ctx) -> dict:
    info = ctx.args.get("info")
    if not isinstance(info, dict):
        return {}
    return {key: str(value)[:255] for key, value in info.items() if key in runners.INFO_FIELDS and isinstance(value, str | int | float)}


@runner_route(
    "POST", "/runners/register",
    params=(
        Str("token", required=True, max_length=255, doc="The registration token (shared runner) or a project's runners token"),
        Str("description", max_length=255),
        Any_("tag_list", doc='Comma separated tags ("a, b") or a list'),
        INFO,
    ),
    summary="Register a runner: 201 {id, token}; 403 for an unknown registration token",
)  # fmt: skip
def register_runner(ctx: Ctx) -> Registration:
    tags = ctx.args.get("tag_list")
    if tags is not None and not isinstance(tags, str | list):
        raise BadRequest('400 (Bad request) "tag_list" is invalid')
    done = runners.register(ctx.session, ctx.rt, ctx.args["token"], ctx.args.get("description"), tags, _info(ctx))
    return runner_entities.registration(done.runner.id, done.token)


@runner_route(
    "DELETE", "/runners/delete",
    params=(Str("token", required=True, max_length=255, doc="The runner's token"),),
    summary="Remove the runner whose token is given (403 when none)",
)  # fmt: skip
def delete_runner(ctx: Ctx) -> RunnerRecord:
    return runner_entities.runner_record(runners.delete(ctx.session, ctx.args["token"]))
