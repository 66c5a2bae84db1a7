"""uvicorn's httptools protocol with the bounds a server facing slow or hostile clients needs.

uvicorn bounds only the idle time between requests (keep-alive). This protocol also bounds, per
connection: the time to send a request head (CODEYARD_HEADER_TIMEOUT, then 408), the time between
two pieces of a request body (CODEYARD_BODY_TIMEOUT, then 408), and the size of a request head
(64 KiB, then 431, or 414 when the target is what is long); and per process the number of open
connections (CODEYARD_MAX_CONNECTIONS): beyond it a request is answered at once with 503 and its
connection closed, so that a crowd of trickling clients cannot make `/-/health` hang.

A request answered before its body was read (413 on the declared length, a route miss, 401 before
a push's pack, or one of the refusals here) must still reach its client: HTTP clients built on
Python's http.client send the whole body before they read, and a socket closed with data unread is
reset by the kernel, which loses the answer. Such an answer says `connection: close`; the server
then shuts its side (the client sees the end of the answer) and drops what still arrives until the
client stops or LINGER seconds or LINGER_BYTES bytes have passed, as nginx's lingering close does
(it has 30 s in all and 5 s between reads). A lingering connection is still counted in the limit.

Every TCP connection gets TCP_NODELAY here. asyncio sets it only on sockets whose `proto` is
IPPROTO_TCP, and uvicorn's multi-process supervisor (`--workers` above 1, as `codeyard serve` runs
by default) binds its socket with `proto` 0, which the accepted sockets inherit (uvicorn issue
#3149). Nagle's algorithm then holds the body of every answer on a kept connection until the
client's delayed ACK of its head: 40 ms or more per request. One setsockopt per connection, made
for IPv4 and IPv6 whatever the socket's `proto` says; Unix sockets have no Nagle and are left alone.

Each server process also has asyncio wait for its children (git) on pidfds (`watch_children_by_pidfd`).

`codeyard serve` runs uvicorn with `http="codeyard.http.server:BoundedHttpToolsProtocol"`; the
limits come from the environment the command exports, so every worker process reads the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import sys
from asyncio import TimerHandle

import httptools
import orjson
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from .. import config as config_module
from .routing import MAX_TARGET

MAX_HEAD = 64 * 1024
LINGER = 5.0  # seconds, at most, a connection answered before its body was read is drained before it closes
LINGER_BYTES = 16 * 1024 * 1024  # bytes, at most, drained then (a body ten times the API's 1 MiB still fits)
# Seconds a connection beyond the limit may take to send its head (to be told 503): a client
# sends a head in milliseconds, and a crowd of idle sockets must give back its descriptors soon.
OVER_LIMIT_HEADER_TIMEOUT = 1.0
WARN_EVERY = 10.0  # seconds between two log lines about refused connections: a crowd must not flood the log

log = logging.getLogger("codeyard.http")


@functools.cache
def limits() -> config_module.Config:
    return config_module.load()


def no_delay(transport) -> None:
    """Turn Nagle's algorithm off on TRANSPORT's socket when it is TCP (see the module's docstring)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):  # a connection already gone needs no flag
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Refused(Exception):
    """Raised from a parser callback to stop parsing; the protocol answers STATUS and closes."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    refused_since_warning = 0  # per process, like the connection count
    warned_at = float("-inf")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        settings = limits()
        self.header_timeout = settings.header_timeout
        self.body_timeout = settings.body_timeout
        self.max_connections = settings.max_connections
        self.over_limit = False
        self.reading_head = True
        self.head_bytes = 0  # bytes of a request head so far (an upper bound, to one chunk)
        self.message_completed = False
        self.head_timer: TimerHandle | None = None
        self.body_timer: TimerHandle | None = None
        self.linger_timer: TimerHandle | None = None
        self.lingered = 0  # bytes dropped while lingering
        self.linger_after_response = False

    # --- connection -----------------------------------------------------------------------------

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        no_delay(transport)
        # Counted with this one: the limit-th connection is still served.
        self.over_limit = len(self.connections) > self.max_connections
        if self.over_limit:
            self.header_timeout = min(self.header_timeout, OVER_LIMIT_HEADER_TIMEOUT)
        self.head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        self._cancel(self.linger_timer)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.linger_timer is not None:
            self.lingered += len(data)  # answered: what the client still sends is dropped, to a bound
            if self.lingered > LINGER_BYTES:
                self.transport.close()
            return
        self._unset_keepalive_if_required()
        if self.reading_head and self.head_timer is None:
            self.head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)
        self.message_completed = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as error:
            if isinstance(error.__context__, Refused):
                self.refuse(error.__context__.status, error.__context__.message)
                return
            self._invalid()
            return
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError:
            self._invalid()
            return
        if self.reading_head:
            # A chunk that ended one request holds an unknown share of the next head: not counted.
            self.head_bytes = 0 if self.message_completed else self.head_bytes + len(data)
            if self.head_bytes > MAX_HEAD:
                long_target = len(getattr(self, "url", b"")) > MAX_TARGET
                self.refuse(*((414, "414 Request-URI Too Large") if long_target else
                              (431, "431 Request Header Fields Too Large")))  # fmt: skip

    def _invalid(self) -> None:
        self.logger.info("Invalid HTTP request received.")
        self.refuse(400, "400 (Bad request) invalid HTTP request")

    # --- parser callbacks -----------------------------------------------------------------------

    def on_headers_complete(self) -> None:
        self.reading_head = False
        self.head_bytes = 0
        self._cancel(self.head_timer)
        self.head_timer = None
        if self.over_limit:
            self._warn_over_limit()
            raise Refused(503, "503 Service Unavailable: too many open connections")
        super().on_headers_complete()
        cycle = self.cycle
        # run_asgi hands the application `cycle.send`, looked up when the task first runs.
        cycle.send = functools.partial(self._send, cycle, cycle.send)
        self.body_timer = self.loop.call_later(self.body_timeout, self._body_timed_out)

    def on_body(self, body: bytes) -> None:
        self._cancel(self.body_timer)
        self.body_timer = self.loop.call_later(self.body_timeout, self._body_timed_out)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._cancel(self.body_timer)
        self.body_timer = None
        self.reading_head = True
        self.message_completed = True
        super().on_message_complete()

    async def _send(self, cycle, send, message) -> None:
        """The cycle's send, for answers given while the request body is still arriving: the head
        says `connection: close`, and once the answer is out the connection lingers (instead of
        the cycle closing it at once, or uvicorn reading the rest of the body however long)."""
        if cycle.more_body and not cycle.disconnected:
            if message["type"] == "http.response.start":
                cycle.keep_alive = False  # uvicorn writes `connection: close`
            elif not message.get("more_body", False):
                cycle.keep_alive = True  # the linger closes the connection, not the cycle
                self.linger_after_response = True
        await send(message)

    def on_response_complete(self) -> None:
        if not self.linger_after_response:
            super().on_response_complete()
            return
        self.server_state.total_requests += 1
        self._cancel_timers()
        self._linger()

    # --- timeouts and refusals ------------------------------------------------------------------

    def _warn_over_limit(self) -> None:
        cls = BoundedHttpToolsProtocol
        cls.refused_since_warning += 1
        if self.loop.time() - cls.warned_at >= WARN_EVERY:
            log.warning("more than %d open connections; requests refused with 503 since the last warning: %d",
                        self.max_connections, cls.refused_since_warning)  # fmt: skip
            cls.warned_at = self.loop.time()
            cls.refused_since_warning = 0

    def _head_timed_out(self) -> None:
        self.head_timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head waits for the response before it: the wait is the server's.
            self.head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)
            return
        self.refuse(408, "408 Request Timeout: the request head did not arrive in time")

    def _body_timed_out(self) -> None:
        self.body_timer = None
        if self.flow.read_paused:
            # The application is not reading: the wait is the server's, not the client's.
            self.body_timer = self.loop.call_later(self.body_timeout, self._body_timed_out)
            return
        self.refuse(408, "408 Request Timeout: the request body stopped arriving")

    def refuse(self, status: int, message: str) -> None:
        """Answer STATUS with a JSON error, unless a response already started, and close."""
        self._cancel_timers()
        if self.transport.is_closing() or self.linger_timer is not None:
            return
        cycle = self.cycle
        if cycle is None or not cycle.response_started:
            body = orjson.dumps({"message": message})
            head = b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % len(body)
            self.transport.write(STATUS_LINE[status] + head + body)
        if cycle is not None and not cycle.response_complete:
            # The application sees a client that went away; whatever it sends next is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
        self._linger()

    def _linger(self) -> None:
        """Close after the client stopped sending, or after LINGER seconds or LINGER_BYTES bytes.
        Closing a socket with unread data makes the kernel reset the connection, and the client
        would lose the answer."""
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.linger_timer = self.loop.call_later(LINGER, self.transport.close)

    def eof_received(self) -> None:
        if self.linger_timer is not None:
            self.transport.close()

    def _cancel_timers(self) -> None:
        self._cancel(self.head_timer)
        self._cancel(self.body_timer)
        self.head_timer = self.body_timer = None

    @staticmethod
    def _cancel(timer: TimerHandle | None) -> None:
        if timer is not None:
            timer.cancel()


def watch_children_by_pidfd() -> None:
    """Have asyncio wait for this process's children on pidfds, from the running loop.

    Python 3.11's default child watcher starts a thread per child to wait for it; on the server's
    loop that thread's start was about half the cost of starting git (3 children per push). 3.12
    and later use pidfds by themselves. The watcher is the process's and bound to this loop: only
    a server process, whose one loop runs every subprocess, calls this.
    """
    if sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # a kernel before 5.3, or a sandbox without the call
        return
    watcher = asyncio.PidfdChildWatcher()
    watcher.attach_loop(asyncio.get_running_loop())
    asyncio.set_child_watcher(watcher)
