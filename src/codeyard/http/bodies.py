"""Request bodies of the JSON API: read incrementally up to a bound, parsed into bounded shapes.

A body costs at most its route's `max_body` bytes to read (the declared Content-Length is checked
before any byte is read) and a bounded number of values to parse, so a hostile body is refused in
about the time it takes to arrive, before authentication and long before a handler runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

import orjson
from starlette.formparsers import MultiPartException
from starlette.requests import Request

from ..errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from .params import parse_pairs

if TYPE_CHECKING:
    from .context import Ctx

MAX_FIELDS = 1000
MAX_FILES = 10
MAX_JSON_DEPTH = 100
MAX_JSON_VALUES = 10_000


def bad(reason: str) -> BadRequest:
    return BadRequest(f"400 (Bad request) {reason}")


async def read_body(ctx: Ctx, receive) -> None:
    """Parse a JSON, form or multipart body into `ctx.body`."""
    route = ctx.route
    declared = ctx.header("content-length")
    if declared in (None, "0") and "transfer-encoding" not in ctx.headers:
        return
    limit = route.max_body(ctx) if callable(route.max_body) else route.max_body
    too_large = route.too_large(limit) if route.too_large else PayloadTooLarge()
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    mime = (ctx.header("content-type") or "").split(";", 1)[0].strip().lower()
    stream = BodyStream(receive, limit, too_large)
    if mime == "multipart/form-data":
        ctx.body = await _multipart(ctx, stream)
        return
    body = await stream.read_all()
    if not body.strip():
        return
    if mime == "application/x-www-form-urlencoded":
        ctx.body = _urlencoded(body)
    elif mime in ("", "application/json") or mime.endswith("+json"):
        ctx.body = _json(body)
    elif not mime.startswith("text/"):
        raise UnsupportedMediaType(f"415 Unsupported Media Type: {mime}")


class BodyStream:
    """An ASGI `receive` that stops at LIMIT bytes and turns a client gone mid-body into a 400."""

    def __init__(self, receive, limit: int, too_large: Exception):
        self.receive = receive
        self.limit = limit
        self.too_large = too_large
        self.received = 0
        self.tail = b""  # the last bytes seen, to find a multipart close delimiter across chunks
        self.delimiter: bytes | None = None
        self.closed = False

    async def __call__(self) -> dict:
        message = await self.receive()
        if message["type"] == "http.disconnect":
            raise bad("the body ended before its end")
        chunk = message.get("body", b"")
        self.received += len(chunk)
        if self.received > self.limit:
            raise self.too_large
        if self.delimiter is not None and not self.closed:
            window = self.tail + chunk
            self.closed = self.delimiter in window
            self.tail = window[-len(self.delimiter):]
        return message

    async def read_all(self) -> bytes:
        chunks = []
        while True:
            message = await self()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                return b"".join(chunks)


def _urlencoded(body: bytes) -> dict:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("the form body is not UTF-8") from None
    try:
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:
        raise bad(f"a form may have at most {MAX_FIELDS} fields") from None
    return parse_pairs(pairs)


def _json(body: bytes) -> dict:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise bad("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise bad("the JSON body must be an object")
    check_json_shape(data)
    return data


def check_json_shape(data) -> None:
    """At most MAX_JSON_DEPTH levels and MAX_JSON_VALUES values, walked without recursion."""
    pending = [(data, 1)]
    values = 0
    while pending:
        value, depth = pending.pop()
        values += 1
        if values > MAX_JSON_VALUES:
            raise bad(f"the JSON body may hold at most {MAX_JSON_VALUES} values")
        if depth > MAX_JSON_DEPTH:
            raise bad(f"the JSON body may nest at most {MAX_JSON_DEPTH} levels")
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        pending.extend((child, depth + 1) for child in children)


async def _multipart(ctx: Ctx, stream: BodyStream) -> dict:
    boundary = _boundary(ctx.header("content-type") or "")
    stream.delimiter = b"--" + boundary.encode("latin-1") + b"--"
    try:
        form = await Request(ctx.scope, stream).form(max_files=MAX_FILES, max_fields=MAX_FIELDS, max_part_size=stream.limit)
    except MultiPartException as error:  # a client gone mid-body is BodyStream's 400
        raise bad(str(error)) from None
    ctx.on_close(form.close)
    if not stream.closed:
        # python-multipart takes a body cut short as complete: its last part would be silently lost.
        raise bad("the multipart body ends before its closing boundary")
    return parse_pairs(form.multi_items())


def _boundary(content_type: str) -> str:
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.strip().partition("=")
        if name.strip().lower() == "boundary" and value.strip().strip('"'):
            return value.strip().strip('"')
    raise bad("the multipart body has no boundary")
