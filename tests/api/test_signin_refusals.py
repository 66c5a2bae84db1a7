"""Why a password sign-in is refused (`signin.SignInRefused`), and how each edge answers a reason.

The HTTP answers themselves are held by test_session.py, hostile/test_passwords.py and
web/test_sign_in.py; this holds the reasons, and the edges' answers those do not reach."""

from __future__ import annotations

import asyncio

import pytest

from codeyard.db.models import ApplicationSetting, User
from codeyard.errors import TooManyRequests, Unauthorized, Unavailable
from codeyard.http.refusals import error_of
from codeyard.services import credentials, signin
from codeyard.services import settings as settings_service
from codeyard.services.outcomes import Refusal
from codeyard.services.passwords import PasswordGate
from codeyard.services.signin import SignInRefused

ADDRESS = "198.51.100.40"


def check(rt, login: str, password: str, address: str = ADDRESS):
    return asyncio.run(signin.check_sign_in(rt, login, password, address))


def set_state(rt, user_id: int, state: str) -> None:
    with rt.db.transaction() as session:
        session.get(User, user_id).state = state


def disable_sign_in(rt) -> None:
    with rt.db.transaction() as session:
        settings_service.load(session)  # the row exists from here on
        session.get(ApplicationSetting, settings_service.SETTINGS_ID).signin_enabled = False


def test_the_check_says_why_it_refuses(rt, users):
    alice = users.create("alice")
    assert check(rt, "alice", "wrong-password") == Refusal(SignInRefused.WRONG_CREDENTIALS)
    assert check(rt, "nobody", alice.password) == Refusal(SignInRefused.WRONG_CREDENTIALS)
    assert check(rt, "alice", alice.password).id == alice.id
    set_state(rt, alice.id, "blocked")
    assert check(rt, "alice", alice.password) == Refusal(SignInRefused.NOT_ACTIVE)
    assert asyncio.run(signin.check_password(rt, "alice", alice.password, ADDRESS)).id == alice.id  # git's check
    disable_sign_in(rt)
    assert check(rt, "alice", alice.password) == Refusal(SignInRefused.DISABLED)


def test_a_throttled_check_carries_the_seconds_to_wait(rt, users):
    alice = users.create("alice")
    for _ in range(rt.password_throttle.limit):
        rt.password_throttle.record_failure(alice.id, "203.0.113.40")
    refusal = check(rt, "alice", alice.password)
    assert refusal.reason is SignInRefused.THROTTLED and 1 <= int(refusal.detail) <= 60


def test_a_full_gate_refuses_before_any_lookup(rt, users, monkeypatch):
    users.create("alice")
    gate = PasswordGate(credentials.PasswordHasher(time_cost=1, memory_kib=1024, parallelism=1), workers=1, queue=0)
    monkeypatch.setattr(rt, "password_gate", gate)
    monkeypatch.setattr(signin, "login_candidate", lambda db, login: pytest.fail("looked up"))
    try:
        with gate.admission() as admitted:
            assert admitted
            assert check(rt, "alice", "any-password") == Refusal(SignInRefused.BUSY, "1")
    finally:
        gate.close()


def test_signing_in_refuses_what_changed_since_the_check(rt, users):
    alice = users.create("alice")
    set_state(rt, alice.id, "blocked")
    with rt.db.transaction() as session:
        assert signin.signing_in(session, alice.id) == Refusal(SignInRefused.NOT_ACTIVE)
        assert signin.complete_sign_in(session, alice.id, credentials.PRIVATE, "s") == Refusal(SignInRefused.NOT_ACTIVE)
    set_state(rt, alice.id, "active")
    disable_sign_in(rt)
    with rt.db.transaction() as session:
        assert signin.complete_sign_in(session, alice.id, credentials.PRIVATE, "s") == Refusal(SignInRefused.DISABLED)


def test_the_api_answers_each_reason():
    for reason in (SignInRefused.DISABLED, SignInRefused.WRONG_CREDENTIALS, SignInRefused.NOT_ACTIVE):
        error = error_of(Refusal(reason))
        assert type(error) is Unauthorized and error.message == "401 Unauthorized" and error.headers == {}
    throttled = error_of(Refusal(SignInRefused.THROTTLED, "17"))
    assert type(throttled) is TooManyRequests and throttled.headers == {"retry-after": "17"}
    assert throttled.message == "429 Too Many Requests - too many failed password attempts"
    busy = error_of(Refusal(SignInRefused.BUSY, "1"))
    assert type(busy) is Unavailable and busy.headers == {"retry-after": "1"}
    assert busy.message == "too many password checks at once"


def test_oauth_answers_a_throttled_grant_as_the_api_does(rt, api, users):
    alice = users.create("alice")
    for _ in range(rt.password_throttle.limit):
        rt.password_throttle.record_failure(alice.id, "203.0.113.41")
    data = {"grant_type": "password", "username": "alice", "password": alice.password}
    response = api.client.post("/oauth/token", data=data)
    assert response.status_code == 429
    assert response.json() == {"message": "429 Too Many Requests - too many failed password attempts"}
    assert 1 <= int(response.headers["retry-after"]) <= 60
    set_state(rt, alice.id, "blocked")
    rt.password_throttle.forget_account(alice.id)
    refused = api.client.post("/oauth/token", data=data)
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_grant"
