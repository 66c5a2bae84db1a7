"""All tables. Import models from here; each area keeps its own module."""

from .base import MAX_INTEGER, MIN_INTEGER, Base, is_id, parse_id, utcnow
from .ci import Build, Pipeline, Runner, RunnerProject
from .jobs import FAILED, PENDING, RUNNING, HookDelivery, Job
from .merge_requests import AwardEmoji, MergeRequest, Note
from .projects import (
    DEVELOPER,
    GUEST,
    INTERNAL,
    MASTER,
    OWNER,
    PRIVATE,
    PUBLIC,
    REPORTER,
    Event,
    ForkLink,
    GroupMember,
    Project,
    ProjectHook,
    ProjectMember,
    Star,
    Upload,
)
from .repositories import ProtectedBranch, RecordedPush
from .settings import ApplicationSetting
from .users import Namespace, PasswordFailure, Token, Tombstone, User, WebSession

__all__ = [
    "DEVELOPER", "FAILED", "GUEST", "INTERNAL", "MASTER", "MAX_INTEGER", "MIN_INTEGER", "OWNER", "PENDING", "PRIVATE",
    "PUBLIC", "REPORTER", "RUNNING", "ApplicationSetting", "AwardEmoji", "Base", "Build", "Event", "ForkLink", "GroupMember", "HookDelivery",
    "Job", "MergeRequest", "Namespace", "Note", "PasswordFailure", "Pipeline", "Project", "ProjectHook", "ProjectMember", "ProtectedBranch", "RecordedPush", "Runner", "RunnerProject", "Star", "Token",
    "Tombstone", "Upload", "User", "WebSession", "is_id", "parse_id", "utcnow",
]  # fmt: skip
