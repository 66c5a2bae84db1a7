"""The runner protocol (reference 12.1-12.4): what runners call, under `/ci/api/v1/...` (the paths
gitlab-runner of GitLab 8's generation calls, `.json` suffix optional) and the same under
`/api/v3/ci/...` (the spec's `/ci/builds/register`).

Runner endpoints authenticate by the runner's token (`token`); a build's own endpoints (trace
appends, artifacts) by the build's token (`token` or the `BUILD-TOKEN` header), which exists only
while the build runs. User tokens mean nothing here.
"""

from __future__ import annotations

import re

from .. import metrics
from ..db.models import Build, is_id
from ..db.models.ci import FAILED, RUNNING, SUCCESS
from ..entities import runners as runner_entities
from ..entities.runners import Registration, RunnerJob, RunnerRecord, TempPath
from ..errors import BadRequest, CodeyardError, Forbidden, NotFound, PayloadTooLarge, RecordNotFound
from ..http.bodies import BodyStream
from ..http.context import Ctx
from ..http.downloads import artifacts_response
from ..http.params import Any_, File, Int, Str
from ..http.routing import Routes
from ..services.ci import artifacts, builds, handout, queue, runners, traces

routes = Routes()
root_routes = Routes()  # mounted at the root, outside the API

V1 = "/ci/api/v1"
TRACE_BODY = traces.MAX_SIZE + 64 * 1024  # a whole trace in a JSON or form body
CONTENT_RANGE = re.compile(r"\s*(\d{1,12})-(\d{1,12})\s*")


def runner_route(method: str, template: str, **options):
    """Declare a runner endpoint at `/ci/api/v1<TEMPLATE>` and `/api/v3/ci<TEMPLATE>`."""

    def register(handler):
        root_routes.add(method, V1 + template, handler, auth="none", tags=("runners",), **options)
        routes.add(method, "/ci" + template, handler, auth="none", tags=("runners",), **options)
        return handler

    return register


class RangeNotSatisfiable(CodeyardError):
    status = 416
    default_message = "416 Range Not Satisfiable"


# --- guards ---------------------------------------------------------------------------------------


def runner_guard(ctx: Ctx) -> None:
    """The runner the `token` names, before anything else (403, also when no token is given)."""
    ctx.runner = runners.lookup(ctx.rt.db, ctx.param("token"))
    if ctx.runner is None:
        raise Forbidden()


def build_token(ctx: Ctx):
    value = ctx.param("token")
    return value if isinstance(value, str) and value else ctx.header("build-token")


def path_build(ctx: Ctx) -> Build:
    """The build `:id` names (`5.json` names build 5, as runners of GitLab 8's time send it); 404."""
    raw = ctx.path_params["id"]
    if raw.endswith(".json"):
        ctx.path_params["id"] = raw[: -len(".json")]
    build_id = ctx.path_int("id")
    build = ctx.session.get(Build, build_id) if is_id(build_id) else None
    if build is None:
        raise RecordNotFound()
    return build


def running_build(ctx: Ctx) -> Build:
    """The build `:id` when the request carries its token (404 unknown build, 403 wrong token or a
    build that no longer runs)."""
    build = path_build(ctx)
    found = queue.running_build(ctx.session, build.id, build_token(ctx))
    if found is None:
        raise Forbidden("Build is not running or the token is invalid")
    return found


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


# --- builds ---------------------------------------------------------------------------------------


@runner_route(
    "POST", "/builds/register",
    guards=(runner_guard,),
    params=(Str("token", required=True, verbatim=True), INFO),
    summary="Hand the oldest pending build this runner may take to it (201 with the job; 404 when none)",
)  # fmt: skip
def register_build(ctx: Ctx) -> RunnerJob:
    runner, db = ctx.runner, ctx.rt.db
    runners.contact(db, runner, _info(ctx))
    found = handout.next_job(db, runner) if runner.active else None
    if found is handout.HOOKED:
        found = _claim_in_session(ctx, runner)
    metrics.RUNNER_CLAIMS.labels("none" if found is None else "build").inc()
    if found is None:
        raise NotFound()
    return _runner_job(ctx, found)


def _claim_in_session(ctx: Ctx, runner) -> handout.Job | None:
    """The claim in the request's session, so that its Build Hook is enqueued in its transaction."""
    claimed = queue.claim(ctx.session, ctx.rt.db, runner)
    if claimed is None:
        return None
    builds.started(ctx.session, ctx.rt, claimed.build)
    return handout.job_in(ctx.session, claimed.build.id, claimed.token)


def _runner_job(ctx: Ctx, job: handout.Job) -> RunnerJob:
    build, project, token = job.build, job.project, job.token
    depends = [runner_entities.dependency(b, project, token) for b in job.dependencies]
    return runner_entities.runner_job(
        build, project, token=token, base_url=ctx.base_url, before_sha=project.before_sha,
        yaml_variables=queue.variable_pairs(build.yaml_variables), depends_on=depends,
    )  # fmt: skip


