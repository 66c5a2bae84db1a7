"""Attacks on what the server shows of itself: reading /-/metrics from elsewhere (directly or with a
forged X-Forwarded-For), growing its label sets without bound with made-up paths and methods, and
secrets reaching the access log. Each asserts the answer and that nothing else changed."""

from __future__ import annotations

import base64
import logging
import secrets
import subprocess
import sys

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from codeyard import config as config_module
from codeyard import metrics
from codeyard.app import CodeyardApp, build_router

from ..support import LiveServer
from .state import row_counts

NOT_FOUND = {"message": "404 Not Found"}


@pytest.fixture(scope="module")
def app(session_runtime):
    return CodeyardApp(session_runtime, build_router(), owns_runtime=False)


def client_from(app, address: str) -> TestClient:
    return TestClient(app, base_url="http://testserver", raise_server_exceptions=False, client=(address, 40000))


def series(text: str) -> set[tuple[str, frozenset]]:
    return {(s.name, frozenset(s.labels.items())) for family in text_string_to_metric_families(text) for s in family.samples}


# --- who may read ------------------------------------------------------------------------------------


@pytest.mark.parametrize("address", ["10.1.2.3", "192.0.2.7", "2001:db8::1", "::ffff:10.0.0.1", "testclient"])
def test_metrics_are_not_found_outside_the_allowed_networks(rt, app, address):
    before = row_counts(rt)
    with client_from(app, "127.0.0.1") as loopback:
        assert loopback.get("/-/metrics").status_code == 200  # loopback may, by default
    with client_from(app, address) as outsider:
        for method in ("GET", "HEAD"):
            response = outsider.request(method, "/-/metrics")
            assert response.status_code == 404
            assert method == "HEAD" or response.json() == NOT_FOUND  # as for a path that does not exist
            assert b"codeyard_" not in response.content
    assert row_counts(rt) == before


def test_only_the_configured_networks_may_read(rt, app, monkeypatch):
    with client_from(app, "::1") as ipv6_loopback, client_from(app, "::ffff:127.0.0.1") as mapped:
        assert ipv6_loopback.get("/-/metrics").status_code == 200
        assert mapped.get("/-/metrics").status_code == 200
    monkeypatch.setattr(rt, "config", rt.config.with_overrides(metrics_allow="10.0.0.0/8"))
    with client_from(app, "127.0.0.1") as loopback, client_from(app, "10.9.8.7") as allowed:
        assert loopback.get("/-/metrics").status_code == 404
        assert allowed.get("/-/metrics").status_code == 200


def test_a_bad_allow_setting_stops_the_start():
    with pytest.raises(ValueError, match="not a network"):
        config_module.load({"CODEYARD_METRICS_ALLOW": "127.0.0.1/8,everyone"})


def test_a_forged_forwarded_for_does_not_open_the_metrics(tmp_path):
    """Behind a trusted proxy (127.0.0.1) the forwarded address decides; from any other peer the header
    is ignored (DECISIONS C67), so a client cannot name an allowed address."""
    data = tmp_path / "data"
    config = config_module.Config(
        data_dir=data, database_url=config_module.sqlite_url(data), base_url="http://127.0.0.1",
        argon2_memory_kib=1024, argon2_time_cost=1, argon2_parallelism=1,
        metrics_allow="10.0.0.0/8", forwarded_allow_ips="127.0.0.1",
    )  # fmt: skip
    server = LiveServer(config, tmp_path)
    server.start()
    try:
        forged = {"X-Forwarded-For": "10.0.0.1"}
        with httpx.Client(base_url=server.base_url, transport=httpx.HTTPTransport(local_address="127.0.0.2")) as other:
            assert other.get("/-/metrics", headers=forged).status_code == 404
            assert other.get("/-/health", headers=forged).status_code == 200  # the peer itself is served
        assert server.http.get("/-/metrics").status_code == 404  # the proxy's own address is not allowed
        proxied = server.http.get("/-/metrics", headers=forged)  # the proxy forwarding an allowed client
        assert proxied.status_code == 200 and "codeyard_http_requests_total" in proxied.text
    finally:
        server.stop()


# --- bounded labels ------------------------------------------------------------------------------------


