"""Slow and greedy clients against a real server: heads and bodies that trickle are cut off with
408, oversized heads are 431/414, and beyond the connection limit requests get a quick 503."""

from __future__ import annotations

import contextlib
import socket
import time

import orjson
import pytest

from ..support import LiveServer
from .state import snapshot

MAX_CONNECTIONS = 20


@pytest.fixture(scope="module")
def edge_server(session_config, tmp_path_factory):
    """A server of its own with short timeouts and few connections, on the tests' database."""
    config = session_config.with_overrides(header_timeout=1.0, body_timeout=1.0, max_connections=MAX_CONNECTIONS)
    server = LiveServer(config, tmp_path_factory.mktemp("edge-logs"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def edge(rt, edge_server) -> LiveServer:
    edge_server.check_alive()
    return edge_server


def connect(server: LiveServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_response(sock: socket.socket) -> tuple[int, dict, bytes]:
    """Status, headers and body of one response on SOCK, read until the server closes."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def test_a_head_that_trickles_is_408(edge, rt):
    before = snapshot(rt)
    sock = connect(edge)
    started = time.monotonic()
    sock.sendall(b"GET /api/v3/projects HTTP/1.1\r\nHost: x\r\n")
    status, headers, body = read_response(sock)
    assert status == 408 and headers["connection"] == "close"
    assert orjson.loads(body)["message"].startswith("408 Request Timeout")
    assert 0.9 < time.monotonic() - started < 5
    assert snapshot(rt) == before


def test_a_connection_that_sends_nothing_is_closed(edge):
    sock = connect(edge)
    status, _, _ = read_response(sock)
    assert status == 408


def test_a_body_that_stops_is_408_and_nothing_is_created(edge, users, rt):
    alice = users.create("alice")
    before = snapshot(rt)
    sock = connect(edge)
    body = b"name=trickled&description=" + b"x" * 100
    sock.sendall(b"POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: " + alice.token.encode()
                 + b"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n" % len(body)
                 + body[:30])  # fmt: skip
    status, _, body = read_response(sock)
    assert status == 408 and b"body stopped arriving" in body
    assert snapshot(rt) == before
    # The server still answers.
    assert edge.http.get("/-/health").status_code == 200


def test_a_head_over_64_kib_is_431_and_a_long_target_414(edge):
    sock = connect(edge)
    sock.sendall(b"GET /-/health HTTP/1.1\r\nHost: x\r\n")
    for _ in range(80):
        sock.sendall(b"X-Filler: " + b"a" * 1000 + b"\r\n")
    assert read_response(sock)[0] == 431
    sock = connect(edge)
    sock.sendall(b"GET /" + b"a" * 70_000)
    assert read_response(sock)[0] == 414
    sock = connect(edge)
    sock.sendall(b"GET /api/v3/" + b"a/" * 5000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert read_response(sock)[0] == 414


def test_keep_alive_requests_with_bodies_are_not_mistaken_for_long_heads(edge, users):
    alice = users.create("alice")
    sock = connect(edge)
    body = orjson.dumps({"name": "fine", "ignored": "d" * 100_000})
    request = (b"POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: " + alice.token.encode()
               + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)  # fmt: skip
    sock.sendall(request + b"GET /-/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    assert data.startswith(b"HTTP/1.1 201") and data.count(b"HTTP/1.1 200 OK") == 1


def test_beyond_the_connection_limit_health_answers_503_at_once(edge):
    trickling = []
    try:
        for _ in range(MAX_CONNECTIONS + 5):
            sock = connect(edge)
            sock.sendall(b"GET /-/health HTTP/1.1\r\n")
            trickling.append(sock)
        time.sleep(0.2)
        started = time.monotonic()
        sock = connect(edge)
        sock.sendall(b"GET /-/health HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, body = read_response(sock)
        assert time.monotonic() - started < 0.5
        assert status == 503 and headers["connection"] == "close"
        assert orjson.loads(body)["message"].startswith("503 Service Unavailable")
    finally:
        for sock in trickling:
            sock.close()
    # Once the crowd is gone the server answers again.
    deadline = time.monotonic() + 5
    while edge.http.get("/-/health").status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_request_that_is_not_http_is_400(edge):
    sock = connect(edge)
    sock.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
    status, headers, body = read_response(sock)
    assert status == 400 and headers["content-type"] == "application/json"
    assert orjson.loads(body)["message"].startswith("400 (Bad request)")


@pytest.mark.parametrize("upgrade", [b"websocket", b"h2c"])
def test_a_protocol_upgrade_is_served_as_plain_http(edge, upgrade):
    sock = connect(edge)
    sock.sendall(b"GET /-/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: " + upgrade
                 + b"\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    status, _, body = read_response(sock)
    assert status == 200 and orjson.loads(body) == {"status": "ok"}
