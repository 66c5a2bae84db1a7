"""The bounded HTTP protocol on a fake transport: the timeouts that must not fire on the server's
own waits (a paused body, a pipelined request behind a slow response)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import textwrap

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from codeyard.http import server


class FakeTransport:
    def __init__(self):
        self.written = b""
        self.closing = False
        self.eof = False
        self.reading = True

    def get_extra_info(self, name, default=None):
        return default

    def write(self, data):
        self.written += data

    def is_closing(self):
        return self.closing

    def close(self):
        self.closing = True

    def can_write_eof(self):
        return True

    def write_eof(self):
        self.eof = True

    def pause_reading(self):
        self.reading = False

    def resume_reading(self):
        self.reading = True


async def app(scope, receive, send):
    await asyncio.sleep(3600)  # a slow handler: the response never starts within the test


@pytest.fixture
def protocol(monkeypatch):
    settings = server.config_module.load({"CODEYARD_HEADER_TIMEOUT": "5", "CODEYARD_BODY_TIMEOUT": "5"})
    monkeypatch.setattr(server, "limits", lambda: settings)
    loop = asyncio.new_event_loop()
    config = Config(app=app, http="httptools", log_level="warning")
    config.load()
    proto = server.BoundedHttpToolsProtocol(config, ServerState(), {}, _loop=loop)
    proto.connection_made(FakeTransport())
    yield proto
    proto.connection_lost(None)
    tasks = list(proto.tasks)
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.close()


def test_a_paused_body_is_the_servers_wait_not_a_timeout(protocol):
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
    protocol.flow.pause_reading()
    protocol._body_timed_out()
    assert protocol.body_timer is not None and protocol.transport.written == b""
    protocol.flow.resume_reading()
    protocol._body_timed_out()
    assert protocol.transport.written.startswith(b"HTTP/1.1 408 ")
    assert protocol.cycle.disconnected and protocol.transport.eof
    protocol.data_received(b"67890")  # dropped while lingering
    protocol.eof_received()
    assert protocol.transport.closing


def test_a_pipelined_head_waits_for_the_response_before_it(protocol):
    protocol.data_received(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\n")
    protocol._head_timed_out()
    assert protocol.head_timer is not None and protocol.transport.written == b""


def test_a_timeout_after_the_response_started_only_closes(protocol):
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
    protocol.cycle.response_started = True
    protocol._body_timed_out()
    assert protocol.transport.written == b"" and protocol.transport.eof


class SocketTransport(FakeTransport):
    def __init__(self, sock):
        super().__init__()
        self.sock = sock

    def get_extra_info(self, name, default=None):
        return self.sock if name == "socket" else default


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6])
def test_tcp_sockets_of_any_proto_get_no_delay(family):
    with socket.socket(family, socket.SOCK_STREAM, 0) as sock:  # proto 0, as uvicorn's supervisor binds
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        server.no_delay(SocketTransport(sock))
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_unix_sockets_and_transports_without_one_are_left_alone():
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        server.no_delay(SocketTransport(left))
    server.no_delay(FakeTransport())


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 and later wait on pidfds by themselves")
def test_a_server_process_waits_for_git_without_a_thread_per_child():
    """In a fresh interpreter (the watcher is the process's): with the pidfd watcher, a child that
    runs adds no thread; without it, asyncio's default watcher starts one."""
    program = textwrap.dedent("""
        import asyncio, sys, threading
        from codeyard.http import server

        async def threads_while_a_child_runs(watch):
            if watch:
                server.watch_children_by_pidfd()
            process = await asyncio.create_subprocess_exec("sleep", "0.3")
            count = threading.active_count()
            assert await process.wait() == 0
            return count

        print(asyncio.run(threads_while_a_child_runs(sys.argv[1] == "1")))
    """)
    counts = {watch: int(subprocess.run([sys.executable, "-c", program, watch], check=True, capture_output=True,
                                        text=True).stdout) for watch in ("0", "1")}  # fmt: skip
    assert counts == {"0": 2, "1": 1}
