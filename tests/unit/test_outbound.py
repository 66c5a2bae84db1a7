"""services.outbound: the address rules, credentials from URLs, bounded reads, no redirects, TLS
checked against the host name while connecting to the checked address."""

from __future__ import annotations

import base64
import functools
import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from codeyard.services import outbound


@pytest.mark.parametrize(("address", "local"), [
    ("127.0.0.1", True), ("10.1.2.3", True), ("172.31.0.1", True), ("192.168.0.1", True), ("169.254.169.254", True),
    ("100.64.0.1", True), ("0.0.0.0", True), ("224.0.0.251", True), ("239.1.1.1", True), ("255.255.255.255", True),
    ("8.8.8.8", False), ("93.184.216.34", False), ("::1", True), ("::", True), ("fe80::1", True), ("fd12::1", True),
    ("ff02::1", True), ("::ffff:127.0.0.1", True), ("::ffff:192.168.1.1", True), ("::ffff:8.8.8.8", False),
    ("2002:a00:1::", True), ("64:ff9b::a9fe:a9fe", True), ("2606:4700::1111", False),
    # reserved forms Python 3.11 calls global
    ("::7f00:1", True), ("::ffff:0:7f00:1", True), ("64:ff9b:1::7f00:1", True), ("fec0::1", True),
    ("::a9fe:a9fe", True), ("::808:808", True), ("2001:0:4136:e378:8000:63bf:80ff:fffe", True),
    ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", True), ("2001:db8::1", True), ("3fff::1", True), ("100::1", True),
    ("2001:10::1", True), ("2001:20::1", True), ("2001:2::1", True), ("5f00::1", True), ("4000::1", True),
    ("192.0.0.8", True), ("192.0.0.9", True), ("192.88.99.1", True), ("198.18.0.1", True), ("192.0.2.1", True),
    ("240.0.0.1", True), ("::ffff:100.64.0.1", True), ("2002:c000:201::1", True), ("64:ff9b::c000:201", True),
    # public addresses and their IPv4 embeddings
    ("1.1.1.1", False), ("2001:4860:4860::8888", False), ("2a00:1450:4001:80b::200e", False),
    ("2002:808:808::1", False), ("64:ff9b::808:808", False), ("2600::1", False), ("3ffe::1", False),
])  # fmt: skip
def test_local_addresses(address, local):
    assert outbound.is_local(ipaddress.ip_address(address)) is local


def test_credentials_become_basic_auth():
    assert outbound.credentials("http://example.com/x") == ("http://example.com/x", None)
    url, auth = outbound.credentials("https://us%3Aer:p%40ss@example.com:8443/x?y=1")
    assert url == "https://example.com:8443/x?y=1"
    assert base64.b64decode(auth.removeprefix("Basic ")) == b"us:er:p@ss"
    assert base64.b64decode(outbound.credentials("http://token@example.com/")[1].split()[1]) == b"token:"


class Answers(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/big":
            body = b"x" * (outbound.BODY_KEPT * 3)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_the_response_body_kept_is_bounded(server):
    outcome = outbound.post(f"http://127.0.0.1:{server.server_address[1]}/big", b"{}", {}, verify=True, allow_local=True)
    assert outcome.ok and len(outcome.body) == outbound.BODY_KEPT


def test_credentials_left_in_a_url_stay_out_of_the_host_header(monkeypatch):
    sent = []

    def exchange(target, body, headers, extensions, verify, timeout, watchdog, started):
        sent.append((target, headers))
        return outbound.Outcome(status=204)

    monkeypatch.setattr(outbound, "_exchange", exchange)
    assert outbound.post("http://u:p@127.0.0.1:8/x", b"{}", {}, verify=True, allow_local=True).ok
    assert sent == [("http://127.0.0.1:8/x", {"Host": "127.0.0.1:8", "Accept-Encoding": "identity"})]


def test_redirects_are_not_followed(server):
    outcome = outbound.post(f"http://127.0.0.1:{server.server_address[1]}/moved", b"{}", {}, verify=True, allow_local=True)
    assert outcome.status == 302 and not outcome.ok and outcome.headers["location"].endswith("/elsewhere")


def test_an_unknown_name_is_an_error_not_an_exception(monkeypatch):
    def fail(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(outbound.socket, "getaddrinfo", fail)
    outcome = outbound.post("http://nowhere.example.test/", b"{}", {}, verify=True, allow_local=False)
    assert outcome.status is None and outcome.error.startswith("cannot resolve nowhere.example.test")
    assert not outcome.refused


# --- TLS -------------------------------------------------------------------------------------------

NAME = "hooks.example.test"


@pytest.fixture
def tls_server(tmp_path, monkeypatch):
    """An HTTPS server on loopback with a self-signed certificate for NAME, which resolves to it."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={NAME}",
                    "-addext", f"subjectAltName=DNS:{NAME}", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)  # fmt: skip
    names = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names.append(name)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    real = socket.getaddrinfo
    monkeypatch.setattr(outbound.socket, "getaddrinfo", lambda host, port, *a, **k: real("127.0.0.1" if host == NAME else host, port, *a, **k))
    yield f"https://{NAME}:{httpd.server_address[1]}/big", cert, names
    httpd.shutdown()
    httpd.server_close()


def test_tls_is_checked_against_the_host_name(tls_server, monkeypatch):
    url, cert, names = tls_server
    refused = outbound.post(url, b"{}", {}, verify=True, allow_local=True)
    assert refused.status is None and "CERTIFICATE_VERIFY_FAILED" in refused.error
    unchecked = outbound.post(url, b"{}", {}, verify=False, allow_local=True)
    assert unchecked.ok
    trusting = functools.cache(lambda verify: ssl.create_default_context(cafile=str(cert)))
    monkeypatch.setattr(outbound, "_ssl_context", trusting)
    checked = outbound.post(url, b"{}", {}, verify=True, allow_local=True)
    assert checked.ok  # the certificate names NAME, not the address connected to
    assert set(names) == {NAME}
