"""Requests the server makes to URLs its users gave it (webhooks), made safe to make.

- Addresses a user must not reach through the server (loopback, private, link-local, multicast,
  unspecified, reserved; IPv4 and IPv6, IPv4-mapped and 6to4 forms included) are refused unless
  local requests are allowed. The host is resolved once, every address it resolves to is checked,
  and the connection goes to the checked address itself (the URL names the IP; the Host header and
  TLS SNI name the host, so certificates are still checked against the name): a DNS answer that
  changes between check and connection (rebinding) cannot slip past.
- No redirects are followed, no proxy from the environment is used, and the whole exchange is
  bounded: TIMEOUT seconds from the start to the last byte kept, at most BODY_KEPT bytes of the
  response read (asked for without compression, and never decompressed). Socket timeouts bound
  each read only: a receiver sending one byte of its answer every few seconds would hold a
  delivery, and the worker's slot, as long as it liked. A watchdog shuts the exchange's socket
  down at the deadline instead, which ends whatever read or write is waiting on it.
"""

from __future__ import annotations

import base64
import functools
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

import certifi
import httpx

TIMEOUT = 10.0  # seconds for the whole exchange: connection, request, answer
BODY_KEPT = 64 * 1024
LOCAL_NAMES = ("localhost", "localhost.localdomain")
NAT64 = ipaddress.ip_network("64:ff9b::/96")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Outcome:
    status: int | None = None
    headers: dict[str, str] | None = None
    body: str | None = None
    duration: float = 0.0
    error: str | None = None
    refused: bool = False  # the address was not allowed; nothing was sent

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def is_local(address: Address) -> bool:
    """Whether ADDRESS is one a user must not reach through the server."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None and is_local(embedded):
            return True
    return address.is_multicast or address.is_unspecified or not address.is_global


def literal_local(url: str) -> bool:
    """Whether URL names a local address literally (an IP, or localhost) without asking DNS."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host in LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        return is_local(ipaddress.ip_address(host))
    except ValueError:
        return False


def resolve(host: str, port: int) -> list[Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    # An IPv6 answer may carry a zone ("fe80::1%eth0"); the address is what is checked.
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in found))


def credentials(url: str) -> tuple[str, str | None]:
    """(URL without its user:password, the Basic authorization they make or None)."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    netloc = parts.netloc.rsplit("@", 1)[1]
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
    return urlunsplit(parts._replace(netloc=netloc)), "Basic " + base64.b64encode(pair).decode()


@functools.cache
def _ssl_context(verify: bool) -> ssl.SSLContext:
    if verify:
        return ssl.create_default_context(cafile=certifi.where())
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Watchdog:
    """Shuts the socket of one exchange down when SECONDS have passed. It learns the socket
    through httpcore's `trace` extension, as the connection (and its TLS layer) is made."""

    def __init__(self, seconds: float):
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.fired = self.done = False
        self.timer = threading.Timer(seconds, self._fire)
        self.timer.daemon = True

    def trace(self, event: str, info: dict) -> None:
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            with self.lock:
                self.sock = info["return_value"].get_extra_info("socket")
                if self.fired:
                    self._shut()

    def _fire(self) -> None:
        with self.lock:
            if not self.done:
                self.fired = True
                self._shut()

    def _shut(self) -> None:
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # not connected yet, or already closed

    def __enter__(self) -> Watchdog:
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        with self.lock:  # before the socket is closed: never shut down a descriptor reused since
            self.done = True
        self.timer.cancel()


def post(url: str, body: bytes, headers: dict[str, str], *, verify: bool, allow_local: bool,
         timeout: float | None = None) -> Outcome:  # fmt: skip
    """POST BODY to URL (without credentials in it) under the rules above, in TIMEOUT seconds
    (the module's) unless told."""
    timeout = TIMEOUT if timeout is None else timeout
    started = time.monotonic()
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError) as error:
        return Outcome(duration=time.monotonic() - started, error=f"cannot resolve {host}: {error}")
    blocked = [address for address in addresses if is_local(address)]
    if blocked and not allow_local:
        return Outcome(duration=time.monotonic() - started, refused=True,
                       error=f"refused: {host} resolves to the local address {blocked[0]}")  # fmt: skip
    address = addresses[0]
    literal = f"[{address}]" if address.version == 6 else str(address)
    target = urlunsplit(parts._replace(netloc=f"{literal}:{port}"))
    headers = {**headers, "Host": parts.netloc.rsplit("@", 1)[-1], "Accept-Encoding": "identity"}
    extensions = {"sni_hostname": host} if parts.scheme == "https" and host != str(address) else {}
    with Watchdog(started + timeout - time.monotonic()) as watchdog:
        try:
            return _exchange(target, body, headers, {**extensions, "trace": watchdog.trace}, verify, timeout,
                             watchdog, started)  # fmt: skip
        except (httpx.HTTPError, OSError, UnicodeError, ValueError) as error:
            if watchdog.fired:
                return Outcome(duration=time.monotonic() - started, error=timed_out(timeout))
            return Outcome(duration=time.monotonic() - started, error=f"{type(error).__name__}: {error}".rstrip(": "))


def timed_out(timeout: float) -> str:
    return f"timed out: the exchange took longer than {timeout:g} s"


def _exchange(target: str, body: bytes, headers: dict, extensions: dict, verify: bool, timeout: float,
              watchdog: Watchdog, started: float) -> Outcome:  # fmt: skip
    """The exchange; a head that arrived in time counts, with what of the body arrived by then."""
    with httpx.Client(verify=_ssl_context(verify), trust_env=False, follow_redirects=False, timeout=timeout) as client:
        request = client.build_request("POST", target, content=body, headers=headers, extensions=extensions)
        response = client.send(request, stream=True)
        kept = bytearray()
        try:
            for chunk in response.iter_raw():
                kept += chunk
                if len(kept) >= BODY_KEPT:
                    break
        except httpx.HTTPError:
            if not watchdog.fired:
                raise
        finally:
            response.close()
    return Outcome(
        status=response.status_code,
        headers=dict(response.headers.items()),
        body=bytes(kept[:BODY_KEPT]).decode("utf-8", "replace"),
        duration=time.monotonic() - started,
    )
