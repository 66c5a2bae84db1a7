"""Reading a project's repository for the API: commits, trees, files; git errors become API errors.

The reads take a `ProjectRef`: the project's model, or the entity row a guard or a page already
read (`services.project_reads`), so a read needs no session.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ..errors import BadRequest, NotFound, RepositoryUnavailable, Unavailable
from ..git import content, diffs, history, repo, storage

log = logging.getLogger("codeyard.repository")


class ProjectRef(Protocol):
    """What the reads use of a project: a `db.models.Project` or a `project_reads` row."""

    @property
    def id(self) -> int: ...

    @property
    def head_branch(self) -> str: ...


def path_of(rt, project: ProjectRef) -> Path:
    return path_by_id(rt, project.id)


def path_by_id(rt, project_id: int) -> Path:
    return storage.repository_path(rt.config.repositories_dir, project_id)


@contextmanager
def reading(project_id: int, missing: str):
    """Translate git errors: an unknown name is 404 `404 <missing> Not Found`; an unreadable
    repository (of the project PROJECT_ID) is a logged 500."""
    try:
        yield
    except repo.NotInRepository:
        raise NotFound(missing) from None
    except repo.RepositoryUnavailable:
        log.error("repository of project %s is missing or damaged", project_id)
        raise RepositoryUnavailable() from None
    except history.TooSlow:
        log.warning("a history read of project %s ran past its deadline", project_id)
        raise Unavailable("503 The repository took too long to answer, try again later") from None


def commits(rt, project: ProjectRef, ref: str | None, offset: int, limit: int) -> tuple[int, list[repo.CommitInfo]]:
    """(total, one page) of the commits REF reaches, newest first; an empty repository has none."""
    path = path_of(rt, project)
    ref = ref or project.head_branch
    if not repo.branch_names(path) and ref == project.head_branch:
        with reading(project.id, "Repository"):
            repo.open_repository(path)
        return 0, []
    with reading(project.id, "Commit"):
        return repo.count_commits(path, ref), repo.log(path, ref, offset, limit)


def commit(rt, project: ProjectRef, sha: str) -> repo.CommitInfo:
    return commit_by_id(rt, project.id, sha)


def commit_by_id(rt, project_id: int, sha: str) -> repo.CommitInfo:
    """The commit SHA (a revision) names in project PROJECT_ID's repository; 404 `404 Commit Not Found`."""
    with reading(project_id, "Commit"):
        return repo.commit(path_by_id(rt, project_id), sha)


def contributors(rt, project: ProjectRef) -> list[repo.Contributor]:
    """Authors of the default branch (its newest 2000 non-merge commits); none in an empty repository."""
    path = path_of(rt, project)
    if not repo.branch_names(path):
        with reading(project.id, "Repository"):
            repo.open_repository(path)
        return []
    with reading(project.id, "Repository"):
        return repo.contributors(path, project.head_branch)


def archive_source(rt, project: ProjectRef, ref: str | None) -> tuple[Path, str]:
    """(repository path, commit SHA) to archive: REF, or the default branch's tip."""
    path = path_of(rt, project)
    with reading(project.id, "Commit" if ref else "Repository"):
        return path, repo.commit_id(path, ref or project.head_branch)


def commit_diff(rt, project: ProjectRef, sha: str) -> list[diffs.FileDiff]:
    with reading(project.id, "Commit"):
        return diffs.commit_diff(path_of(rt, project), sha)


def compare(rt, project: ProjectRef, base: str, head: str, straight: bool = False) -> diffs.Comparison:
    """The commits HEAD has that BASE has not and the diff from their merge base to HEAD, or, when
    STRAIGHT, from BASE to HEAD directly (v4's `straight=true`)."""
    with reading(project.id, "Commit"):
        found = diffs.compare(path_of(rt, project), base, head, files=not straight)
        if straight and not found.timed_out:
            found = replace(found, diffs=history.straight_diff(path_of(rt, project), base, head))
    if found.timed_out:
        log.warning("comparing %s...%s in project %s timed out", base, head, project.id)
    return found


def tree(rt, project: ProjectRef, ref: str | None, subpath: str) -> list[repo.TreeEntry]:
    with reading(project.id, "Tree"):
        return repo.tree(path_of(rt, project), ref or project.head_branch, subpath)


def file_blob(rt, project: ProjectRef, ref: str, file_path: str) -> content.Blob:
    """The file's blob at REF, sized, not read."""
    with reading(project.id, "File"):
        return content.file_at(path_of(rt, project), ref, file_path)


def file_at(rt, project: ProjectRef, ref: str, file_path: str) -> tuple[content.Blob, str | None]:
    """The file's blob (sized, not read) and the last commit that changed it."""
    found = file_blob(rt, project, ref, file_path)
    with reading(project.id, "File"):
        return found, repo.last_commit_for(path_of(rt, project), ref, file_path)


def blob(rt, project: ProjectRef, sha: str) -> content.Blob:
    with reading(project.id, "Blob"):
        return content.blob_by_id(path_of(rt, project), sha)


