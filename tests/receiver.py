"""A webhook receiver for tests: an HTTP server on loopback recording every request it gets."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    at: float  # time.time() on arrival

    @property
    def json(self):
        return orjson.loads(self.body)

    @property
    def delivery(self) -> str | None:
        return self.headers.get("x-codeyard-delivery")


class Receiver:
    """Answers the statuses of STATUSES in turn, then 200; DELAY seconds before each answer.
    `processed` keeps the first request of each delivery id (what a deduping receiver acts on)."""

    def __init__(self, statuses: tuple[int, ...] = (), delay: float = 0.0):
        self.statuses = list(statuses)
        self.delay = delay
        self.requests: list[Received] = []
        self.processed: list[Received] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                got = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time())
                with receiver.arrived:
                    receiver.requests.append(got)
                    if got.delivery not in {r.delivery for r in receiver.processed}:
                        receiver.processed.append(got)
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.in_flight += 1
                    receiver.max_in_flight = max(receiver.max_in_flight, receiver.in_flight)
                    receiver.arrived.notify_all()
                if receiver.delay:
                    time.sleep(receiver.delay)
                with receiver.lock:
                    receiver.in_flight -= 1
                answer = b'{"ok": true}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str = "/hook", host: str = "127.0.0.1", credentials: str | None = None) -> str:
        auth = f"{credentials}@" if credentials else ""
        return f"http://{auth}{host}:{self.port}{path}"

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        """Wait until COUNT requests arrived; all of them."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.requests) >= count, timeout)
            return list(self.requests)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
