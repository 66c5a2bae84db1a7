"""The fields of a project hook, declared once for the hooks API and the project's settings page."""

from __future__ import annotations

from .params import Bool, Str, Url

URL_MESSAGE = "must be a valid http or https URL"
HOOK_PARAMS = (
    Url("url", required=True, message=URL_MESSAGE, doc="http or https URL; leading and trailing spaces are removed"),
    Bool("push_events", doc="Default true"),
    Bool("issues_events", doc="Default false"),
    Bool("merge_requests_events", doc="Default false"),
    Bool("tag_push_events", doc="Default false"),
    Bool("note_events", doc="Default false"),
    Bool("build_events", doc="Default false"),
    Bool("enable_ssl_verification", doc="Default true"),
    Str("token", max_length=255, nullable=True, pattern=r"[ -~]*", pattern_message="must be printable ASCII",
        doc="Sent as X-Gitlab-Token and signing every delivery (X-Codeyard-Signature); never shown back"),
)
