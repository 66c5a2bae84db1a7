"""Checking names and paths: a length limit and a pattern, with Rails' messages."""

from __future__ import annotations

import re


def format_errors(value: str, pattern: re.Pattern, message: str, *, max_length: int = 255, refused_endings: tuple[str, ...] = ()) -> list[str]:
    """The reasons VALUE is not acceptable: too long, or not matching PATTERN (or ending badly)."""
    errors = []
    if len(value) > max_length:
        errors.append(f"is too long (maximum is {max_length} characters)")
    if not pattern.fullmatch(value) or (refused_endings and value.endswith(refused_endings)):
        errors.append(message)
    return errors
