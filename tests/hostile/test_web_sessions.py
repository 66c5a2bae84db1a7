"""Web sessions that outlive what they stood for: a password changed by an admin (or any path that
sets one) ends every web session of the user; a block ends them for good, so unblocking brings
none back. Private tokens are kept (as GitLab keeps personal access tokens).

The flow is a browser's: sign in through the form, keep the cookie, then an admin changes the
user through the API, then the old cookie counts as nobody."""

from __future__ import annotations

import threading

import httpx
import pytest
from sqlalchemy import func, select, text

from codeyard.db.models import User, WebSession
from codeyard.services import signin, web_sessions
from codeyard.services import users as user_service
from codeyard.services.outcomes import Refusal

from ..ci.conftest import wait_for
from ..web.conftest import WebClient

NEW_PASSWORD = "a-brand-new-password"


@pytest.fixture
def browser(rt, _test_client):
    """Browsers sharing the test client, each with its own cookies."""
    return lambda: WebClient(_test_client)


def sessions_of(rt, user) -> int:
    with rt.db.session() as session:
        return session.scalar(select(func.count()).select_from(WebSession).where(WebSession.user_id == user.id))


def signed_in_as(client: WebClient, user) -> bool:
    """Whether CLIENT's cookie signs USER in: the sign-in form sends a signed-in caller on (303) and
    the start page lists their own projects; a private project of theirs is readable."""
    form = client.get("/users/sign_in")
    home = client.get("/")
    assert form.status_code in (200, 303) and home.status_code == 200
    if form.status_code == 303:
        assert "Your projects" in home.text and user.username in home.text
        return True
    assert "Sign in" in home.text and "Your projects" not in home.text
    return False


@pytest.fixture
def private_page(projects, alice):
    """The path of a private project of alice's: 200 to her, 404 to anybody else."""
    project = projects.create(alice, visibility=0)
    return f"/{project.path_with_namespace}"


def test_an_admins_password_change_ends_every_web_session(rt, api, admin, alice, browser, private_page):
    laptop, phone = browser(), browser()
    laptop.sign_in(alice)
    phone.sign_in(alice)
    assert signed_in_as(laptop, alice) and signed_in_as(phone, alice)
    assert laptop.get(private_page).status_code == 200
    assert sessions_of(rt, alice) == 2

    changed = api.as_(admin).put(f"/users/{alice.id}", json={"password": NEW_PASSWORD})
    assert changed.status_code == 200

    for old in (laptop, phone):
        assert not signed_in_as(old, alice)
        assert old.get(private_page).status_code == 404
        assert old.get(f"{private_page}/merge_requests/1").status_code == 404
    assert sessions_of(rt, alice) == 0
    # Tokens are kept: only browser sessions end.
    assert api.as_(alice).get("/user").status_code == 200
    # The old password no longer signs in; the new one does.
    again = browser()
    assert again.post("/users/sign_in", {"login": "alice", "password": alice.password}).status_code == 401
    assert again.post("/users/sign_in", {"login": "alice", "password": NEW_PASSWORD}).status_code == 303
    assert signed_in_as(again, alice) and again.get(private_page).status_code == 200


def test_an_edit_without_a_password_keeps_the_sessions(rt, api, admin, alice, browser):
    laptop = browser()
    laptop.sign_in(alice)
    assert api.as_(admin).put(f"/users/{alice.id}", json={"name": "Alice Liddell"}).status_code == 200
    assert signed_in_as(laptop, alice) and sessions_of(rt, alice) == 1


def test_a_block_ends_web_sessions_for_good(rt, api, admin, alice, users, browser, private_page):
    bob = users.create("bob")
    laptop, bystander = browser(), browser()
    laptop.sign_in(alice)
    bystander.sign_in(bob)
    assert signed_in_as(laptop, alice)

    assert api.as_(admin).put(f"/users/{alice.id}/block").json() is True
    assert not signed_in_as(laptop, alice) and laptop.get(private_page).status_code == 404
    assert sessions_of(rt, alice) == 0

    assert api.as_(admin).put(f"/users/{alice.id}/unblock").json() is True
    assert not signed_in_as(laptop, alice), "unblocking brought an old session back"
    assert laptop.get(private_page).status_code == 404
    assert signed_in_as(bystander, bob)  # nobody else's session ended

    again = browser()
    again.sign_in(alice)
    assert signed_in_as(again, alice) and again.get(private_page).status_code == 200


