"""Merge Request Hook and Note Hook bodies (reference 7.3)."""

from __future__ import annotations

from .common import View
from .pushes import commit_hash, project_hash, repository_hash
from .users import avatar_url


def _user(view: View, actor) -> dict:
    return {"name": actor.name, "username": actor.username, "avatar_url": avatar_url(actor, view)}


def _time(value) -> str | None:
    return value.isoformat() if value is not None else None


def _last_commit(view: View, project, info) -> dict | None:
    if info is None:
        return None
    found = commit_hash(view, project, info, ([], [], []))
    return {key: found[key] for key in ("id", "message", "timestamp", "url", "author")}


def merge_request_attributes(view: View, mr, source, target, last) -> dict:
    """The request's columns, its source and target project hashes, its last commit, url."""
    return {
        "id": mr.id,
        "target_branch": mr.target_branch,
        "source_branch": mr.source_branch,
        "source_project_id": mr.source_project_id,
        "author_id": mr.author_id,
        "assignee_id": mr.assignee_id,
        "title": mr.title,
        "created_at": _time(mr.created_at),
        "updated_at": _time(mr.updated_at),
        "milestone_id": None,
        "state": mr.state,
        "merge_status": mr.merge_status,
        "target_project_id": mr.target_project_id,
        "iid": mr.iid,
        "description": mr.description,
        "merge_params": mr.merge_params,
        "merge_when_build_succeeds": bool(mr.merge_when_build_succeeds),
        "merge_user_id": mr.merge_user_id,
        "merge_commit_sha": mr.merge_commit_sha,
        "source": project_hash(view, source) if source is not None else None,
        "target": project_hash(view, target),
        "last_commit": _last_commit(view, source or target, last),
        "work_in_progress": mr.work_in_progress,
        "url": f"{view.base_url}/{target.path_with_namespace}/merge_requests/{mr.iid}",
    }


def merge_request_payload(view: View, actor, project, mr, attributes: dict, action: str) -> dict:
    return {
        "object_kind": "merge_request",
        "user": _user(view, actor),
        "project": project_hash(view, project),
        "repository": repository_hash(view, project),
        "object_attributes": {**attributes, "action": action},
    }


def _note_payload(view: View, actor, project, note, url: str, line_code: str | None) -> dict:
    return {
        "object_kind": "note",
        "user": _user(view, actor),
        "project_id": project.id,
        "project": project_hash(view, project),
        "repository": repository_hash(view, project),
        "object_attributes": {
            "id": note.id, "note": note.note, "noteable_type": note.noteable_type, "author_id": note.author_id,
            "created_at": _time(note.created_at), "updated_at": _time(note.updated_at), "project_id": note.project_id,
            "attachment": None, "line_code": line_code, "commit_id": note.commit_id or "",
            "noteable_id": note.merge_request_id, "system": False, "st_diff": None, "updated_by_id": None,
            "is_award": False, "url": url,
        },
    }  # fmt: skip


def note_payload(view: View, actor, project, mr, attributes: dict, note) -> dict:
    """A comment on a merge request: the request's hook attributes under `merge_request`."""
    payload = _note_payload(view, actor, project, note, f"{attributes['url']}#note_{note.id}", None)
    return {**payload, "merge_request": attributes}


def commit_note_payload(view: View, actor, project, info, note, line_code: str | None) -> dict:
    """A comment on the commit INFO (a git.repo.CommitInfo): the commit hash under `commit`."""
    commit = _last_commit(view, project, info)
    payload = _note_payload(view, actor, project, note, f"{commit['url']}#note_{note.id}", line_code)
    return {**payload, "commit": commit}
