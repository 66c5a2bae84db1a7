"""Tags: a page of them, one, created and deleted through the API.

Creating or deleting a tag is a push of it: the caller's right is the push rule's
(`policies.branches.refusal`: creating needs push rights, deleting an existing tag administers the
project), and the change goes through `pushes.post_push` with a push journal, as branch creation
does (services/branches.py): tag push events and hooks follow as for a `git push`.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from ..db.models import Project
from ..errors import BadRequest, Forbidden, NotFound
from ..git import repo
from ..git import tags as git_tags
from ..git.refs import TAGS, ZERO_SHA, is_tag_name
from ..policies import branches as policy
from . import branches, push_journal
from .ref_updates import RefUpdate
from .repository import ProjectRef, path_of, reading

ORDERS = git_tags.ORDERS


def page(rt, project: ProjectRef, order_by: str, descending: bool, search: str | None, offset: int,
         limit: int) -> tuple[int, list[git_tags.TagInfo]]:  # fmt: skip
    """(how many tags match SEARCH, one window of them); an empty repository has none."""
    path = path_of(rt, project)
    with reading(project.id, "Repository"):
        return git_tags.window(path, order_by, descending, search, offset, limit)


def get(rt, project: ProjectRef, name: str) -> git_tags.TagInfo:
    """Tag NAME; 404 `404 Tag Not Found` without it."""
    with reading(project.id, "Tag"):
        found = git_tags.tag(path_of(rt, project), name)
    if found is None:
        raise NotFound("Tag")
    return found


def create(session: Session, rt, project: Project, user, access, name: str, ref: str, message: str | None) -> git_tags.TagInfo:
    """Tag NAME at REF as USER (the tagger of an annotated tag, made when MESSAGE is given),
    recorded as its push; 400 for a bad name or an existing tag, 404 for an unknown REF."""
    if not is_tag_name(name):
        raise BadRequest("Tag name invalid")
    if reason := policy.refusal(access, TAGS + name, ZERO_SHA, "", None, False):
        raise Forbidden(reason)
    path = path_of(rt, project)
    with reading(project.id, "Repository"):
        exists = git_tags.tag(path, name) is not None
    if exists:
        raise BadRequest(f"Tag {name} already exists")
    journal = push_journal.for_ref_moves(session, rt, project.id, user.id)
    with reading(project.id, "Repository"):
        try:
            created = git_tags.create(path, name, ref, message or None, (user.name, user.email))
        except repo.NotInRepository:
            raise BadRequest(f"Target {ref} is invalid") from None
        except FileExistsError:
            raise BadRequest(f"Tag {name} already exists") from None
    push_journal.record_moved(session, rt, journal, [RefUpdate(TAGS + name, ZERO_SHA, created.target)])
    return created


def delete(session: Session, rt, project: Project, user, access, name: str) -> None:
    """Delete tag NAME, recorded as its push; 404 without it, 403 for a caller who may not."""
    found = get(rt, project, name)
    if reason := policy.refusal(access, TAGS + name, found.target, ZERO_SHA, None, False):
        raise Forbidden(reason)
    branches.deleted_as_push(session, rt, project, user, TAGS + name, lambda: git_tags.delete(path_of(rt, project), name), "Tag")
