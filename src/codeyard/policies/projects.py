"""What a user may do on a project: the one copy of the rules, used by the API and the git transport.

`project_access` is a pure function of the caller, the project (and its namespace) and the
caller's membership levels; `services.access` loads those levels from the database. The ladder is
GitLab 8.6's (app/models/ability.rb): guest < reporter < developer < master < owner, plus what
public and internal projects grant to every signed-in user, minus what disabled features and
archiving take away.
"""

from __future__ import annotations

import functools
import operator
from collections import namedtuple

GUEST, REPORTER, DEVELOPER, MASTER, OWNER = 10, 20, 30, 40, 50
ACCESS_LEVELS = (GUEST, REPORTER, DEVELOPER, MASTER, OWNER)
ACCESS_NAMES = {GUEST: "guest", REPORTER: "reporter", DEVELOPER: "developer", MASTER: "master", OWNER: "owner"}
PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
VISIBILITY_LEVELS = (PRIVATE, INTERNAL, PUBLIC)
VISIBILITY_NAMES = {PRIVATE: "private", INTERNAL: "internal", PUBLIC: "public"}

# Abilities, named as GitLab names them.
READ_PROJECT = "read_project"
DOWNLOAD_CODE = "download_code"
PUSH_CODE = "push_code"
PUSH_PROTECTED = "push_code_to_protected_branches"
FORK_PROJECT = "fork_project"
UPLOAD_FILE = "upload_file"
READ_MEMBERS = "read_project_member"
ADMIN_MEMBERS = "admin_project_member"
ADMIN_PROJECT = "admin_project"
RENAME_PROJECT = "rename_project"
CHANGE_VISIBILITY = "change_visibility_level"
CHANGE_NAMESPACE = "change_namespace"
REMOVE_PROJECT = "remove_project"
ARCHIVE_PROJECT = "archive_project"
REMOVE_FORK = "remove_fork_project"
READ_BUILD = "read_build"
READ_COMMIT_STATUS = "read_commit_status"
UPDATE_BUILD = "update_build"
CREATE_BUILD = "create_build"
ADMIN_BUILD = "admin_build"
READ_MERGE_REQUEST = "read_merge_request"
CREATE_MERGE_REQUEST = "create_merge_request"
UPDATE_MERGE_REQUEST = "update_merge_request"
ADMIN_MERGE_REQUEST = "admin_merge_request"
DESTROY_MERGE_REQUEST = "destroy_merge_request"
CREATE_NOTE = "create_note"
ADMIN_NOTE = "admin_note"
READ_NOTE = "read_note"
RESOLVE_NOTE = "resolve_note"  # a merge request's threads (its author may too: services/discussions)
CREATE_COMMIT_STATUS = "create_commit_status"
UPDATE_COMMIT_STATUS = "update_commit_status"
ADMIN_COMMIT_STATUS = "admin_commit_status"
CREATE_PROJECT = "create_project"
READ_ISSUE = "read_issue"
CREATE_ISSUE = "create_issue"
UPDATE_ISSUE = "update_issue"
ADMIN_ISSUE = "admin_issue"
DESTROY_ISSUE = "destroy_issue"
READ_LABEL = "read_label"
ADMIN_LABEL = "admin_label"
READ_MILESTONE = "read_milestone"
ADMIN_MILESTONE = "admin_milestone"
READ_WIKI = "read_wiki"
CREATE_WIKI = "create_wiki"
ADMIN_WIKI = "admin_wiki"
READ_SNIPPET = "read_project_snippet"
CREATE_SNIPPET = "create_project_snippet"
UPDATE_SNIPPET = "update_project_snippet"
ADMIN_SNIPPET = "admin_project_snippet"

