"""Requests the server makes to URLs its users gave it (webhooks), made safe to make.

- Only plainly public addresses may be reached unless local requests are allowed (`is_public`: an
  allow-list, since Python's `is_global` calls several reserved IPv6 forms global, such as
  IPv4-compatible `::7f00:1` or site-local `fec0::1`). IPv4: anything outside IANA's special-purpose
  blocks and multicast. IPv6: global unicast 2000::/3 outside its special-purpose blocks; the forms
  that carry an IPv4 address (IPv4-mapped, the well-known NAT64 prefix, 6to4) are judged by the
  address they carry; every other form that embeds one (IPv4-compatible, IPv4-translated,
  local-use NAT64, Teredo) lies outside what is allowed. The host is resolved once, every address
  it resolves to is checked, and the connection goes to the checked address itself (the URL names
  the IP; the Host header and TLS SNI name the host, so certificates are still checked against the
  name): a DNS answer that changes between check and connection (rebinding) cannot slip past.
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


def _networks(*blocks: str) -> tuple:
    return tuple(ipaddress.ip_network(block) for block in blocks)


# IANA's IPv4 special-purpose registry (some of its blocks are globally reachable, none is a plain
# public host), multicast, and 240/4 (reserved, with the limited broadcast).
IPV4_SPECIAL = _networks(
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
)  # fmt: skip
IPV6_UNICAST = ipaddress.ip_network("2000::/3")
# Special-purpose blocks within 2000::/3: IETF protocol assignments (Teredo, benchmarking, ORCHID,
# AMT, ...), documentation, AS112. 6to4 (2002::/16) is judged by the IPv4 address it carries.
IPV6_SPECIAL = _networks("2001::/23", "2001:db8::/32", "2620:4f:8000::/48", "3fff::/20")
IPV4_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
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


def is_public(address: Address) -> bool:
    """Whether ADDRESS is plainly public: one a user may reach through the server."""
    if isinstance(address, ipaddress.IPv4Address):
        return not any(address in block for block in IPV4_SPECIAL)
    if address in IPV4_MAPPED or address in NAT64:
        return is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        return is_public(address.sixtofour)
    return address in IPV6_UNICAST and not any(address in block for block in IPV6_SPECIAL)


def is_local(address: Address) -> bool:
    """Whether ADDRESS is one a user must not reach through the server (not plainly public)."""
    return not is_public(address)


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
