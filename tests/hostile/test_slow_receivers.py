"""Hook receivers that answer slowly: a socket timeout bounds each read, and a receiver sending one
byte of its answer a second never reaches it. One deadline bounds a delivery's whole exchange
(connect, send, head, body): the attempt is recorded as timed out and the worker's slot is free for
the other deliveries.

The trickling receiver here gives up after TRICKLE_FOR seconds: that caps a delivery without the
deadline (it would otherwise last as long as the receiver liked)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from codeyard.jobs.worker import Worker
from codeyard.services import outbound
from codeyard.services import settings as settings_service

from ..receiver import Receiver

BOUND = 2.0  # the deadline the tests configure
WITHIN = 8.0  # what they accept: the bound and a generous margin for a busy machine
TRICKLE_FOR = 20.0


class Trickler:
    """An HTTP server on loopback that reads a request, then sends its answer's head one byte a
    second, never finishing it (or, with a HEAD, sends that at once and then its body so);
    each connection is dropped after TRICKLE_FOR seconds."""

    def __init__(self, head: bytes = b""):
        self.head = head
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.stopped = threading.Event()

    def url(self, path: str = "/slow") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        started = time.monotonic()
        slow = b"y" * 10_000 if self.head else b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 10_000
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(self.head)
                for byte in slow:
                    if self.stopped.is_set() or time.monotonic() - started > TRICKLE_FOR:
                        return
                    conn.sendall(bytes([byte]))
                    self.stopped.wait(1.0)
            except OSError:
                return

    def __enter__(self) -> Trickler:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.listener.close()


@pytest.fixture
def trickler():
    with Trickler() as running:
        yield running


@pytest.fixture
def setup(rt, api, users, projects, monkeypatch):
    monkeypatch.setattr(outbound, "TIMEOUT", BOUND)
    with rt.db.transaction() as session:
        settings_service.update(session, {"allow_local_requests_from_hooks": True})
    owner = users.create("owner")
    return api.as_(owner), projects.create(owner, name="demo")


def add_hook(client, project, url: str) -> int:
    response = client.post(f"/projects/{project.id}/hooks", json={"url": url})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_a_trickling_receiver_is_cut_off_at_the_deadline(setup, rt, trickler):
    client, project = setup
    hook = add_hook(client, project, trickler.url())
    assert client.post(f"/projects/{project.id}/hooks/{hook}/test").status_code == 201
    started = time.monotonic()
    assert Worker(rt).run_until_idle(timeout=60) == 1  # one attempt; the retry is not due yet
    held = time.monotonic() - started
    assert trickler.connections == 1
    assert held < WITHIN, f"the delivery held its slot {held:.1f} s"
    [record] = client.get(f"/projects/{project.id}/hooks/{hook}/deliveries").json()
    assert record["response_status"] is None
    assert record["error"] == f"timed out: the exchange took longer than {BOUND:g} s"
    assert BOUND * 0.9 <= record["duration"] < WITHIN


def test_trickling_receivers_do_not_stall_the_other_deliveries(setup, rt, trickler):
    """Four trickling hooks take the worker's four slots first; the fifth, normal one still
    arrives soon after the deadline frees them."""
    client, project = setup
    with Receiver() as receiver:
        slow = [add_hook(client, project, trickler.url(f"/slow{n}")) for n in range(4)]
        normal = add_hook(client, project, receiver.url())
        for hook in [*slow, normal]:  # queued in this order: the trickling ones are claimed first
            assert client.post(f"/projects/{project.id}/hooks/{hook}/test").status_code == 201
        worker = Worker(rt, concurrency=4, poll=0.2)
        started = time.monotonic()
        worker.start()
        try:
            arrived = receiver.wait_for(1, timeout=TRICKLE_FOR + 10)
            waited = time.monotonic() - started
        finally:
            worker.stop(timeout=TRICKLE_FOR + 10)
    assert arrived, "the normal delivery never arrived"
    assert trickler.connections == 4
    assert waited < WITHIN, f"the normal delivery waited {waited:.1f} s"


def test_an_answer_whose_body_trickles_counts_with_what_arrived_in_time(monkeypatch):
    """The head arrived at once: the status counts, the body is what came before the deadline."""
    monkeypatch.setattr(outbound, "TIMEOUT", BOUND)
    with Trickler(head=b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n") as slow:
        outcome = outbound.post(slow.url(), b"{}", {}, verify=True, allow_local=True)
    assert outcome.status == 200 and outcome.error is None
    assert 0 < len(outcome.body) < 10
    assert outcome.duration < WITHIN
