"""Tags: read with what API v4 shows of them (the tag object, its message and date), ordered and
searched, created (lightweight, or annotated with a tagger) and deleted.

User text never reaches a command line: names are checked (`refs.is_tag_name`), the target is
resolved to a commit first, and everything is done through libgit2. Takes a repository path and
plain values; no app imports.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import pygit2

from .branches import matches
from .refs import TAGS, is_tag_name
from .repo import CommitInfo, NotInRepository, commit_info, delete_ref, open_repository, resolve

ORDERS = ("name", "updated", "version")


@dataclass(frozen=True)
class TagInfo:
    name: str
    target: str  # the tag object's id (annotated) or the commit's (lightweight)
    commit: CommitInfo
    message: str | None  # an annotated tag's message
    created_at: dt.datetime | None  # an annotated tag's tagger date


def _read(repository: pygit2.Repository, name: str) -> TagInfo | None:
    ref = repository.references.get(TAGS + name)
    if ref is None:
        return None
    try:
        tip = ref.peel(pygit2.Commit)
    except (ValueError, pygit2.GitError):
        return None  # a tag of a tree or blob
    target = repository[ref.target]
    message, created = None, None
    if isinstance(target, pygit2.Tag):
        message = target.message
        if target.tagger is not None:
            zone = dt.timezone(dt.timedelta(minutes=target.tagger.offset))
            created = dt.datetime.fromtimestamp(target.tagger.time, zone)
    return TagInfo(name, str(ref.target), commit_info(tip), message, created)


def tag(path: Path, name: str) -> TagInfo | None:
    """Tag NAME, or None (missing, a name git would not take, or not of a commit)."""
    return _read(open_repository(path), name) if is_tag_name(name) else None


def _version_key(name: str) -> tuple:
    """`v1.10.0` after `v1.9.2`: runs of digits compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.findall(r"\d+|\D+", name))


def window(path: Path, order_by: str, descending: bool, search: str | None, offset: int, limit: int) -> tuple[int, list[TagInfo]]:
    """(how many tags match SEARCH, those of the window) in ORDER_BY's order. `name` and `version`
    read only the window's tags; `updated` (the commit's date) reads every matching tag's commit."""
    repository = open_repository(path)
    names = [ref[len(TAGS) :] for ref in repository.references if ref.startswith(TAGS)]
    names = [name for name in names if matches(name, search)]
    if order_by == "updated":
        found = [info for info in map(lambda name: _read(repository, name), names) if info is not None]
        found.sort(key=lambda info: (info.commit.committer.when, info.name), reverse=descending)
        return len(found), found[offset : offset + limit]
    key = _version_key if order_by == "version" else None
    names.sort(key=key, reverse=descending)
    page = [_read(repository, name) for name in names[offset : offset + limit]]
    return len(names), [info for info in page if info is not None]


def create(path: Path, name: str, ref: str, message: str | None, tagger: tuple[str, str] | None) -> TagInfo:
    """Tag NAME at the commit REF names: annotated with MESSAGE by TAGGER (name, e-mail) when a
    message is given, else lightweight. FileExistsError if the tag exists; NotInRepository for an
    unknown REF; ValueError for a name git would not take."""
    if not is_tag_name(name):
        raise ValueError(name)
    repository = open_repository(path)
    commit = resolve(repository, ref)
    if repository.references.get(TAGS + name) is not None:
        raise FileExistsError(name)
    try:
        if message:
            signature = pygit2.Signature(*tagger) if tagger else repository.default_signature
            repository.create_tag(name, commit.id, pygit2.enums.ObjectType.COMMIT, signature, message)
        else:
            repository.references.create(TAGS + name, commit.id)
    except pygit2.AlreadyExistsError:
        raise FileExistsError(name) from None
    created = _read(repository, name)
    if created is None:
        raise NotInRepository(name)
    return created


def delete(path: Path, name: str) -> str:
    """Delete tag NAME; the id it pointed at. KeyError if missing."""
    return delete_ref(path, TAGS + name, is_tag_name(name))
