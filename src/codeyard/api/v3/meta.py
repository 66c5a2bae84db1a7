"""About the service itself: the OpenAPI document and a health check."""

from __future__ import annotations

from sqlalchemy import text

from ..context import Ctx
from ..openapi import document
from ..registry import API, WEB, all_routes


@API.get("/openapi.json", auth="none", summary="This API's OpenAPI document")
def openapi(ctx: Ctx) -> dict:
    return document(all_routes(), ctx.base_url)


@WEB.get("/-/health", auth="none", summary="Health check: the database answers")
def health(ctx: Ctx) -> dict[str, str]:
    ctx.session.execute(text("SELECT 1"))
    return {"status": "ok"}
