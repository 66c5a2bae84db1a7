"""Request parameters: merged from the query string, a form or JSON body and the path, then checked
against the parameters a route declares.

The rules are GitLab's (Grape) ones:
- query < body < path captures; Rack-style keys `a[]=x` (list) and `a[k]=x` (map) are understood;
- a value that is null or a blank string counts as absent, except that it clears a nullable
  parameter (docs/DECISIONS.md C44);
- the first missing required parameter answers 400 `400 (Bad request) "name" not given`;
- every other failure is collected into a 400 whose message maps field -> [reasons].
The declared parameters also feed the OpenAPI document, so it cannot drift from the code.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..db.models.base import MAX_INTEGER, MIN_INTEGER
from ..errors import BadRequest, Invalid, MissingParam

TRUE_WORDS = frozenset({"true", "t", "1", "on", "yes", "y"})
FALSE_WORDS = frozenset({"false", "f", "0", "off", "no", "n"})

_RACK_KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])+)$")
MAX_KEY_DEPTH = 100  # Rack's param_depth_limit


class ParamError(ValueError):
    def __init__(self, *reasons: str):
        super().__init__(*reasons)
        self.reasons = list(reasons)


# --- raw parameters ----------------------------------------------------------------------------


def parse_pairs(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Fold `key=value` pairs into a dict, nesting Rack-style `a[]` and `a[k]` keys."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key.count("[") > MAX_KEY_DEPTH:
            raise BadRequest(f"400 (Bad request) a parameter name may nest at most {MAX_KEY_DEPTH} levels")
        match = _RACK_KEY.match(key)
        if match is None:
            result[key] = value
            continue
        parts = [match.group(1), *re.findall(r"\[([^\[\]]*)\]", match.group(2))]
        _assign(result, parts, value)
    return result


def _assign(target: dict, parts: list[str], value: Any) -> None:
    node = target
    for position, part in enumerate(parts[:-1]):
        following = parts[position + 1]
        if following == "":
            existing = node.get(part)
            if not isinstance(existing, list):
                existing = node[part] = []
            existing.append(value)
            return
        existing = node.get(part)
        if not isinstance(existing, dict):
            existing = node[part] = {}
        node = existing
    node[parts[-1]] = value


def parse_query(query_string: str) -> dict[str, Any]:
    return parse_pairs(parse_qsl(query_string, keep_blank_values=True))


# --- declared parameters -----------------------------------------------------------------------


class Param:
    """One declared parameter. Subclasses convert a raw value or raise ParamError(reason)."""

    json_type = "string"

    def __init__(
        self,
        name: str,
        *,
        required: bool = False,
        doc: str = "",
        nullable: bool = False,
        aliases: tuple[str, ...] = (),
        location: str | None = None,
    ):
        self.name = name
        self.required = required
        self.doc = doc
        self.nullable = nullable
        self.aliases = aliases
        self.location = location

    def convert(self, value: Any) -> Any:
        return value

    def schema(self) -> dict:
        return {"type": self.json_type}

    def as_required(self) -> Param:
        twin = copy.copy(self)
        twin.required = True
        return twin

    def raw_value(self, raw: dict[str, Any]) -> tuple[bool, Any]:
        for key in (self.name, *self.aliases):
            if key in raw:
                return True, raw[key]
        return False, None


# C0 controls, DEL and C1 controls: they corrupt what they reach (commit headers, logs, listings).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
CONTROL_MESSAGE = "must not contain control characters"


def plain_text(text: str) -> list[str]:
    """A check for names shown in pages and mails: no markup."""
    return ["cannot contain < or >"] if "<" in text or ">" in text else []


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip() == "")


class Str(Param):
    """Text. Control characters are refused unless the text is MULTILINE (tabs and line ends allowed)
    or VERBATIM (file content, passwords: anything goes). CHECK returns the reasons a value is
    unacceptable (a service's own name or path rules), so they are reported with every other field."""

    def __init__(
        self,
        name: str,
        *,
        max_length: int | None = None,
        min_length: int | None = None,
        pattern: str | None = None,
        pattern_message: str = "is invalid",
        strip: bool = False,
        multiline: bool = False,
        verbatim: bool = False,
        check: Callable[[str], list[str]] | None = None,
        **options,
    ):
        super().__init__(name, **options)
        self.max_length = max_length
        self.min_length = min_length
        self.pattern = re.compile(pattern) if pattern else None
        self.pattern_message = pattern_message
        self.strip = strip
        self.control = None if verbatim else _CONTROL_BUT_LINES if multiline else _CONTROL
        self.check = check

    def convert(self, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ParamError("must be a string")
        text = str(value)
        if self.strip:
            text = text.strip()
        if self.max_length is not None and len(text) > self.max_length:
            raise ParamError(f"is too long (maximum is {self.max_length} characters)")
        if self.min_length is not None and len(text) < self.min_length:
            raise ParamError(f"is too short (minimum is {self.min_length} characters)")
        if self.control is not None and self.control.search(text):
            raise ParamError(CONTROL_MESSAGE)
        if self.pattern is not None and not self.pattern.fullmatch(text):
            raise ParamError(self.pattern_message)
        if self.check is not None and (reasons := self.check(text)):
            raise ParamError(*reasons)
        return text

    def schema(self) -> dict:
        schema: dict[str, Any] = {"type": "string"}
        if self.max_length is not None:
            schema["maxLength"] = self.max_length
        if self.min_length is not None:
            schema["minLength"] = self.min_length
        return schema


def to_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ParamError("is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
        return int(value)
    raise ParamError("is not a number")


class Int(Param):
    json_type = "integer"

    def __init__(self, name: str, *, minimum: int | None = None, maximum: int | None = None, **options):
        super().__init__(name, **options)
        self.minimum = minimum
        self.maximum = maximum

    def convert(self, value: Any) -> int:
        number = to_int(value)
        # Undeclared bounds are those of an integer column: a larger number must not reach a query.
        minimum = MIN_INTEGER if self.minimum is None else self.minimum
        maximum = MAX_INTEGER if self.maximum is None else self.maximum
        if number < minimum:
            raise ParamError("must be greater than 0" if minimum == 1 else f"must be greater than or equal to {minimum}")
        if number > maximum:
            raise ParamError(f"must be less than or equal to {maximum}")
        return number

    def schema(self) -> dict:
        schema: dict[str, Any] = {"type": "integer"}
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema


class Id(Param):
    """The id of a row: any integer, unbounded; the service says 404 when it names nothing."""

    json_type = "integer"

    def convert(self, value: Any) -> int:
        return to_int(value)


def to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ParamError("is not a boolean")


class Bool(Param):
    json_type = "boolean"

    def convert(self, value: Any) -> bool:
        return to_bool(value)


class Choice(Param):
    """One of a fixed set of values; integers when the choices are integers."""

    def __init__(self, name: str, choices: Iterable, **options):
        super().__init__(name, **options)
        self.choices = tuple(choices)
        self.numeric = all(isinstance(c, int) for c in self.choices)

    def convert(self, value: Any) -> Any:
        try:
            candidate = to_int(value) if self.numeric else value
        except ParamError:
            raise ParamError("is not included in the list") from None
        if isinstance(candidate, str) and not self.numeric:
            candidate = candidate.strip()
        if candidate not in self.choices:
            raise ParamError("is not included in the list")
        return candidate

    def schema(self) -> dict:
        return {"type": "integer" if self.numeric else "string", "enum": list(self.choices)}


def as_list(value: Any) -> list:
    """A list from a JSON array, a Rack-indexed map (`a[0]=x`) or a comma/newline separated string."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value[key] for key in sorted(value, key=lambda k: (len(k), k))]
    if isinstance(value, str):
        return [part.strip() for part in re.split(r"[,\n]", value) if part.strip()]
    return [value]


class IntList(Param):
    json_type = "array"

    def __init__(self, name: str, *, choices: Iterable[int] | None = None, item_message: str | None = None, **options):
        super().__init__(name, **options)
        self.choices = tuple(choices) if choices is not None else None
        self.item_message = item_message

    def convert(self, value: Any) -> list[int]:
        items = []
        for item in as_list(value):
            try:
                number = to_int(item)
            except ParamError:
                number = None
            out_of_range = number is None or not MIN_INTEGER <= number <= MAX_INTEGER
            if out_of_range or (self.choices is not None and number not in self.choices):
                raise ParamError((self.item_message or "'{value}' is not a valid value").format(value=item))
            items.append(number)
        return items

    def schema(self) -> dict:
        items: dict[str, Any] = {"type": "integer"}
        if self.choices is not None:
            items["enum"] = list(self.choices)
        return {"type": "array", "items": items}


def GitText(name: str, **options) -> Str:
    """A ref, revision or path inside a repository. It is not screened for control characters here:
    the git layer's rules (git/refs.py, git/paths.py) judge it whole, so a bad name is not found (or
    invalid) the same way whatever makes it bad."""
    return Str(name, verbatim=True, **options)


class StrList(Param):
    json_type = "array"

    def __init__(self, name: str, *, item_pattern: str | None = None, item_message: str = "'{value}' is invalid", **options):
        super().__init__(name, **options)
        self.item_pattern = re.compile(item_pattern) if item_pattern else None
        self.item_message = item_message

    def convert(self, value: Any) -> list[str]:
        items = []
        for item in as_list(value):
            if not isinstance(item, str) or (self.item_pattern and not self.item_pattern.fullmatch(item.strip())):
                raise ParamError(self.item_message.format(value=item))
            if _CONTROL.search(item):
                raise ParamError(CONTROL_MESSAGE)
            items.append(item.strip())
        return items

    def schema(self) -> dict:
        return {"type": "array", "items": {"type": "string"}}


class Url(Str):
    def __init__(self, name: str, *, schemes: tuple[str, ...] = ("http", "https"), message: str = "must be a valid URL",
                 max_length: int = 2048, **options):  # fmt: skip
        super().__init__(name, max_length=max_length, strip=True, **options)
        self.schemes = schemes
        self.message = message

    def convert(self, value: Any) -> str:
        text = super().convert(value)
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError:
            raise ParamError(self.message) from None
        if parts.scheme.lower() not in self.schemes or not parts.hostname or any(c.isspace() for c in text):
            raise ParamError(self.message)
        return text

    def schema(self) -> dict:
        return {"type": "string", "format": "uri"}


class Email(Str):
    def __init__(self, name: str, **options):
        super().__init__(name, max_length=255, strip=True, pattern=r"[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+", **options)

    def schema(self) -> dict:
        return {"type": "string", "format": "email", "maxLength": 255}


class File(Param):
    """A multipart file part (starlette UploadFile)."""

    json_type = "file"

    def convert(self, value: Any) -> Any:
        if not hasattr(value, "filename") or not hasattr(value, "read"):
            raise ParamError("is not a file")
        return value

    def schema(self) -> dict:
        return {"type": "string", "format": "binary"}


class Any_(Param):
    """Passed through as given: a string, a list or a map (for parameters with ad-hoc rules)."""

    def schema(self) -> dict:
        return {}


def validate(declared: tuple[Param, ...], raw: dict[str, Any]) -> dict[str, Any]:
    """The declared parameters that are present, converted; raises MissingParam or Invalid."""
    for param in declared:
        if param.required:
            present, value = param.raw_value(raw)
            if not present or _is_blank(value) or (value is False and not isinstance(param, Bool)):
                raise MissingParam(param.name)
    args: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for param in declared:
        present, value = param.raw_value(raw)
        if not present:
            continue
        if value is None:
            if param.nullable:
                args[param.name] = None
            continue
        if isinstance(value, str) and value.strip() == "" and not isinstance(param, StrList | IntList):
            if param.nullable:
                args[param.name] = None
            continue
        try:
            args[param.name] = param.convert(value)
        except ParamError as error:
            errors[param.name] = error.reasons
    if errors:
        raise Invalid(errors)
    return args