GUEST_RULES = frozenset(
    {
        READ_PROJECT, READ_WIKI, READ_ISSUE, READ_LABEL, READ_MILESTONE, READ_SNIPPET, READ_MEMBERS,
        READ_MERGE_REQUEST, READ_NOTE, CREATE_PROJECT, CREATE_ISSUE, CREATE_NOTE, UPLOAD_FILE,
    }
)  # fmt: skip
PUBLIC_RULES = GUEST_RULES | {DOWNLOAD_CODE, FORK_PROJECT, READ_COMMIT_STATUS}
REPORTER_RULES = GUEST_RULES | {
    DOWNLOAD_CODE, FORK_PROJECT, CREATE_SNIPPET, UPDATE_ISSUE, ADMIN_ISSUE, ADMIN_LABEL, READ_COMMIT_STATUS, READ_BUILD,
}  # fmt: skip
DEVELOPER_RULES = REPORTER_RULES | {
    ADMIN_MERGE_REQUEST, UPDATE_MERGE_REQUEST, CREATE_COMMIT_STATUS, UPDATE_COMMIT_STATUS, CREATE_BUILD,
    UPDATE_BUILD, CREATE_MERGE_REQUEST, CREATE_WIKI, PUSH_CODE, RESOLVE_NOTE,
}  # fmt: skip
MASTER_RULES = DEVELOPER_RULES | {
    PUSH_PROTECTED, UPDATE_SNIPPET, ADMIN_MILESTONE, ADMIN_SNIPPET, ADMIN_MEMBERS,
    ADMIN_NOTE, ADMIN_WIKI, ADMIN_PROJECT, ADMIN_COMMIT_STATUS, ADMIN_BUILD,
}  # fmt: skip
OWNER_RULES = MASTER_RULES | {
    CHANGE_NAMESPACE, CHANGE_VISIBILITY, RENAME_PROJECT, REMOVE_PROJECT, ARCHIVE_PROJECT, REMOVE_FORK,
    DESTROY_MERGE_REQUEST, DESTROY_ISSUE,
}  # fmt: skip
# Team membership grants up to master rules; owner rules come from owning the namespace (below).
TEAM_RULES = ((MASTER, MASTER_RULES), (DEVELOPER, DEVELOPER_RULES), (REPORTER, REPORTER_RULES), (GUEST, GUEST_RULES))
ARCHIVED_TAKES = frozenset({CREATE_MERGE_REQUEST, PUSH_CODE, PUSH_PROTECTED, UPDATE_MERGE_REQUEST, ADMIN_MERGE_REQUEST})
FEATURE_ABILITIES = {
    "issues_enabled": "issue",
    "merge_requests_enabled": "merge_request",
    "snippets_enabled": "project_snippet",
    "wiki_enabled": "wiki",
    "builds_enabled": "build",
}


# A named tuple, not a frozen dataclass: the pre-receive hook of every push imports this module,
# and `dataclasses` (with `inspect`) was half of that process's start; functools loads collections.
class Access(namedtuple("Access", ("abilities", "project_level", "group_level", "owner"), defaults=(None, None, False))):
    """One user's standing on one project: its abilities (a frozenset), its direct membership level,
    its membership level of the project's group, and whether it owns the namespace (namespace owner,
    group owner or admin)."""

    __slots__ = ()

    @property
    def level(self) -> int:
        """The effective access level (0 for non-members)."""
        if self.owner:
            return OWNER
        return max(self.project_level or 0, self.group_level or 0)

    def can(self, ability: str) -> bool:
        return ability in self.abilities


NO_ACCESS = Access(frozenset())


_feature_flags = operator.attrgetter(*FEATURE_ABILITIES)


def _feature_rules(project) -> frozenset[str]:
    """The abilities the project's disabled features take away."""
    return _rules_taken_by(_feature_flags(project))


