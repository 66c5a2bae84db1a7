"""Requests refused before their body was read (413 on the declared length, 404, 401) reach real
clients as an answer, not as a reset connection, and the body left unread costs the server a
bounded linger, not its whole length: the answer says `connection: close`, the server shuts its
side and drops what still arrives for at most `LINGER` seconds and `LINGER_BYTES` bytes.

Python's http.client (urllib, requests, python-gitlab) sends the whole body before it reads the
answer: a server that closes with the body unread makes the kernel reset the connection, and the
client loses the answer it was sent.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request

import orjson
import pytest
import requests

from codeyard.http.routing import MAX_BODY
from codeyard.http.server import LINGER

from .state import snapshot

JSON = {"Content-Type": "application/json"}
TOO_LARGE = {"message": "413 Request Entity Too Large"}
SIZES = {"just over": MAX_BODY + 1, "ten times over": 10 * MAX_BODY}


def urllib_post(url: str, body: bytes, headers: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), orjson.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, orjson.loads(error.read())


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
def test_urllib_gets_413_and_its_message(live, alice, rt, size):
    before = snapshot(rt)
    status, headers, body = urllib_post(f"{live.base_url}/api/v3/projects", b"x" * size,
                                        {**JSON, "PRIVATE-TOKEN": alice.token})  # fmt: skip
    assert (status, body) == (413, TOO_LARGE)
    assert headers["connection"] == "close"
    assert snapshot(rt) == before


@pytest.mark.parametrize("keep_alive", [True, False], ids=["keep-alive", "connection close"])
@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
def test_requests_gets_413_and_its_message(live, alice, rt, size, keep_alive):
    before = snapshot(rt)
    headers = {**JSON, "PRIVATE-TOKEN": alice.token, **({} if keep_alive else {"Connection": "close"})}
    response = requests.post(f"{live.base_url}/api/v3/projects", data=b"x" * size, headers=headers, timeout=30)
    assert (response.status_code, response.json()) == (413, TOO_LARGE)
    assert response.headers["connection"] == "close"
    assert snapshot(rt) == before


def test_a_body_streamed_far_over_the_limit_is_not_read_whole(live, alice, rt):
    """100 MiB sent chunked (no declared length): 413 once the limit is crossed, and the server
    stops reading at the linger's bound (the client could not send it all)."""
    before = snapshot(rt)
    total = 100 * 1024 * 1024
    sent = 0

    def stream():
        nonlocal sent
        chunk = b"x" * 65536
        while sent < total:
            sent += len(chunk)
            yield chunk

    started = time.monotonic()
    response = requests.post(f"{live.base_url}/api/v3/projects", data=stream(),
                             headers={**JSON, "PRIVATE-TOKEN": alice.token}, timeout=60)  # fmt: skip
    assert (response.status_code, response.json()) == (413, TOO_LARGE)
    assert sent < total / 2, f"the client sent {sent} bytes: the server read them all"
    assert time.monotonic() - started < LINGER + 10
    assert snapshot(rt) == before


def test_a_route_miss_with_a_large_body_is_404_not_a_reset(live):
    status, headers, body = urllib_post(f"{live.base_url}/api/v3/no/such/thing", b"x" * (10 * MAX_BODY), JSON)
    assert (status, body) == (404, {"message": "404 Not Found"})
    assert headers["connection"] == "close"


def test_an_unauthenticated_push_is_401_not_a_reset(live, alice, projects, rt):
    """git-receive-pack asks for credentials before it reads the pack."""
    project = projects.create(alice)
    before = snapshot(rt)
    request = urllib.request.Request(f"{live.base_url}/{project.path_with_namespace}.git/git-receive-pack",
                                     data=b"0" * (10 * MAX_BODY), method="POST",
                                     headers={"Content-Type": "application/x-git-receive-pack-request"})  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 401 and refused.value.headers["connection"] == "close"
    assert refused.value.read() == b"401 Unauthorized\n"
    assert snapshot(rt) == before


def test_a_client_that_keeps_sending_after_a_413_is_cut_off(live, alice):
    """A client that declares 1 GiB and trickles it (well within the body timeout) gets its 413,
    then is cut off after the linger, whatever it keeps sending."""
    sock = socket.create_connection(("127.0.0.1", live.port), timeout=10)
    sock.sendall(b"POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"PRIVATE-TOKEN: " + alice.token.encode() + b"\r\nContent-Length: %d\r\n\r\n" % (1 << 30))  # fmt: skip
    started = time.monotonic()
    answer = b""
    cut_off = False
    sock.setblocking(False)
    while time.monotonic() - started < LINGER + 15:  # the test's own cap: before the fix, forever
        try:
            sock.send(b"x" * 1024)
        except BlockingIOError:
            pass
        except OSError:  # reset or broken pipe: the server closed
            cut_off = True
            break
        try:
            chunk = sock.recv(65536)
            answer += chunk
        except BlockingIOError:
            pass
        except OSError:
            cut_off = True
            break
        time.sleep(0.05)
    held = time.monotonic() - started
    sock.close()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert orjson.loads(answer.partition(b"\r\n\r\n")[2]) == TOO_LARGE
    assert cut_off, f"still connected after {held:.1f} s"
    assert held < LINGER + 10
    assert b"connection: close\r\n" in answer.lower()
