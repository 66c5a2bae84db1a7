"""Domain errors, raised anywhere (services, policies, the edge) and turned into responses at the edge.

Each carries the HTTP status and the `message` of the GitLab v3 error body it maps to, so that
every error a client sees is shaped alike: `{"message": ...}`.
"""

from __future__ import annotations


class CodeyardError(Exception):
    status = 500
    default_message: str | dict | list = "500 Internal Server Error"

    def __init__(self, message: str | dict | list | None = None, headers: dict[str, str] | None = None):
        self.message = self.default_message if message is None else message
        self.headers = headers or {}
        super().__init__(self.message)

    def body(self) -> dict:
        """The JSON the API answers: `{"message": ...}` but for the few errors GitLab shapes otherwise."""
        return {"message": self.message}


class BadRequest(CodeyardError):
    status = 400
    default_message = "400 (Bad request)"


class MissingParam(BadRequest):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f'400 (Bad request) "{name}" not given')


class Invalid(BadRequest):
    """Validation failure: the message is a map of field -> list of reasons."""

    def __init__(self, errors: dict[str, list]):
        self.errors = errors
        super().__init__(errors)

    @classmethod
    def field(cls, name: str, reason: str) -> Invalid:
        return cls({name: [reason]})


class Unauthorized(CodeyardError):
    status = 401
    default_message = "401 Unauthorized"


class Forbidden(CodeyardError):
    status = 403
    default_message = "403 Forbidden"

    def __init__(self, reason: str | None = None):
        super().__init__(f"403 Forbidden - {reason}" if reason else None)


class NotFound(CodeyardError):
    """`NotFound("Project")` reads "404 Project Not Found"; `NotFound()` reads "404 Not Found"."""

    status = 404
    default_message = "404 Not Found"

    def __init__(self, resource: str | None = None):
        super().__init__(f"404 {resource} Not Found" if resource else None)


class RecordNotFound(NotFound):
    """GitLab's wording for a failed lookup of a record by id: "404 Not found" (lower-case f)."""

    def __init__(self):
        CodeyardError.__init__(self, "404 Not found")


class MethodNotAllowed(CodeyardError):
    status = 405
    default_message = "405 Method Not Allowed"


class NotAcceptable(CodeyardError):
    status = 406
    default_message = "406 Not Acceptable"


class Conflict(CodeyardError):
    status = 409
    default_message = "409 Conflict"


class PayloadTooLarge(CodeyardError):
    status = 413
    default_message = "413 Request Entity Too Large"


class UnsupportedMediaType(CodeyardError):
    status = 415
    default_message = "415 Unsupported Media Type"


class Unprocessable(CodeyardError):
    status = 422
    default_message = "422 Unprocessable Entity"


class TooManyRequests(CodeyardError):
    status = 429
    default_message = "429 Too Many Requests"


class Unavailable(CodeyardError):
    status = 503
    default_message = "503 Service Unavailable"


class RepositoryUnavailable(CodeyardError):
    status = 500
    default_message = "500 The repository of this project is missing or damaged"
