"""v4 fixtures: `api4` (plain requests to /api/v4) and `gl` (python-gitlab 8 as a user)."""

from __future__ import annotations

import pytest

from ..support import ApiClient
from .client import client, gitlab8


@pytest.fixture
def api4(rt, _test_client) -> ApiClient:
    """In-process client of /api/v4; `api4.as_(user)` sends that user's token."""
    return ApiClient(_test_client, prefix="/api/v4")


@pytest.fixture
def gitlab(rt):
    """python-gitlab 8's `gitlab` module, in place of 1.4.0 for the test's duration."""
    with gitlab8() as module:
        yield module


@pytest.fixture
def gl(gitlab, _test_client):
    """`gl(user)`: a python-gitlab 8 client with USER's token (None: anonymous)."""

    def connect(user=None, **options):
        token = user if isinstance(user, str) or user is None else user.token
        return client(gitlab, _test_client, token, **options)

    return connect
