"""Group parameters both API versions declare alike."""

from __future__ import annotations

from ...http.params import Str
from ...services import groups, users

NAME = Str("name", max_length=255, check=groups.name_errors)
PATH = Str("path", max_length=255, check=users.namespace_path_errors)
