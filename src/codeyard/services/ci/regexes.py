"""Regular expressions from users (`only`/`except` patterns, the coverage regex), run by RE2.

RE2 matches in time linear in the text, whatever the pattern: no user pattern can make the server
backtrack for hours. It lacks backreferences and lookaround; a pattern it refuses (or one longer
than MAX_PATTERN) matches nothing. Its memory per pattern is capped at MAX_MEMORY.
"""

from __future__ import annotations

import functools

import re2

MAX_PATTERN = 1024
MAX_MEMORY = 1 << 20
_OPTIONS = re2.Options()
_OPTIONS.max_mem = MAX_MEMORY
_OPTIONS.log_errors = False


@functools.lru_cache(maxsize=256)
def compile(pattern: str):
    """The compiled pattern, or None when RE2 refuses it or it is too long."""
    if len(pattern) > MAX_PATTERN:
        return None
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error:
        return None


def search(pattern: str, text: str) -> bool:
    compiled = compile(pattern)
    return compiled is not None and compiled.search(text) is not None
