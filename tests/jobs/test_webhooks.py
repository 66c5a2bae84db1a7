"""Webhook delivery against a real HTTP receiver on loopback (local requests allowed here)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import uuid

import pytest
from sqlalchemy import select, update

from codeyard.db.models import FAILED, Event, Job, Project, ProjectHook, User
from codeyard.jobs.worker import Worker
from codeyard.services import outbound, pushes, webhooks
from codeyard.services import settings as settings_service

from ..receiver import Receiver
from ..support import WorkingCopy

ZERO = "0" * 40
MASTER, DEVELOPER = 40, 30


@pytest.fixture
def owner(users):
    return users.create("owner")


@pytest.fixture
def project(projects, owner):
    return projects.create(owner, name="demo")


@pytest.fixture
def work(rt, project, tmp_path):
    return WorkingCopy(rt, project, tmp_path / "work")


@pytest.fixture
def receiver():
    with Receiver() as running:
        yield running


def allow_local(rt, allowed: bool = True) -> None:
    with rt.db.transaction() as session:
        settings_service.update(session, {"allow_local_requests_from_hooks": allowed})


@pytest.fixture
def local_allowed(rt):
    allow_local(rt)


def add_hook(api, who, project, url: str, **fields):
    response = api.as_(who).post(f"/projects/{project.id}/hooks", json={"url": url, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def post_push(rt, project, user, *updates) -> list[dict]:
    with rt.db.transaction() as session:
        return pushes.post_push(
            session, rt, session.get(Project, project.id), session.get(User, user.id),
            [pushes.RefUpdate(*update) for update in updates],
        )  # fmt: skip


def pushed(work, message: str) -> str:
    sha = work.commit(message)
    work.push()
    return sha


def run_jobs(rt) -> int:
    return Worker(rt, backoff=0).run_until_idle()


def jobs(rt) -> list[Job]:
    with rt.db.session() as session:
        return list(session.scalars(select(Job).order_by(Job.id)))


def deliveries(api, who, project, hook) -> list[dict]:
    response = api.as_(who).get(f"/projects/{project.id}/hooks/{hook['id']}/deliveries")
    assert response.status_code == 200, response.text
    return response.json()


# --- push and tag push -----------------------------------------------------------------------------


def test_push_and_tag_push_arrive_once_with_headers_auth_and_payload(rt, api, owner, project, work, receiver, local_allowed):
    url = receiver.url("/hook?from=codeyard", credentials="hook%40user:p%40ss")
    hook = add_hook(api, owner, project, url, tag_push_events=True, token="s3cret")
    sha = work.commit("first")
    work.git("tag", "-a", "-m", "Release", "v1")
    work.push("master", "v1")
    branch, tag = post_push(rt, project, owner, ("refs/heads/master", ZERO, sha), ("refs/tags/v1", ZERO, work.git("rev-parse", "v1")))
    assert run_jobs(rt) == 2
    assert run_jobs(rt) == 0 and jobs(rt) == []
    push_request, tag_request = sorted(receiver.requests, key=lambda r: r.headers["x-gitlab-event"])
    assert len(receiver.requests) == 2
    assert push_request.headers["x-gitlab-event"] == "Push Hook" and tag_request.headers["x-gitlab-event"] == "Tag Push Hook"
    assert push_request.json == branch and tag_request.json == tag
    assert tag_request.json["checkout_sha"] == sha and [c["id"] for c in tag_request.json["commits"]] == [sha]
    for got in (push_request, tag_request):
        assert got.path == "/hook?from=codeyard"
        assert got.headers["content-type"] == "application/json"
        assert got.headers["host"] == f"127.0.0.1:{receiver.port}"
        assert base64.b64decode(got.headers["authorization"].removeprefix("Basic ")) == b"hook@user:p@ss"
        assert got.headers["x-gitlab-token"] == "s3cret"
        signature = hmac.new(b"s3cret", got.body, hashlib.sha256).hexdigest()
        assert got.headers["x-codeyard-signature"] == f"sha256={signature}"
        assert uuid.UUID(got.delivery)
    assert push_request.delivery != tag_request.delivery
    records = deliveries(api, owner, project, hook)
    assert [r["response_status"] for r in records] == [200, 200] and all(r["success"] for r in records)
    assert {r["url"] for r in records} == {receiver.url("/hook?from=codeyard")}  # no credentials kept
    full = api.as_(owner).get(f"/projects/{project.id}/hooks/{hook['id']}/deliveries/{records[0]['id']}").json()
    assert full["request"]["headers"]["X-Gitlab-Token"] == "[hidden]"
    assert full["request"]["headers"]["Authorization"] == "[hidden]"
    assert full["response"]["body"] == '{"ok": true}' and full["response"]["headers"]["content-type"] == "application/json"
    assert "token" not in api.as_(owner).get(f"/projects/{project.id}/hooks/{hook['id']}").json()


def test_only_hooks_whose_flag_is_on_are_called(rt, api, owner, project, work, receiver, local_allowed):
    add_hook(api, owner, project, receiver.url("/push-only"))
    add_hook(api, owner, project, receiver.url("/tags-only"), push_events=False, tag_push_events=True)
    add_hook(api, owner, project, receiver.url("/nothing"), push_events=False)
    sha = work.commit("first")
    work.git("tag", "light")
    work.push("master", "light")
    post_push(rt, project, owner, ("refs/heads/master", ZERO, sha))
    post_push(rt, project, owner, ("refs/tags/light", ZERO, sha))
    run_jobs(rt)
    assert sorted((r.path, r.headers["x-gitlab-event"]) for r in receiver.requests) == [
        ("/push-only", "Push Hook"), ("/tags-only", "Tag Push Hook"),
    ]  # fmt: skip


def test_a_branch_created_through_the_api_is_delivered(rt, api, owner, project, work, receiver, local_allowed):
    add_hook(api, owner, project, receiver.url())
    work.commit("first")
    work.push()
    post_push(rt, project, owner, ("refs/heads/master", ZERO, work.git("rev-parse", "HEAD")))
    created = api.as_(owner).post(f"/projects/{project.id}/repository/branches", json={"branch_name": "topic", "ref": "master"})
    assert created.status_code == 201, created.text
    run_jobs(rt)
    assert sorted(r.json["ref"] for r in receiver.requests) == ["refs/heads/master", "refs/heads/topic"]


# --- failures, retries, disabling ------------------------------------------------------------------


def test_two_errors_then_success_make_three_attempts_in_the_log(rt, api, owner, project, work, local_allowed):
    with Receiver(statuses=(500, 503)) as receiver:
        hook = add_hook(api, owner, project, receiver.url())
        post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
        assert run_jobs(rt) == 3
    assert len(receiver.requests) == 3 and len({r.delivery for r in receiver.requests}) == 1
    assert len({r.body for r in receiver.requests}) == 1
    records = deliveries(api, owner, project, hook)
    assert [(r["attempt"], r["response_status"], r["success"]) for r in records] == [(3, 200, True), (2, 503, False), (1, 500, False)]
    assert records[1]["error"] is None and all(r["duration"] >= 0 for r in records)
    assert jobs(rt) == []


@pytest.mark.parametrize(("status", "attempts"), [(404, 1), (302, 1), (408, 5), (429, 5), (502, 5)])
def test_which_answers_are_retried(rt, api, owner, project, work, local_allowed, status, attempts):
    with Receiver(statuses=(status,) * 10) as receiver:
        hook = add_hook(api, owner, project, receiver.url())
        post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
        run_jobs(rt)
    assert len(receiver.requests) == attempts
    [job] = jobs(rt)
    assert job.state == FAILED and job.last_error == f"the receiver answered {status}" and job.attempts == attempts
    assert len(deliveries(api, owner, project, hook)) == attempts


def test_network_errors_are_retried_and_recorded(rt, api, owner, project, work, local_allowed):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there
    hook = add_hook(api, owner, project, f"http://127.0.0.1:{port}/hook")
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
    run_jobs(rt)
    records = deliveries(api, owner, project, hook)
    assert len(records) == webhooks.ATTEMPTS
    assert all(r["response_status"] is None and r["error"].startswith("ConnectError") for r in records)


def test_twenty_failures_in_a_row_disable_the_hook_until_it_is_edited(rt, api, owner, project, work, local_allowed):
    with Receiver(statuses=(410,) * 5) as receiver:
        hook = add_hook(api, owner, project, receiver.url())
        with rt.db.transaction() as session:
            session.execute(update(ProjectHook).values(failure_count=webhooks.DISABLE_AFTER - 2))
        first = pushed(work, "first")
        post_push(rt, project, owner, ("refs/heads/master", ZERO, first))
        run_jobs(rt)
        shown = api.as_(owner).get(f"/projects/{project.id}/hooks/{hook['id']}").json()
        assert shown["disabled_at"] is None  # 19 failures
        second = pushed(work, "second")
        post_push(rt, project, owner, ("refs/heads/master", first, second))
        run_jobs(rt)
        shown = api.as_(owner).get(f"/projects/{project.id}/hooks/{hook['id']}").json()
        assert shown["disabled_at"] is not None
        assert shown["disabled_reason"] == "20 deliveries failed in a row; the last: the receiver answered 410"
        post_push(rt, project, owner, ("refs/heads/master", second, pushed(work, "third")))
        assert jobs(rt)[-1].state == FAILED and run_jobs(rt) == 0  # a disabled hook gets nothing
        assert len(receiver.requests) == 2
        edited = api.as_(owner).put(f"/projects/{project.id}/hooks/{hook['id']}", json={"url": receiver.url()})
        assert edited.status_code == 200
        assert edited.json()["disabled_at"] is None and edited.json()["disabled_reason"] is None
        post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "fourth")))
        run_jobs(rt)
        assert len(receiver.requests) == 3


def test_pending_deliveries_of_a_disabled_or_deleted_hook_are_dropped(rt, api, owner, project, work, receiver, local_allowed):
    disabled = add_hook(api, owner, project, receiver.url("/disabled"))
    deleted = add_hook(api, owner, project, receiver.url("/deleted"))
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
    with rt.db.transaction() as session:
        session.get(ProjectHook, disabled["id"]).disabled_at = session.get(Project, project.id).created_at
    assert api.as_(owner).delete(f"/projects/{project.id}/hooks/{deleted['id']}").status_code == 200
    assert run_jobs(rt) == 2
    assert receiver.requests == [] and jobs(rt) == []


# --- redeliver and test ----------------------------------------------------------------------------


def test_redeliver_sends_the_same_body_under_the_same_id(rt, api, owner, project, work, receiver, local_allowed):
    hook = add_hook(api, owner, project, receiver.url())
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
    run_jobs(rt)
    [record] = deliveries(api, owner, project, hook)
    response = api.as_(owner).post(f"/projects/{project.id}/hooks/{hook['id']}/deliveries/{record['id']}/redeliver")
    assert response.status_code == 201
    assert response.json() == {"hook_id": hook["id"], "event": "Push Hook", "delivery": record["delivery"]}
    run_jobs(rt)
    first, again = receiver.requests
    assert again.body == first.body and again.delivery == first.delivery
    assert len(deliveries(api, owner, project, hook)) == 2
    missing = api.as_(owner).post(f"/projects/{project.id}/hooks/{hook['id']}/deliveries/999999/redeliver")
    assert missing.status_code == 404 and missing.json() == {"message": "404 Not found"}


def test_only_the_newest_deliveries_are_kept(rt, api, owner, project, work, receiver, local_allowed, monkeypatch):
    monkeypatch.setattr(webhooks, "KEEP_DELIVERIES", 3)
    hook = add_hook(api, owner, project, receiver.url())
    other = add_hook(api, owner, project, receiver.url() + "?other")
    for n in range(5):
        post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, f"commit {n}")))
        run_jobs(rt)
    kept = deliveries(api, owner, project, hook)
    assert len(receiver.requests) == 10 and len(kept) == 3
    assert [json.loads(record["request"]["body"])["after"] for record in [
        api.as_(owner).get(f"/projects/{project.id}/hooks/{hook['id']}/deliveries/{entry['id']}").json() for entry in kept
    ]] == [work.git("rev-parse", f"HEAD~{n}").strip() for n in range(3)]  # newest first
    assert len(deliveries(api, owner, project, other)) == 3


def test_hook_test_sends_the_latest_push_or_a_sample(rt, api, owner, project, work, receiver, local_allowed):
    hook = add_hook(api, owner, project, receiver.url(), push_events=False)
    response = api.as_(owner).post(f"/projects/{project.id}/hooks/{hook['id']}/test")
    assert response.status_code == 201 and response.json()["event"] == "Push Hook"
    run_jobs(rt)
    sample = receiver.requests[-1].json
    assert sample["object_kind"] == "push" and sample["project_id"] == project.id and sample["commits"] == []
    assert sample["user_name"] == owner.name
    sha = work.commit("first")
    work.git("tag", "t1")
    work.push("master", "t1")
    post_push(rt, project, owner, ("refs/heads/master", ZERO, sha))
    [latest] = post_push(rt, project, owner, ("refs/tags/t1", ZERO, sha))
    run_jobs(rt)  # push_events is off: nothing sent
    assert len(receiver.requests) == 1
    response = api.as_(owner).post(f"/projects/{project.id}/hooks/{hook['id']}/test")
    assert response.json()["event"] == "Tag Push Hook"
    run_jobs(rt)
    assert receiver.requests[-1].json == latest and receiver.requests[-1].headers["x-gitlab-event"] == "Tag Push Hook"
    with rt.db.session() as session:
        assert session.scalar(select(Event.id).where(Event.project_id == project.id).order_by(Event.id.desc())) is not None


def test_deliveries_are_for_masters_owners_and_admins(rt, api, owner, project, users, projects, admin, receiver, local_allowed):
    hook = add_hook(api, owner, project, receiver.url())
    developer, master, stranger = users.create("dev"), users.create("master"), users.create("stranger")
    projects.add_member(project, developer, DEVELOPER)
    projects.add_member(project, master, MASTER)
    base = f"/projects/{project.id}/hooks/{hook['id']}"
    for who in (owner, master, admin):
        assert api.as_(who).get(f"{base}/deliveries").status_code == 200
    assert api.as_(developer).get(f"{base}/deliveries").status_code == 403
    assert api.as_(developer).post(f"{base}/test").status_code == 403
    assert api.as_(stranger).get(f"{base}/deliveries").status_code == 404
    assert api.anonymous.get(f"{base}/deliveries").status_code == 401
    assert api.as_(owner).get(f"/projects/{project.id}/hooks/999999/deliveries").status_code == 404
    assert api.as_(owner).get(f"{base}/deliveries/999999").json() == {"message": "404 Not found"}
    assert jobs(rt) == []


# --- safe by default -------------------------------------------------------------------------------


def test_a_loopback_url_is_refused_and_recorded_while_the_setting_is_off(rt, api, owner, project, work, receiver, local_allowed):
    hook = add_hook(api, owner, project, receiver.url())
    allow_local(rt, False)
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
    assert run_jobs(rt) == 1
    assert receiver.requests == []
    [record] = deliveries(api, owner, project, hook)
    assert record["response_status"] is None
    assert record["error"] == "refused: 127.0.0.1 resolves to the local address 127.0.0.1"
    [job] = jobs(rt)
    assert job.state == FAILED and job.attempts == 1  # refused for good, not retried


@pytest.fixture
def fake_dns(monkeypatch):
    """hooks.example.test resolves to 127.0.0.1; lookups are counted."""
    lookups = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        lookups.append(host)
        if host == "hooks.example.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(outbound.socket, "getaddrinfo", getaddrinfo)
    return lookups


def test_a_name_resolving_to_loopback_is_refused(rt, api, owner, project, work, receiver, fake_dns):
    hook = add_hook(api, owner, project, receiver.url(host="hooks.example.test"))  # not a literal: accepted
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
    run_jobs(rt)
    assert receiver.requests == []
    [record] = deliveries(api, owner, project, hook)
    assert record["error"] == "refused: hooks.example.test resolves to the local address 127.0.0.1"


def test_the_checked_address_is_the_one_connected_to(rt, api, owner, project, work, receiver, fake_dns, local_allowed):
    add_hook(api, owner, project, receiver.url(host="hooks.example.test"))
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
    fake_dns.clear()
    run_jobs(rt)
    [got] = receiver.requests
    assert got.headers["host"] == f"hooks.example.test:{receiver.port}"
    # The name is resolved once; the connection is made to the checked address itself (the socket
    # layer's lookup of an IP literal asks no DNS).
    assert fake_dns == ["hooks.example.test", "127.0.0.1"]


def test_the_token_is_kept_cleared_or_refused(rt, api, owner, project, work, receiver, local_allowed):
    hook = add_hook(api, owner, project, receiver.url(), token="first")
    base = f"/projects/{project.id}/hooks/{hook['id']}"
    bad = api.as_(owner).put(base, json={"url": receiver.url(), "token": "caf\u00e9"})
    assert bad.status_code == 400 and bad.json() == {"message": {"token": ["must be printable ASCII"]}}
    assert api.as_(owner).put(base, json={"url": receiver.url()}).status_code == 200  # token kept
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
    run_jobs(rt)
    assert receiver.requests[-1].headers["x-gitlab-token"] == "first"
    assert api.as_(owner).put(base, json={"url": receiver.url(), "token": None}).status_code == 200
    post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "second")))
    run_jobs(rt)
    assert "x-gitlab-token" not in receiver.requests[-1].headers
    assert "x-codeyard-signature" not in receiver.requests[-1].headers


def test_deliveries_and_their_jobs_are_counted_by_outcome(rt, api, owner, project, work, local_allowed):
    from prometheus_client import REGISTRY

    def counts() -> dict:
        found = {outcome: REGISTRY.get_sample_value("codeyard_webhook_deliveries_total", {"outcome": outcome}) or 0
                 for outcome in ("delivered", "rejected", "unreachable", "blocked")}  # fmt: skip
        for outcome in ("finished", "retried", "failed"):
            found[outcome] = REGISTRY.get_sample_value("codeyard_jobs_total", {"kind": webhooks.KIND, "outcome": outcome}) or 0
        return found

    before = counts()
    with Receiver(statuses=(503,)) as receiver:
        add_hook(api, owner, project, receiver.url())
        post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "first")))
        assert run_jobs(rt) == 2  # 503, then 200
        allow_local(rt, False)
        post_push(rt, project, owner, ("refs/heads/master", ZERO, pushed(work, "second")))
        assert run_jobs(rt) == 1  # refused: a local address
    after = counts()
    grown = {name: after[name] - before[name] for name in after}
    assert grown == {"delivered": 1, "rejected": 1, "unreachable": 0, "blocked": 1, "finished": 1, "retried": 1, "failed": 1}