@functools.cache
def _rules_taken_by(enabled: tuple[bool, ...]) -> frozenset[str]:
    flags = dict(zip(FEATURE_ABILITIES, map(bool, enabled), strict=True))
    taken: set[str] = set()
    for flag, suffix in FEATURE_ABILITIES.items():
        if not flags[flag]:
            taken.update(rule for rule in OWNER_RULES | PUBLIC_RULES if rule.endswith(suffix))
    if not flags["issues_enabled"] and not flags["merge_requests_enabled"]:
        taken.update(rule for rule in OWNER_RULES if rule.endswith(("label", "milestone")))
    return frozenset(taken)


def project_access(user, project, namespace, project_level: int | None, group_level: int | None) -> Access:
    """The abilities of USER (a user row or None) on PROJECT in NAMESPACE, given their membership levels."""
    if not _active(user):
        return NO_ACCESS
    is_owner = _owns(user, namespace, group_level)
    level = project.visibility_level
    rules = _rules(
        max(project_level or 0, group_level or 0),
        is_owner,
        level == PUBLIC or (level == INTERNAL and not user.external),
        bool(project.public_builds),
        bool(project.archived),
        _feature_flags(project),
    )
    return _access(rules, project_level, group_level, is_owner)


def administers(user, namespace, project_level: int | None, group_level: int | None) -> bool:
    """`project_access(...).can(ADMIN_PROJECT)` without the rest of the abilities: owners and
    masters administer a project, and neither a disabled feature nor archiving takes that away
    (a test checks the two agree). For lists, which ask it of every project they show."""
    if not _active(user):
        return False
    return _owns(user, namespace, group_level) or max(project_level or 0, group_level or 0) >= MASTER


def administers_every(user) -> bool:
    """Whether USER administers every project (`administers` for any standing): an active admin."""
    return _active(user) and bool(user.is_admin)


def _active(user) -> bool:
    return user is not None and getattr(user, "state", "active") == "active"


def _owns(user, namespace, group_level: int | None) -> bool:
    """Owner rules: the admins, the owner of a personal namespace, the owners of a group."""
    return bool(
        user.is_admin
        or (namespace.kind == "user" and namespace.owner_id == user.id)
        or (namespace.kind == "group" and group_level == OWNER)
    )


# Access is immutable and a page of projects repeats a few standings: one instance each, instead of
# one built per project (a frozen dataclass's __init__ cost a list of 100 more than the rules' lookup).
_access = functools.lru_cache(maxsize=1024)(Access)


@functools.lru_cache(maxsize=1024)  # few combinations; a page of projects repeats them
def _rules(team_level: int, is_owner: bool, open_to_user: bool, public_builds: bool, archived: bool, enabled: tuple) -> frozenset[str]:
    rules: set[str] = set(next((granted for floor, granted in TEAM_RULES if team_level >= floor), ()))
    if is_owner:
        rules |= OWNER_RULES
    if open_to_user:
        rules |= PUBLIC_RULES
        if public_builds:
            rules.add(READ_BUILD)
    if archived:
        rules -= ARCHIVED_TAKES
    rules -= _rules_taken_by(enabled)
    return frozenset(rules)


def anonymous_access(project) -> Access:
    """What anybody may do without signing in: read and clone public projects (the git transport)."""
    if project.visibility_level != PUBLIC:
        return NO_ACCESS
    rules = {READ_PROJECT, DOWNLOAD_CODE, READ_MEMBERS, READ_MERGE_REQUEST, READ_WIKI, READ_LABEL,
             READ_MILESTONE, READ_NOTE, READ_COMMIT_STATUS, READ_ISSUE, READ_SNIPPET}  # fmt: skip
    if project.public_builds:
        rules.add(READ_BUILD)
    return Access(frozenset(rules) - _feature_rules(project))


def visible_levels_for(user) -> tuple[int, ...]:
    """Visibility levels a signed-in non-member may read (public; internal unless external)."""
    return (PUBLIC,) if user.external else (INTERNAL, PUBLIC)


def lowest_open_level(user) -> int:
    """The lowest visibility level USER (None: anonymous) reads without being a member."""
    return PUBLIC if user is None else min(visible_levels_for(user))