def test_a_sign_in_checked_against_a_password_changed_meanwhile_opens_no_session(rt, api, admin, alice):
    """The password is checked outside any transaction; the session is opened after. A change
    committed in between must not leave a session of the old password behind."""
    checked = signin.login_candidate(rt.db, "alice")  # what check_password returns
    assert api.as_(admin).put(f"/users/{alice.id}", json={"password": NEW_PASSWORD}).status_code == 200
    with rt.db.transaction() as session:
        assert web_sessions.start(session, checked) == Refusal(signin.SignInRefused.WRONG_CREDENTIALS)
    assert sessions_of(rt, alice) == 0


def test_a_sign_in_waiting_on_a_password_change_sees_the_new_password(rt, alice):
    """PostgreSQL runs both transactions at once: the sign-in's read of the user waits for the
    change's row lock and then sees the new password (SQLite runs one writer at a time)."""
    if rt.db.is_sqlite:
        pytest.skip("SQLite's write transactions do not overlap")
    checked = signin.login_candidate(rt.db, "alice")
    digest = rt.passwords.hash(NEW_PASSWORD)
    outcome = []

    def sign_in():
        with rt.db.transaction() as session:
            started = web_sessions.start(session, checked)
        outcome.append(started.reason if isinstance(started, Refusal) else "opened")

    with rt.db.transaction() as change:
        user_service.update(change, change.get(User, alice.id), {}, digest)  # written, not committed
        changer = change.execute(text("SELECT pg_backend_pid()")).scalar()
        thread = threading.Thread(target=sign_in)
        thread.start()
        wait_for(lambda: blocked_by(rt, changer), "the sign-in to wait for the change's lock")
    thread.join(60)
    assert outcome == [signin.SignInRefused.WRONG_CREDENTIALS] and sessions_of(rt, alice) == 0


def blocked_by(rt, pid: int) -> bool:
    with rt.db.engine.connect() as connection:
        query = "SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"
        return connection.execute(text(query), {"pid": pid}).scalar() > 0


# --- across processes: a server process keeps nothing of the old session --------------------------


def live_browser(live) -> httpx.Client:
    return httpx.Client(base_url=live.base_url, follow_redirects=False, timeout=30)


def live_sign_in(client: httpx.Client, login: str, password: str) -> None:
    form = client.get("/users/sign_in")
    token = form.text.split('name="authenticity_token" value="', 1)[1].split('"', 1)[0]
    response = client.post("/users/sign_in", data={"login": login, "password": password, "authenticity_token": token})
    assert response.status_code == 303, response.text


def live_signed_in(live, cookie: str) -> list[int]:
    """GET /users/sign_in with COOKIE on fresh connections: 303 while it signs someone in, 200
    (the form) otherwise."""
    statuses = []
    for _ in range(4):
        with live_browser(live) as client:
            client.cookies.set("codeyard_session", cookie)
            statuses.append(client.get("/users/sign_in").status_code)
    return statuses


@pytest.mark.both_backends
@pytest.mark.parametrize("change", ["password", "block"])
def test_a_change_made_by_another_process_ends_the_session_in_the_server(live, api, admin, alice, change):
    """The browser's session lives in the server process; the admin's change is made by this test's
    own process (its in-process app), as another server process would make it."""
    with live_browser(live) as client:
        live_sign_in(client, "alice", alice.password)
        cookie = client.cookies["codeyard_session"]
    assert live_signed_in(live, cookie) == [303] * 4
    if change == "password":
        response = api.as_(admin).put(f"/users/{alice.id}", json={"password": NEW_PASSWORD})
    else:
        response = api.as_(admin).put(f"/users/{alice.id}/block")
        assert live_signed_in(live, cookie) == [200] * 4
        response = api.as_(admin).put(f"/users/{alice.id}/unblock")
    assert response.status_code == 200
    assert live_signed_in(live, cookie) == [200] * 4
