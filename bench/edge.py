"""HTTP edge benchmark: what hostile requests cost a running `codeyard serve` (issue 10).

Starts codeyard on a fresh data directory, as shipped (one process per core) and then with one
process, and sends to each, over raw sockets: a 64 KB request path, 10 MB JSON bodies (one string;
3.3 million values), a 10 MB form of empty fields, and a health check while 600 connections hold
half-sent request heads. Prints each answer's status and time, the peak memory (VmHWM) of the
server's largest process after each, side by side, and which projects the requests created.

    .venv/bin/python bench/edge.py [--half-open 600] [--nofile N] [--servers both|shipped|one]

--nofile runs the server with that many file descriptors (e.g. 1024, a common default), to see
health under a crowd larger than the server can accept.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from common import add_shape_option, chosen_shapes, codeyard_env, codeyard_server

TOKEN = "edge-bench-token-0123456789"


def request(port: int, head: bytes, body: bytes = b"") -> tuple[int, float]:
    """Send one request and read its answer: (status, seconds)."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(head + body)
        data = b""
        with contextlib.suppress(OSError):
            while b"\r\n" not in data and (chunk := sock.recv(65536)):
                data += chunk
    elapsed = time.perf_counter() - started
    return (int(data.split()[1]) if data else 0), elapsed


def post(port: int, path: str, content_type: str, body: bytes) -> tuple[int, float]:
    head = (f"POST {path} HTTP/1.1\r\nHost: bench\r\nPRIVATE-TOKEN: {TOKEN}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()  # fmt: skip
    return request(port, head, body)


def project_names(base: str) -> list[str]:
    http_request = urllib.request.Request(base + "/api/v3/projects/all", headers={"PRIVATE-TOKEN": TOKEN})
    with urllib.request.urlopen(http_request, timeout=10) as response:
        return [project["name"] for project in json.load(response)]


def measure(server, half_open: int) -> list[tuple[str, int, float, float]]:
    """(request, status, seconds, peak MB of the server's largest process after it) of each hostile request."""
    port = server.port
    rows = [("after start", 0, 0.0, server.memory_mb("VmHWM:"))]

    def row(name: str, answer: tuple[int, float]) -> None:
        rows.append((name, *answer, server.memory_mb("VmHWM:")))

    path = "/api/v3/projects/1/repository/branches/" + "a/" * 32_700
    row("GET 64 KB path", request(port, f"GET {path} HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n".encode()))
    body = json.dumps({"name": "edge-json", "padding": "d" * (10_000_000 - 50)}).encode()
    row("POST 10 MB JSON, one string", post(port, "/api/v3/projects", "application/json", body))
    body = json.dumps({"name": "edge-values", "padding": [0] * 3_300_000}).encode()
    row("POST 10 MB JSON, 3.3 million values", post(port, "/api/v3/projects", "application/json", body))
    form = b"name=edge-form&" + b"&" * (10_000_000 - 15)
    row("POST 10 MB form of empty fields", post(port, "/api/v3/projects", "application/x-www-form-urlencoded", form))
    held = []
    try:
        for _ in range(half_open):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"GET /-/health HTTP/1.1\r\nHost: b\r\n")
            held.append(sock)
        time.sleep(0.5)
        health = request(port, b"GET /-/health HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
        row(f"GET /-/health, {half_open} half-sent heads held", health)
    finally:
        for sock in held:
            sock.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--half-open", type=int, default=600)
    parser.add_argument("--nofile", type=int, default=None)
    add_shape_option(parser)
    args = parser.parse_args()
    shapes = chosen_shapes(args)

    def limit_files() -> None:
        if args.nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, args.nofile))

    results, created = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        env, _port = codeyard_env(Path(tmp))
        env["CODEYARD_ROOT_TOKEN"] = TOKEN
        for shape in shapes:
            with codeyard_server(env, shape, preexec_fn=limit_files, stderr=subprocess.DEVNULL) as server:
                results[shape] = measure(server, args.half_open)
                created[shape] = project_names(server.base)
    print(f"{'':44s}" + "".join(f" {shape + ': status':>20s} {'seconds':>8s} {'peak MB':>8s}" for shape in shapes))
    for index, (name, *_) in enumerate(results[shapes[0]]):
        cells = "".join(f" {status:20d} {seconds:8.3f} {peak:8.0f}" for _, status, seconds, peak in (results[s][index] for s in shapes))
        print(f"{name:44s}{cells}")
    print("(peak MB: VmHWM of the server's largest process, job worker included)")
    for shape in shapes:
        print(f"projects created ({shape}): {created[shape]}")


if __name__ == "__main__":
    main()
