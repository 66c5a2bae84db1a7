"""GitLab's push and tag push payload (reference 7.3): event data now, webhook bodies later."""

from __future__ import annotations

from .common import View, iso
from .projects import urls
from .users import avatar_url


def project_hash(view: View, project) -> dict:
    """GitLab 8.6's `Project#hook_attrs`: `namespace` is the namespace's name, which for a personal
    namespace is the username (as `/namespaces` has it), not the owner's display name."""
    links = urls(project, view)
    return {
        "name": project.name,
        "description": project.description,
        "web_url": links["web_url"],
        "avatar_url": None,
        "git_ssh_url": links["ssh_url_to_repo"],
        "git_http_url": links["http_url_to_repo"],
        "namespace": project.namespace.name,
        "visibility_level": project.visibility_level,
        "path_with_namespace": project.path_with_namespace,
        "default_branch": project.head_branch,
        "homepage": links["web_url"],
        "url": links["ssh_url_to_repo"],
        "ssh_url": links["ssh_url_to_repo"],
        "http_url": links["http_url_to_repo"],
    }


def repository_hash(view: View, project) -> dict:
    links = urls(project, view)
    return {
        "name": project.name,
        "url": links["ssh_url_to_repo"],
        "description": project.description,
        "homepage": links["web_url"],
        "git_http_url": links["http_url_to_repo"],
        "git_ssh_url": links["ssh_url_to_repo"],
        "visibility_level": project.visibility_level,
    }


def commit_hash(view: View, project, info, changes: tuple[list[str], list[str], list[str]]) -> dict:
    """INFO is a git.repo.CommitInfo; CHANGES its (added, modified, removed) paths."""
    added, modified, removed = changes
    return {
        "id": info.id,
        "message": info.message,
        "timestamp": iso(info.author.when),
        "url": f"{urls(project, view)['web_url']}/commit/{info.id}",
        "author": {"name": info.author.name, "email": info.author.email},
        "added": added,
        "modified": modified,
        "removed": removed,
    }


def push_payload(view: View, project, user, update, *, tag: bool, commits: list[dict], total: int,
                 checkout_sha: str | None, message: str | None) -> dict:  # fmt: skip
    return {
        "object_kind": "tag_push" if tag else "push",
        "before": update.before,
        "after": update.after,
        "ref": update.ref,
        "checkout_sha": checkout_sha,
        "message": message,
        "user_id": user.id,
        "user_name": user.name,
        "user_email": user.email,
        "user_avatar": avatar_url(user, view),
        "project_id": project.id,
        "project": project_hash(view, project),
        "commits": commits,
        "total_commits_count": total,
        "repository": repository_hash(view, project),
    }
