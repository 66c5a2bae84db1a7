"""The HTTP answers to the services' refusals (GitLab v3's statuses and messages), for the API and
the web pages alike: a service says why it refused, this says how the edge answers."""

from __future__ import annotations

from ..errors import CodeyardError, Conflict, MethodNotAllowed, NotAcceptable, RecordNotFound, Unauthorized
from ..services.merge_requests.accept import Refused
from ..services.outcomes import Refusal

_ANSWERS = {
    Refused.GONE: lambda detail: RecordNotFound(),
    Refused.MAY_NOT_MERGE: lambda detail: Unauthorized(),
    Refused.NOT_OPEN: lambda detail: MethodNotAllowed(),
    Refused.SHA_MOVED: lambda detail: Conflict("SHA does not match HEAD of source branch: " + detail),
    Refused.CANNOT_MERGE: lambda detail: MethodNotAllowed("Branch cannot be merged"),
    Refused.NOT_AUTOMATIC: lambda detail: NotAcceptable("Can't cancel the automatic merge"),
}


def answered(refusal: Refusal | None) -> None:
    """Raise the error REFUSAL answers with (nothing when there is none)."""
    if refusal is not None:
        raise error_of(refusal)


def error_of(refusal: Refusal) -> CodeyardError:
    return _ANSWERS[refusal.reason](refusal.detail)
