"""Raw file bytes as both API versions answer them."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from ...http.context import Ctx
from ...services import repository


def file_chunks(handle):
    """The open file's bytes, then it is closed (Starlette reads a plain iterator in a worker thread)."""
    with handle:
        while chunk := handle.read(64 * 1024):
            yield chunk
RAW_HEADERS = {"x-content-type-options": "nosniff"}
RAW_TYPE = "text/plain; charset=utf-8"


async def raw(ctx: Ctx, found) -> Response:
    """The blob's bytes: read whole when small, streamed from git when big."""
    if found.streamed:
        headers = {**RAW_HEADERS, "content-length": str(found.size)}
        return StreamingResponse(repository.blob_chunks(found), media_type=RAW_TYPE, headers=headers)
    data = await run_in_threadpool(repository.blob_content, ctx.rt, ctx.project_row, found)
    return Response(data, media_type=RAW_TYPE, headers=RAW_HEADERS)
