"""Signing in and out of the web pages: the same password check as POST /session, hashed
server-side sessions, cookie attributes, form tokens."""

from __future__ import annotations

import hashlib
import re
import types

from sqlalchemy import select, update

from codeyard.db.models import ApplicationSetting, WebSession
from codeyard.web import core

EVENT_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)


def _sessions(rt) -> list[WebSession]:
    with rt.db.transaction() as session:
        return list(session.scalars(select(WebSession)))


def test_sign_in_with_username_sets_a_session_cookie_stored_hashed(web, users, rt):
    alice = users.create("alice")
    response = web.sign_in(alice)
    assert response.headers["location"] == "/"
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith("codeyard_session="))
    secret = cookie.split(";", 1)[0].split("=", 1)[1]
    attributes = [part.strip() for part in cookie.split(";")]
    assert "HttpOnly" in attributes and "SameSite=Lax" in attributes and "Path=/" in attributes
    assert f"Max-Age={10080 * 60}" in attributes  # session_expire_delay minutes
    assert "Secure" not in attributes  # the external URL is http
    [row] = _sessions(rt)
    assert row.user_id == alice.id
    assert row.digest == hashlib.sha256(secret.encode()).hexdigest() != secret
    page = web.get("/")
    assert page.status_code == 200 and "Your projects" in page.text and "alice" in page.text


def test_sign_in_with_email_and_redirect_back(web, users):
    bob = users.create("bob", email="Bob@Example.com")
    response = web.post("/users/sign_in", {"login": "bob@example.com", "password": bob.password,
                                           "redirect_to": "/u/bob"})  # fmt: skip
    assert response.status_code == 303 and response.headers["location"] == "/u/bob"


def test_redirect_after_sign_in_never_leaves_the_site(web, users):
    carol = users.create("carol")
    for target in ("//evil.example/x", "https://evil.example/", "/\\evil.example", "evil"):
        client = web.__class__(web.client)
        response = client.post("/users/sign_in", {"login": "carol", "password": carol.password, "redirect_to": target})
        assert response.headers["location"] == "/", target


def test_wrong_password_is_refused_without_a_session(web, users, rt):
    alice = users.create("alice")
    response = web.post("/users/sign_in", {"login": "alice", "password": "wrong-password"})
    assert response.status_code == 401
    assert "Invalid login or password" in response.text
    assert "codeyard_session" not in response.headers.get("set-cookie", "")
    assert _sessions(rt) == []
    assert web.post("/users/sign_in", {"login": "nobody", "password": alice.password}).status_code == 401


def test_blocked_user_cannot_sign_in(web, users, rt):
    users.create("mallory", state="blocked")
    response = web.post("/users/sign_in", {"login": "mallory", "password": "correct-horse-battery"})
    assert response.status_code == 401 and _sessions(rt) == []


def test_failures_are_throttled_with_the_api(web, users, api):
    alice = users.create("alice")
    for _ in range(10):
        assert web.post("/users/sign_in", {"login": "alice", "password": "wrong-password"}).status_code == 401
    refused = web.post("/users/sign_in", {"login": "alice", "password": alice.password})
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
    assert "codeyard_session" not in refused.headers.get("set-cookie", "")
    # The same throttle: the API refuses this account too.
    assert api.anonymous.post("/session", json={"login": "alice", "password": alice.password}).status_code == 429


def test_sign_out_ends_the_session_on_the_server(web, users, rt):
    alice = users.create("alice")
    web.sign_in(alice)
    secret = web.cookies["codeyard_session"]
    response = web.post("/users/sign_out")
    assert response.status_code == 303
    assert _sessions(rt) == []
    replay = web.__class__(web.client)
    replay.cookies.set("codeyard_session", secret)
    assert "Sign in" in replay.get("/").text and "Your projects" not in replay.get("/").text


def test_expired_and_blocked_sessions_count_as_anonymous(web, users, rt):
    alice = users.create("alice")
    web.sign_in(alice)
    assert "Your projects" in web.get("/").text
    with rt.db.transaction() as session:
        session.execute(update(WebSession).values(expires_at=WebSession.created_at))
    assert "Public projects" in web.get("/").text


def test_session_without_expiry_when_the_delay_is_zero(web, users, rt):
    alice = users.create("alice")
    web.get("/")  # creates the settings row
    with rt.db.transaction() as session:
        session.execute(update(ApplicationSetting).values(session_expire_delay=0))
    response = web.sign_in(alice)
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith("codeyard_session="))
    assert "Max-Age" not in cookie
    assert _sessions(rt)[0].expires_at is None


def test_forms_without_a_valid_token_change_nothing(web, users, rt, browser_for):
    alice = users.create("alice")
    assert web.post("/users/sign_in", {"login": "alice", "password": alice.password}, token=False).status_code == 403
    assert web.post("/users/sign_in", {"login": "alice", "password": alice.password}, token="0" * 64).status_code == 403
    assert _sessions(rt) == []
    signed = browser_for(alice)
    other = browser_for(users.create("bob"))
    stolen = other.form_token("/")
    assert signed.post("/users/sign_out", token=stolen).status_code == 403
    assert len(_sessions(rt)) == 2


def test_signin_disabled_hides_the_form_and_refuses(web, users, rt, api, admin):
    alice = users.create("alice")
    api.as_(admin).put("/application/settings", json={"signin_enabled": False})
    page = web.get("/users/sign_in")
    assert page.status_code == 200 and "disabled" in page.text and 'name="password"' not in page.text
    token = core.web_sessions.form_token(rt.secret_key, "visitor")
    web.cookies.set("codeyard_visitor", "visitor")
    response = web.post("/users/sign_in", {"login": "alice", "password": alice.password}, token=token)
    assert response.status_code == 401 and _sessions(rt) == []


def test_cookie_is_secure_when_the_external_url_is_https():
    ctx = types.SimpleNamespace(base_url="https://code.example", new_cookies=[])
    core.set_cookie(ctx, "codeyard_session", "x", 60)
    assert ctx.new_cookies == ["codeyard_session=x; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure"]


def test_pages_carry_security_headers_and_no_inline_script(web, users, projects):
    alice = users.create("alice")
    projects.create(alice, name="demo", visibility=20)
    web.sign_in(alice)
    for path in ("/", "/u/alice", "/alice/demo", "/alice/demo/merge_requests", "/no/such"):
        response = web.get(path)
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        assert "unsafe-inline" not in response.headers["content-security-policy"]
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["content-type"].startswith("text/html")
        scripts = [tag for tag in response.text.split("<script")[1:]]
        assert all(tag.lstrip().startswith("src=") for tag in scripts), path
        assert not EVENT_HANDLER.search(response.text), path
