"""What handlers may return besides plain JSON data, and how any result becomes ASGI messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import orjson

from .context import Ctx
from .paging import Page

JSON_TYPE = (b"content-type", b"application/json")


Body = TypeVar("Body")


@dataclass
class Reply(Generic[Body]):
    """JSON data with an explicit status or extra headers (`Reply[Entity]` in an annotation)."""

    body: Body
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


def json_body(data: Any) -> bytes:
    return orjson.dumps(data)


def encoded(data: Any) -> orjson.Fragment:
    """DATA as JSON now, placed as it is in the body it becomes part of (work done ahead, e.g. in the
    thread that reads git, instead of after it)."""
    return orjson.Fragment(orjson.dumps(data))


BODILESS = (204, 304)


async def send_json(send, status: int, body: bytes, headers: list[tuple[str, str]] = (), head: bool = False) -> None:
    if status in BODILESS:
        body, head, raw_headers = b"", True, []
    else:
        raw_headers = [JSON_TYPE, (b"content-length", str(len(body)).encode())]
    raw_headers.extend((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers)
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


def encode_result(ctx: Ctx, result: Any) -> tuple[int, bytes, list[tuple[str, str]]]:
    status = ctx.route.success_status
    headers: list[tuple[str, str]] = []
    if isinstance(result, Reply):
        status = result.status or status
        headers.extend(result.headers.items())
        result = result.body
    if isinstance(result, Page):
        headers.extend(result.headers(ctx))
        result = result.items
    return status, json_body(result), headers
