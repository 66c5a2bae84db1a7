"""Runners: registration with a registration token, the runner's own token, deletion.

A runner registers with the instance's registration token (a shared runner: it may run builds of
every project with shared runners enabled) or with a project's runners token (a specific runner,
assigned to that project). It gets a token of its own, shown once; only its digest is stored, and
every later call of the runner protocol names the runner by it.

The registration token is set on first use: CODEYARD_RUNNER_TOKEN when the operator gave one, else
derived from the server's secret key and a nonce kept in the settings (like a project's runners
token), so that `codeyard admin runner-token` can print it again while only its digest is stored.
"""

from __future__ import annotations

import datetime as dt
import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import Integer, String, bindparam, select, update
from sqlalchemy.orm import Session

from ...db.models import ApplicationSetting, Project, Runner, RunnerProject, utcnow
from ...db.models.base import UtcDateTime
from ...errors import Forbidden
from .. import credentials
from .. import settings as settings_service

INFO_FIELDS = ("name", "version", "revision", "platform", "architecture")
MAX_TAGS = 50
# How stale `contacted_at` may get before a request of the runner writes it again: a poll every few
# seconds must not be a write every few seconds.
CONTACT_INTERVAL = dt.timedelta(seconds=60)

_runners = Runner.__table__
RUNNER_BY_TOKEN = select(
    _runners.c.id, _runners.c.active, _runners.c.is_shared, _runners.c.tag_list, _runners.c.contacted_at,
    *(_runners.c[name] for name in INFO_FIELDS),
).where(_runners.c.token_digest == bindparam("digest"))  # fmt: skip
_projects = Project.__table__
PROJECT_BY_RUNNERS_TOKEN = select(_projects.c.id).where(_projects.c.runners_token_digest == bindparam("digest"))


# --- the registration token -----------------------------------------------------------------------


def registration_token(session: Session, rt, reset: bool = False) -> str | None:
    """The instance's registration token, set up on first use; None when it came from
    CODEYARD_RUNNER_TOKEN (it is not stored, so it cannot be shown). RESET issues a new one."""
    settings = settings_service.load(session)
    if settings.runners_registration_token_digest is None and not reset:
        given = rt.config.runner_token
        if given:
            settings.runners_registration_token_digest = credentials.digest(given)
            session.flush()
            return None
        reset = True
    if reset:
        settings.runners_registration_token_nonce = secrets.token_hex(16)
        token = _derived(rt, settings)
        settings.runners_registration_token_digest = credentials.digest(token)
        session.flush()
        return token
    if settings.runners_registration_token_nonce is None:
        return None
    return _derived(rt, settings)


def _derived(rt, settings: ApplicationSetting) -> str:
    return credentials.derived_secret(rt.secret_key, f"runners-registration-token:{settings.runners_registration_token_nonce}")


# --- registration ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Registered:
    runner: Runner
    token: str


def parse_tags(tag_list) -> list[str]:
    """`"a, b"` (GitLab's form) or a list: distinct non-empty names in order, at most MAX_TAGS."""
    items = tag_list.split(",") if isinstance(tag_list, str) else list(tag_list or [])
    tags: list[str] = []
    for item in items:
        name = str(item).strip()
        if name and name not in tags:
            tags.append(name)
    return tags[:MAX_TAGS]


def register(session: Session, rt, token: str, description: str | None, tag_list, info: dict) -> Registered:
    """A new runner for TOKEN: shared for the registration token, specific for a project's runners
    token; 403 for anything else."""
    digest = credentials.digest(token)
    project_id = session.scalar(select(Project.id).where(Project.runners_token_digest == digest))
    shared = project_id is None and _is_registration_token(session, rt, digest)
    if project_id is None and not shared:
        raise Forbidden()
    secret = credentials.new_secret()
    runner = Runner(
        token_digest=credentials.digest(secret),
        description=description,
        tag_list=parse_tags(tag_list),
        is_shared=shared,
        active=True,
        contacted_at=None,
        **{name: info.get(name) for name in INFO_FIELDS},
    )
    session.add(runner)
    session.flush()
    if project_id is not None:
        session.add(RunnerProject(runner_id=runner.id, project_id=project_id))
        session.flush()
    return Registered(runner, secret)


def _is_registration_token(session: Session, rt, digest: str) -> bool:
    registration_token(session, rt)  # set up on first use
    stored = settings_service.load(session).runners_registration_token_digest
    return stored is not None and hmac.compare_digest(stored, digest)


def find(session: Session, token: str) -> Runner | None:
    return session.scalar(select(Runner).where(Runner.token_digest == credentials.digest(token)))


def delete(session: Session, token: str) -> Runner:
    """Remove the runner TOKEN names (403 when none): its assignments go with it, its builds keep
    their history without it."""
    runner = find(session, token)
    if runner is None:
        raise Forbidden()
    session.delete(runner)
    session.flush()
    return runner


# --- the runner behind a protocol request ---------------------------------------------------------


def lookup(db, token) -> object | None:
    """The runner row (id, active, is_shared, tag_list, contacted_at, info) for TOKEN, or None: one
    prepared indexed query outside any transaction, as every poll asks it."""
    if not isinstance(token, str) or not token:
        return None
    return db.fast_first(RUNNER_BY_TOKEN, {"digest": credentials.digest(token)})


CONTACTED = (
    update(_runners)
    .where(_runners.c.id == bindparam("runner", type_=Integer))
    .values(
        contacted_at=bindparam("now", type_=UtcDateTime),
        updated_at=bindparam("now", type_=UtcDateTime),
        **{name: bindparam(f"info_{name}", type_=String) for name in INFO_FIELDS},
    )
)


def contact(db, runner, info: dict) -> None:
    """Record that RUNNER called: `contacted_at` when it is older than CONTACT_INTERVAL, and its
    info when it changed; nothing is written otherwise. Its own short transaction on the fast
    connection, committed at once (a poll that gets nothing still leaves it recorded)."""
    changed = any(name in info and info[name] != getattr(runner, name) for name in INFO_FIELDS)
    now = utcnow()
    if runner.contacted_at is None or now - runner.contacted_at >= CONTACT_INTERVAL or changed:
        values = {f"info_{name}": info.get(name, getattr(runner, name)) for name in INFO_FIELDS}
        with db.fast_write() as transaction:
            transaction.rowcount(CONTACTED, {"runner": runner.id, "now": now, **values})
