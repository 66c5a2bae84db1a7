"""Server-side request forgery through hook URLs: local addresses are refused at the door (400,
nothing stored) while `allow_local_requests_from_hooks` is off; deliveries check resolved names
(tests/jobs/test_webhooks.py)."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from sqlalchemy import select

from codeyard.db.models import Job, ProjectHook
from codeyard.services import outbound
from codeyard.services import settings as settings_service

LOCAL_URLS = [
    "http://127.0.0.1/hook",
    "http://127.1.2.3:8080/hook",
    "http://localhost/hook",
    "http://api.localhost/hook",
    "http://user:pass@10.0.0.5/hook",
    "http://172.16.3.4/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://0.0.0.0:9000/",
    "http://224.0.0.1/",
    "http://[::1]/hook",
    "http://[::]/hook",
    "http://[fe80::1]/hook",
    "http://[fd00::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::ffff:10.1.1.1]/hook",
    "https://[2002:7f00:1::]/hook",
    # IPv6 forms Python 3.11's ipaddress calls global although they are not public
    "http://[::7f00:1]/hook",  # IPv4-compatible 127.0.0.1
    "http://[::ffff:0:7f00:1]/hook",  # IPv4-translated 127.0.0.1
    "http://[64:ff9b:1::7f00:1]/hook",  # local-use NAT64
    "http://[64:ff9b::7f00:1]/hook",  # well-known NAT64 prefix, 127.0.0.1
    "http://[fec0::1]/hook",  # site-local
    "http://[::a9fe:a9fe]/hook",  # IPv4-compatible 169.254.169.254
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook",  # Teredo, client 127.0.0.1
    "http://[2001:db8::1]/hook",  # documentation
    "http://[3fff::1]/hook",  # documentation
    "http://[100::1]/hook",  # discard-only
    "http://[2001:20::1]/hook",  # ORCHIDv2
    "http://[2001:2::1]/hook",  # benchmarking
    "http://[5f00::1]/hook",  # segment routing
    "http://192.0.0.8/hook",  # IETF protocol assignments
    "http://192.88.99.1/hook",  # 6to4 relay anycast
    "http://198.18.0.1/hook",  # benchmarking
]
BLOCKED = {"message": {"url": ["is blocked: requests to the local network are not allowed"]}}


def rows(rt) -> list[tuple]:
    with rt.db.session() as session:
        hooks = [(h.id, h.url, h.push_events) for h in session.scalars(select(ProjectHook).order_by(ProjectHook.id))]
        return [*hooks, ("jobs", len(session.scalars(select(Job)).all()))]


@pytest.fixture
def owner(users):
    return users.create("owner")


@pytest.fixture
def project(projects, owner):
    return projects.create(owner)


@pytest.mark.parametrize("url", LOCAL_URLS)
def test_creating_a_hook_on_a_local_address_is_400(rt, api, owner, project, url):
    before = rows(rt)
    response = api.as_(owner).post(f"/projects/{project.id}/hooks", json={"url": url})
    assert response.status_code == 400 and response.json() == BLOCKED
    assert rows(rt) == before


def test_editing_a_hook_to_a_local_address_is_400(rt, api, owner, project):
    created = api.as_(owner).post(f"/projects/{project.id}/hooks", json={"url": "http://hooks.example.com/x"}).json()
    before = rows(rt)
    for url in ("http://127.0.0.1:22/", "http://[::ffff:169.254.169.254]/"):
        response = api.as_(owner).put(f"/projects/{project.id}/hooks/{created['id']}", json={"url": url, "push_events": False})
        assert response.status_code == 400 and response.json() == BLOCKED
    assert rows(rt) == before


def test_public_addresses_and_names_are_accepted(api, owner, project):
    for url in ("http://93.184.216.34/hook", "https://[2606:4700::1111]/hook", "https://hooks.example.com/x"):
        assert api.as_(owner).post(f"/projects/{project.id}/hooks", json={"url": url}).status_code == 201


def test_the_setting_allows_local_addresses(rt, api, owner, project):
    with rt.db.transaction() as session:
        settings_service.update(session, {"allow_local_requests_from_hooks": True})
    response = api.as_(owner).post(f"/projects/{project.id}/hooks", json={"url": "http://127.0.0.1:9/hook"})
    assert response.status_code == 201


# Names that resolve to reserved IPv6 forms: refused at delivery, before any connection.
RESOLVED_LOCAL = ["::7f00:1", "::ffff:0:7f00:1", "64:ff9b:1::7f00:1", "fec0::1", "::a9fe:a9fe",
                  "2001:0:4136:e378:8000:63bf:80ff:fffe", "2002:a9fe:a9fe::1", "2001:db8::5"]  # fmt: skip


@pytest.mark.parametrize("address", RESOLVED_LOCAL)
def test_a_name_resolving_to_a_reserved_ipv6_form_is_refused_at_delivery(monkeypatch, address):
    connected = []
    monkeypatch.setattr(outbound.socket, "getaddrinfo",
                        lambda host, port, *a, **k: [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))])  # fmt: skip
    monkeypatch.setattr(outbound, "_exchange", lambda *args: connected.append(args) or outbound.Outcome(status=204))
    outcome = outbound.post("https://hooks.example.test/x", b"{}", {}, verify=True, allow_local=False)
    assert outcome.refused and outcome.status is None and connected == []
    assert outcome.error == f"refused: hooks.example.test resolves to the local address {ipaddress.ip_address(address)}"
