"""The HTTP answers to the services' refusals (GitLab v3's statuses and messages), for the API and
the web pages alike: a service says why it refused, this says how the edge answers."""

from __future__ import annotations

from ..errors import (
    CodeyardError,
    Conflict,
    Forbidden,
    MethodNotAllowed,
    NotAcceptable,
    NotFound,
    RecordNotFound,
    TooManyRequests,
    Unauthorized,
    Unavailable,
)
from ..services import passwords
from ..services.loader import LoadRefused
from ..services.merge_requests.accept import Refused
from ..services.outcomes import Refusal
from ..services.signin import SignInRefused

_ANSWERS = {
    Refused.GONE: lambda detail: RecordNotFound(),
    Refused.MAY_NOT_MERGE: lambda detail: Unauthorized(),
    Refused.NOT_OPEN: lambda detail: MethodNotAllowed(),
    Refused.SHA_MOVED: lambda detail: Conflict("SHA does not match HEAD of source branch: " + detail),
    Refused.CANNOT_MERGE: lambda detail: MethodNotAllowed("Branch cannot be merged"),
    Refused.NOT_AUTOMATIC: lambda detail: NotAcceptable("Can't cancel the automatic merge"),
    # Wrong credentials, an account that may not sign in, and sign-in turned off are told apart to nobody.
    SignInRefused.DISABLED: lambda detail: Unauthorized(),
    SignInRefused.WRONG_CREDENTIALS: lambda detail: Unauthorized(),
    SignInRefused.NOT_ACTIVE: lambda detail: Unauthorized(),
    SignInRefused.THROTTLED: lambda detail: TooManyRequests(
        "429 Too Many Requests - too many failed password attempts", headers={"retry-after": detail}
    ),
    SignInRefused.BUSY: lambda detail: Unavailable(passwords.BUSY, headers={"retry-after": detail}),
}


def answered(refusal: Refusal | None) -> None:
    """Raise the error REFUSAL answers with (nothing when there is none)."""
    if refusal is not None:
        raise error_of(refusal)


def accepted(outcome):
    """OUTCOME, unless it is a refusal: then raise the error that answers it."""
    if isinstance(outcome, Refusal):
        raise error_of(outcome)
    return outcome


def error_of(refusal: Refusal) -> CodeyardError:
    return _ANSWERS[refusal.reason](refusal.detail)


def load_error(refusal: LoadRefused, resource: str | None = None) -> CodeyardError:
    """The answer of the API and the pages to the loader's refusal: 403, else 404 (`404 <RESOURCE>
    Not Found`, or a plain `404 Not Found`). Git answers its own way (`githttp.transport.authorize`)."""
    return Forbidden() if refusal is LoadRefused.FORBIDDEN else NotFound(resource)
