"""Coverage of a build: the project's `build_coverage_regex` applied to the trace (reference 12.3).

As GitLab 8 did: the last match counts (its last group when the pattern has groups), and the
first number in it is the coverage. The regex may be written between slashes. Only the trace's
last SCANNED bytes are searched (coverage tools print their summary at the end), with RE2.
"""

from __future__ import annotations

import re

from . import regexes

SCANNED = 1024 * 1024
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def extract(pattern: str, trace: bytes) -> float | None:
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        pattern = pattern[1:-1]
    compiled = regexes.compile(pattern)
    if compiled is None or not pattern:
        return None
    text = trace[-SCANNED:].decode("utf-8", "replace")
    last = None
    for match in compiled.finditer(text):
        last = match
    if last is None:
        return None
    groups = [g for g in last.groups() if g is not None] if last.groups() else []
    found = NUMBER.search(groups[-1] if groups else last.group(0))
    return float(found.group(0)) if found else None
