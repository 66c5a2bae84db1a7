"""After a push: the one entry point every consequence of a push goes through.

The git transport (and the branches and files API, whose changes are pushes too) calls `post_push`
once per push, after the refs changed, inside a short transaction, through the push's journal
(services/push_journal.py), which makes it happen once even when the process dies first. Its work is
bounded: at most 20 commits are described per ref and the commit count stops at `COUNT_BOUND`.
Anything slower belongs in a background job that a step enqueues (jobs/).

Its steps are the explicit list `STEPS`, run in order (a capability that reacts to pushes, such
as CI, adds its step there, not by registering itself when imported):
1. the first pushed branch becomes the project's default branch (master when it is among them)
   and the repository HEAD; the instance's `default_branch_protection` then protects it;
2. GitLab's push (or tag push) payload is built for each ref;
3. one `pushed new` / `pushed to` / `deleted` event per ref, with that payload as data;
4. one webhook delivery per hook whose flag is on, enqueued as a job in this transaction;
5. when open merge requests come from or go into a pushed branch, a job is enqueued that moves
   their head refs and computes their merge status again, outside this transaction; an automatic
   merge set on a request from a pushed branch is aborted here unless the push keeps what was
   approved (`merge_requests.reactions.after_push`);
6. a CI pipeline for each pushed branch or tag whose commit has a .gitlab-ci.yml, with its first
   stage's builds pending for the runners (services/ci/pipelines.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import Session

from ..db.hooks import on_commit
from ..db.models import Project
from ..entities import pushes as entities
from ..entities.common import View
from ..git import repo, storage
from ..git.refs import HEADS, TAGS, ZERO_SHA
from . import events, protected_branches, webhooks
from . import settings as settings_service
from .ci import pipelines
from .merge_requests import reactions
from .ref_updates import RefUpdate

MAX_COMMITS = 20
COUNT_BOUND = 100_000


@dataclass
class Push:
    """One push as the steps see it; `payloads` (one per update) are filled by `describe`."""

    project: Project
    user: object
    updates: list[RefUpdate]
    path: Path
    view: View
    payloads: list[dict] = field(default_factory=list)


def post_push(session: Session, rt, project: Project, user, updates: list[RefUpdate]) -> list[dict]:
    """Record the push; returns the payload built for each update."""
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    push = Push(project, user, updates, path, rt.view())
    for step in STEPS:
        step(session, rt, push)
    return push.payloads


def default_branch_step(session: Session, rt, push: Push) -> None:
    adopt_default_branch(session, rt, push.project, push.path, push.updates)


def describe(session: Session, rt, push: Push) -> None:
    push.payloads = [push_payload(push.view, push.path, push.project, push.user, update) for update in push.updates]


def record_events(session: Session, rt, push: Push) -> None:
    for payload in push.payloads:
        events.record(session, push.project, push.user.id, events.PUSHED, data=payload)


def call_hooks(session: Session, rt, push: Push) -> None:
    fired = [("tag_push_events" if p["object_kind"] == "tag_push" else "push_events", p) for p in push.payloads]
    webhooks.trigger_all(session, push.project.id, fired)


def merge_request_heads(session: Session, rt, push: Push) -> None:
    reactions.after_push(session, rt, push.project, push.user, {u.branch: u.after for u in push.updates if u.branch})


def ci_pipelines(session: Session, rt, push: Push) -> None:
    pipelines.after_push(session, push.project, push.user, push.path, push.updates)


STEPS = (default_branch_step, describe, record_events, call_hooks, merge_request_heads, ci_pipelines)


def adopt_default_branch(session: Session, rt, project: Project, path, updates: list[RefUpdate]) -> None:
    """A project without a (living) default branch takes the first pushed branch, master first."""
    existing = repo.branch_names(path)
    if project.default_branch is not None and project.default_branch in existing:
        return
    created = [u.branch for u in updates if u.branch and u.before == ZERO_SHA and u.after != ZERO_SHA]
    if not created:
        return
    chosen = "master" if "master" in created else created[0]
    project.default_branch = chosen
    on_commit(session, lambda: repo.set_head_branch(path, chosen))
    level = settings_service.load(session).default_branch_protection
    if level > 0 and chosen not in protected_branches.protections(session, project):
        protected_branches.protect(session, project, chosen, level == 1)


def push_payload(view: View, path, project: Project, user, update: RefUpdate) -> dict:
    """GitLab's push (or tag push) payload for one updated ref, from what the repository says."""
    tag = update.ref.startswith(TAGS)
    commits: list[repo.CommitInfo] = []
    total = 0
    checkout_sha = message = None
    if update.after != ZERO_SHA:
        if tag:
            checkout_sha, message = repo.tag_target(path, update.ref[len(TAGS) :])
            if checkout_sha is not None:
                commits, total = [repo.commit(path, checkout_sha)], 1
        else:
            checkout_sha = update.after
            found = repo.pushed_commits(path, update.after, _hidden(project, update), keep=MAX_COMMITS, bound=COUNT_BOUND)
            commits, total = found.commits, found.total
    described = [entities.commit_hash(view, project, info, repo.changed_paths(path, info.id)) for info in commits]
    return entities.push_payload(
        view, project, user, update, tag=tag, commits=described, total=total, checkout_sha=checkout_sha, message=message
    )


def _hidden(project: Project, update: RefUpdate) -> list[str]:
    """What the commits of a branch update are counted from: the old tip, or for a new branch the
    default branch (nothing when the new branch is the default branch: its whole history is new)."""
    if update.before != ZERO_SHA:
        return [update.before]
    if project.default_branch and project.default_branch != update.branch:
        return [HEADS + project.default_branch]
    return []