@runner_route(
    "PUT", "/builds/:id",
    guards=(runner_guard,),
    params=(
        Str("token", required=True, verbatim=True),
        Str("state", max_length=32, doc="success or failed finish the build; anything else changes nothing"),
        Str("trace", verbatim=True, doc="The whole trace: replaces the stored one"),
    ),
    max_body=TRACE_BODY,
    summary="A runner reports its build: the whole trace, and success or failed (true/false: whether it applied; null without a state)",
)  # fmt: skip
def update_build(ctx: Ctx) -> bool | None:
    build = _runners_build(ctx)
    if "trace" in ctx.args:
        traces.replace(ctx.rt, build, ctx.args["trace"].encode("utf-8", "replace"))  # a lone surrogate is "?"
    state = ctx.args.get("state")
    if state in (SUCCESS, FAILED):
        return builds.finish(ctx.session, ctx.rt, build, state)
    return None


def _runners_build(ctx: Ctx) -> Build:
    """Build `:id` if it runs on this runner; 404 otherwise (with `Build-Status` when it was this
    runner's, so that a runner learns its build was canceled)."""
    build = path_build(ctx)
    if build.runner_id != ctx.runner.id:
        raise RecordNotFound()
    if build.status != RUNNING:
        error = RecordNotFound()
        error.headers = {"Build-Status": build.status}
        raise error
    return build


@root_routes.route("PATCH", V1 + "/builds/:id/trace.txt", kind="raw", auth="none", tags=("runners",),
           summary="Append to a build's trace (build token; Content-Range: <start>-<end>); 202, 416 with Range on a mismatch")  # fmt: skip
async def append_trace(ctx: Ctx, receive, send) -> None:
    await _append_trace(ctx, receive, send)


@routes.route("PATCH", "/ci/builds/:id/trace.txt", kind="raw", auth="none", tags=("runners",),
           summary="Append to a build's trace (build token; Content-Range: <start>-<end>); 202, 416 with Range on a mismatch")  # fmt: skip
async def append_trace_v3(ctx: Ctx, receive, send) -> None:
    await _append_trace(ctx, receive, send)


async def _append_trace(ctx: Ctx, receive, send) -> None:
    match = CONTENT_RANGE.fullmatch(ctx.header("content-range") or "")
    if match is None:
        raise BadRequest("400 Missing header Content-Range")
    data = await BodyStream(receive, traces.MAX_SIZE, PayloadTooLarge(traces.TOO_LARGE)).read_all()
    build = running_build(ctx)
    try:
        size = traces.append(ctx.rt, build, int(match.group(1)), data)
    except traces.RangeMismatch as mismatch:
        raise RangeNotSatisfiable(headers={"Range": f"0-{mismatch.current_size}"}) from None
    status = build.status
    ctx.commit()
    headers = [(b"build-status", status.encode()), (b"range", f"0-{size}".encode()), (b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


# --- artifacts ------------------------------------------------------------------------------------


@runner_route(
    "POST", "/builds/:id/artifacts/authorize",
    params=(Str("token", verbatim=True), Int("filesize", minimum=0, maximum=2**62, doc="Bytes the runner will upload")),
    status=200,
    summary="Whether an upload of filesize bytes would be taken (no Workhorse: TempPath is empty, the upload request carries the file)",
)  # fmt: skip
def authorize_artifacts(ctx: Ctx) -> TempPath:
    running_build(ctx)
    artifacts.check_size(ctx.session, ctx.args.get("filesize"))
    return {"TempPath": ""}


@runner_route(
    "POST", "/builds/:id/artifacts",
    params=(Str("token", verbatim=True), File("file", doc="The artifacts archive (multipart/form-data)"), Any_("metadata")),
    max_body=lambda ctx: artifacts.body_limit(ctx.rt.db),
    too_large=artifacts.too_large,
    summary="Upload the build's artifacts (replaces earlier ones; at most max_artifacts_size MB): 201 with the job",
)  # fmt: skip
def upload_artifacts(ctx: Ctx) -> RunnerJob:
    build = running_build(ctx)
    artifacts.store(ctx.session, ctx.rt, build, ctx.args.get("file"))
    return _runner_job(ctx, handout.job_in(ctx.session, build.id, build_token(ctx)))


@runner_route("GET", "/builds/:id/artifacts", params=(Str("token", verbatim=True),),
              summary="Download a build's artifacts with the token of a running build of the same pipeline")  # fmt: skip
def download_artifacts(ctx: Ctx):
    build = path_build(ctx)
    caller = queue.build_for_token(ctx.session, build_token(ctx))
    if caller is None or caller.pipeline_id != build.pipeline_id:
        raise Forbidden()
    return artifacts_response(ctx, build)


@runner_route("DELETE", "/builds/:id/artifacts", params=(Str("token", verbatim=True),),
              summary="Remove the build's artifacts (build token)")  # fmt: skip
def delete_artifacts(ctx: Ctx) -> RunnerJob:
    build = running_build(ctx)
    artifacts.remove(ctx.session, ctx.rt, build)
    return _runner_job(ctx, handout.job_in(ctx.session, build.id, build_token(ctx)))