def blob_content(rt, project: ProjectRef, found: content.Blob) -> bytes:
    """The whole content of a blob small enough to hold (see `content.Blob.streamed`)."""
    with reading(project.id, "Blob"):
        return content.read(found)


def blob_chunks(found: content.Blob, encoded: bool = False) -> AsyncIterator[bytes]:
    """The blob's bytes streamed from git, base64 encoded if ENCODED (for JSON)."""
    chunks = content.chunks(found)
    return content.base64_chunks(chunks) if encoded else chunks


def split_ref(rt, project: ProjectRef, text: str) -> tuple[str, str]:
    """(ref, path) of a web page's `<ref>/<path>`; 404 when no leading part names a commit."""
    with reading(project.id, "Ref"):
        return repo.split_ref(path_of(rt, project), text)


def tags(rt, project: ProjectRef, offset: int, limit: int) -> tuple[int, list[repo.Tag]]:
    with reading(project.id, "Repository"):
        return repo.tags(path_of(rt, project), offset, limit)


README_NAMES = ("readme.md", "readme.markdown", "readme", "readme.txt", "readme.rst")


@dataclass(frozen=True)
class Overview:
    """What a project's page shows of its repository (empty: nothing pushed yet)."""

    empty: bool
    last_commit: repo.CommitInfo | None = None
    entries: tuple[repo.TreeEntry, ...] = ()
    readme: tuple[str, bytes | None] | None = None  # (name, content; None when too big to show)
    readme_id: str | None = None  # the README's blob id: what its rendering is kept by


def default_tip(rt, project: ProjectRef) -> str | None:
    """The commit id at the tip of the default branch; None before anything was pushed to it."""
    with reading(project.id, "Repository"):
        return repo.branch_id(path_of(rt, project), project.head_branch)


def overview(rt, project: ProjectRef, tip: str | None) -> Overview:
    """The last commit (TIP, the default branch's `default_tip`), its top directory and README
    (read only when small). All of it depends on TIP only."""
    if tip is None:
        return Overview(empty=True)
    path = path_of(rt, project)
    with reading(project.id, "Repository"):
        last = repo.commit(path, tip)
        entries = repo.tree(path, tip)
        readme = readme_id = None
        by_name = {entry.name.lower(): entry for entry in entries if entry.type == "blob"}
        name = next((candidate for candidate in README_NAMES if candidate in by_name), None)
        if name is not None:
            found = content.file_at(path, tip, by_name[name].path)
            readme = (by_name[name].name, None if found.streamed else content.read(found))
            readme_id = by_name[name].id
    return Overview(False, last, tuple(entries), readme, readme_id)


def branches(rt, project: ProjectRef, offset: int, limit: int) -> tuple[int, list[tuple[str, repo.CommitInfo]]]:
    """(number of branches, one page of (name, tip)) sorted by name; an empty repository has none."""
    with reading(project.id, "Repository"):
        return repo.branches(path_of(rt, project), offset, limit)


# --- v4's history reads (git/history.py) -----------------------------------------------------------


def filtered_commits(rt, project: ProjectRef, ref: str | None, filters: history.LogFilter, offset: int,
                     limit: int) -> tuple[int, list[repo.CommitInfo]]:  # fmt: skip
    """(total, one page) of the commits REF (None: every ref) reaches that FILTERS keep."""
    path = path_of(rt, project)
    if ref is not None and ref == project.head_branch and not repo.branch_names(path):
        with reading(project.id, "Repository"):
            repo.open_repository(path)
        return 0, []
    with reading(project.id, "Commit"):
        return history.log(path, ref, filters, offset, limit)


def commit_stats(rt, project: ProjectRef, sha: str) -> history.Stats:
    with reading(project.id, "Commit"):
        return history.stats(path_of(rt, project), sha)


def commit_refs(rt, project: ProjectRef, sha: str, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
    with reading(project.id, "Commit"):
        return history.refs_containing(path_of(rt, project), sha, kinds)


def merge_base(rt, project: ProjectRef, names: list[str]) -> repo.CommitInfo:
    with reading(project.id, "Commit"):
        found = history.merge_base(path_of(rt, project), names)
    if found is None:
        raise NotFound("Merge Base")
    return found


def blame(rt, project: ProjectRef, ref: str, file_path: str, start: int | None, end: int | None) -> list[history.BlameRange]:
    try:
        with reading(project.id, "File"):
            return history.blame(path_of(rt, project), ref, file_path, start, end)
    except ValueError:
        raise BadRequest("The file is too big to blame") from None


def blob_sha256(rt, project: ProjectRef, found: content.Blob) -> str:
    with reading(project.id, "Blob"):
        return content.sha256(found)


def tree_entries(rt, project: ProjectRef, ref: str | None, subpath: str, recursive: bool) -> list[repo.TreeEntry]:
    """The entries of SUBPATH at REF (default: the default branch); RECURSIVE: every entry below it
    (at most `history.MAX_TREE_ENTRIES`)."""
    with reading(project.id, "Tree"):
        if recursive:
            return history.tree_below(path_of(rt, project), ref or project.head_branch, subpath)
        return repo.tree(path_of(rt, project), ref or project.head_branch, subpath)