def test_made_up_paths_and_methods_add_at_most_one_series_each(rt, app):
    with client_from(app, "127.0.0.1") as client:
        client.get("/nothing-here")  # the miss's series exist before the attack
        client.request("BREW", "/api/v3/user")
        before = series(client.get("/-/metrics").text)
        made_up = [secrets.token_hex(6) for _ in range(100)]
        for word in made_up:
            assert client.get(f"/{word}/x{word}.git/info/refs?service={word}").status_code in (400, 401, 404)
            assert client.get(f"/api/v3/{word}").status_code == 404
        for word in made_up[:20]:
            assert client.request(f"X{word.upper()}", "/api/v3/user").status_code == 405
        after = series(client.get("/-/metrics").text)
    new = after - before
    text = repr(sorted(map(repr, after)))
    assert not any(word in text for word in made_up)
    routes = {dict(labels).get("route") for _, labels in new}
    # Only the git route's own first answers and the metrics page may appear; the misses were there.
    assert routes <= {"/:namespace/:project/info/refs", "/-/metrics"}, routes
    methods = {dict(labels).get("method") for _, labels in after if "method" in dict(labels)}
    assert methods <= metrics.METHODS | {"OTHER"}


# --- the access log ------------------------------------------------------------------------------------


def test_secrets_never_reach_the_access_log(rt, app, users, caplog, monkeypatch):
    alice = users.create("alice")
    monkeypatch.setattr(app, "access_log", True)
    secret = "S3CRET" + secrets.token_hex(8)
    basic = base64.b64encode(f"alice:{secret}".encode()).decode()
    with client_from(app, "127.0.0.1") as client, caplog.at_level(logging.INFO):
        before = row_counts(rt)
        answers = [
            client.get(f"/api/v3/user?private_token={secret}"),
            client.get("/api/v3/user", headers={"PRIVATE-TOKEN": secret}),
            client.get("/api/v3/user", headers={"Authorization": f"Bearer {secret}"}),
            client.get(f"/api/v3/user?private_token={alice.token}&password={secret}"),
            client.get("/", headers={"Cookie": f"codeyard_session={secret}"}),
            client.post("/api/v3/session", json={"login": "alice", "password": secret}),
            client.post("/oauth/token", data={"grant_type": "password", "username": "alice", "password": secret}),
            client.get(f"/alice/{secret}.git/info/refs?service=git-upload-pack", headers={"Authorization": f"Basic {basic}"}),
            client.get(f"/api/v3/projects/{secret}"),
            client.get(f"/api/v3/{secret}/{secret}/nothing"),
        ]
    assert [a.status_code for a in answers][:4] == [401, 401, 401, 200]
    lines = [record.getMessage() for record in caplog.records if record.name == "codeyard.access"]
    assert len(lines) == len(answers), lines
    for text in (secret, alice.token, alice.password):
        assert not any(text in record.getMessage() for record in caplog.records if record.name.startswith("codeyard")), text
    assert lines[3].startswith("GET /api/v3/user 200 ") and lines[3].endswith(f"user={alice.id}")
    assert lines[8].split(" ")[1] == "/api/v3/projects/:id" and lines[9].split(" ")[1] == metrics.UNMATCHED
    after = row_counts(rt)
    after.pop("password_failures", None), before.pop("password_failures", None)  # wrong passwords are counted
    assert after == before


def test_an_access_log_file_gets_one_line_per_request_from_every_process(tmp_path):
    """CODEYARD_ACCESS_LOG=<path>: appended by each server process (set up in create_app)."""
    path = tmp_path / "access.log"
    code = (
        "import os; from codeyard.app import create_app; from codeyard import config;"
        "from starlette.testclient import TestClient;"
        f"os.environ['CODEYARD_ACCESS_LOG'] = {str(path)!r}; os.environ['CODEYARD_DATA_DIR'] = {str(tmp_path / 'data')!r};"
        "from codeyard.cli import _prepare; _prepare(config.load());"
        "c = TestClient(create_app()); c.get('/-/health'); c.get('/api/v3/user?private_token=hidden')"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and " GET /-/health 200 " in lines[0] and lines[0].endswith(" user=-")
    assert " GET /api/v3/user 401 " in lines[1] and "hidden" not in path.read_text()
