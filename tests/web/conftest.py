"""Fixtures of the page tests: a browser-like client (cookies, form tokens) per test."""

from __future__ import annotations

import re

import httpx
import pytest
from starlette.testclient import TestClient

from codeyard.services import signin, web_sessions

# A real runner process and pushes over HTTP, for the browser test that watches a build run.
from ..ci.conftest import git, owner, project, pusher, runner, start_runner  # noqa: F401
from .browser import Browser, find_chromium

TOKEN = re.compile(r'name="authenticity_token" value="([0-9a-f]+)"')


class WebClient:
    """Pages as a browser sees them: its own cookies, no redirects followed, form tokens filled in.
    Every WebClient of the session shares one TestClient (one portal thread, so one database
    connection per thread, as in a server); each swaps its own cookie jar in for its requests."""

    def __init__(self, client: TestClient):
        self.client = client
        self.cookies = httpx.Cookies()

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        self.client.cookies = self.cookies
        try:
            return self.client.request(method, path, follow_redirects=False, **kwargs)
        finally:
            self.cookies = httpx.Cookies(self.client.cookies)
            self.client.cookies = httpx.Cookies()

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def form_token(self, page: str = "/users/sign_in") -> str:
        found = TOKEN.search(self.get(page).text)
        assert found, f"no form on {page}"
        return found.group(1)

    def post(self, path: str, data: dict | None = None, token: str | None = None, **kwargs) -> httpx.Response:
        fields = dict(data or {})
        if token is not False:
            fields.setdefault("authenticity_token", token or self.form_token(self._form_page()))
        return self.request("POST", path, data=fields, **kwargs)

    def _form_page(self) -> str:
        return "/" if self.signed_in else "/users/sign_in"

    @property
    def signed_in(self) -> bool:
        return bool(self.cookies.get("codeyard_session"))

    def sign_in(self, user, login: str | None = None) -> httpx.Response:
        response = self.post("/users/sign_in", {"login": login or user.username, "password": user.password})
        assert response.status_code == 303, response.text
        return response


@pytest.fixture
def browser():
    """A headless Chromium at desktop width (the tests asking for it are marked NEEDS_BROWSER)."""
    opened = Browser(find_chromium())
    yield opened
    opened.close()


@pytest.fixture
def web(rt, _test_client) -> WebClient:
    return WebClient(_test_client)


@pytest.fixture
def browser_for(rt, _test_client):
    """WebClients signed in as the given users (None: anonymous); the session is opened through the
    service directly (the sign-in form itself is tested in test_sign_in)."""

    def make(user=None) -> WebClient:
        client = WebClient(_test_client)
        if user is not None:
            checked = signin.login_candidate(rt.db, user.username)  # as if its password was checked
            with rt.db.transaction() as session:
                _row, secret = web_sessions.start(session, checked)
            client.cookies.set("codeyard_session", secret)
        return client

    return make
