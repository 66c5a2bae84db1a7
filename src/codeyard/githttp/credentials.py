"""Who a git client is: HTTP Basic credentials.

Accepted: `username:password`, `username:private token` (the token must be that user's),
`oauth2:<OAuth access token>`, `<any name>:<personal access token>` (as GitLab, whatever the user
name; its scopes decide what git may do: `credentials.GIT_READ_SCOPES`, `GIT_WRITE_SCOPES`), and
`gitlab-ci-token:<build token>` (a runner cloning the project of the build it runs: read only, that
project only, while the build runs). Blocked users and expired tokens count as nobody. Tokens are tried
first and are neither gated nor throttled; a password goes through `signin.check_password` (refused
when password sign-in is disabled, throttled, argon2 behind the gate). The token lookups are the
API's prepared statements.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from ..http.refusals import error_of
from ..services import credentials, identity, signin
from ..services.ci import queue
from ..services.outcomes import Refusal

BUILD_USERNAME = "gitlab-ci-token"


@dataclass(frozen=True)
class BuildCredential:
    """A running build's token: it may fetch its own project's repository, nothing else."""

    build_id: int
    project_id: int
    username: str = BUILD_USERNAME


class BadCredentials(Exception):
    """Credentials were given and are wrong: the client must be asked again (401)."""


def parse_basic(header: str | None) -> tuple[str, str] | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise BadCredentials() from None
    username, sep, secret = decoded.partition(":")
    if not sep or not username or not secret:
        raise BadCredentials()
    return username, secret


async def user_for(rt, header: str | None, address: str):
    """The active user the Authorization header names, None when it names nobody or a blocked user
    (both anonymous). Raises BadCredentials when credentials are present but do not fit."""
    parsed = parse_basic(header)
    if parsed is None:
        return None
    username, secret = parsed
    if username == BUILD_USERNAME:
        build = queue.running_build_for_token(rt.db, secret)
        if build is None:
            raise BadCredentials()
        return BuildCredential(build.id, build.project_id)
    if username == "oauth2":
        user = identity.user_by_token(rt.db, secret, credentials.OAUTH)
    else:
        user = identity.user_by_token(rt.db, secret, credentials.PRIVATE)
        if user is not None and user.token_kind == credentials.PRIVATE and user.username.lower() != username.lower():
            user = None
        if user is None:
            candidate = await signin.check_password(rt, username, secret, address)
            if isinstance(candidate, Refusal):
                raise error_of(candidate) if candidate.reason in signin.FOR_LOAD else BadCredentials()
            user = identity.user_by_id(rt.db, candidate.id)
    if user is None:
        raise BadCredentials()
    return user if user.state == "active" else None
