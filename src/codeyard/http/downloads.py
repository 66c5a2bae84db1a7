"""Files answered as downloads: a build's artifacts, for the runners' API, the builds API and the
build page alike."""

from __future__ import annotations

from starlette.responses import FileResponse

from ..db.models import Build
from ..services.ci import artifacts
from .context import Ctx

DOWNLOAD_HEADERS = {"content-transfer-encoding": "binary", "x-content-type-options": "nosniff"}


def artifacts_response(ctx: Ctx, build: Build) -> FileResponse:
    path, status = artifacts.locate(ctx.rt, build)
    return FileResponse(
        path, media_type="application/octet-stream", headers=DOWNLOAD_HEADERS, filename=build.artifacts_file,
        stat_result=status, content_disposition_type="attachment",
    )  # fmt: skip
