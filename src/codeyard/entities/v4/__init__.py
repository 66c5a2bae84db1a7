"""The shapes of API v4, where they differ from v3's (`entities/*`).

A v4 entity is built from the same rows as its v3 counterpart and reuses its parts; only what v4
names or types differently is here: `visibility` words for levels, `*_iid` paths, the newer field
names. Both edges read the same services, so a v4 entity never needs a query of its own.
"""

from __future__ import annotations

from typing import Literal

Visibility = Literal["private", "internal", "public"]

VISIBILITY_WORDS: dict[int, Visibility] = {0: "private", 10: "internal", 20: "public"}
VISIBILITY_LEVELS: dict[str, int] = {word: level for level, word in VISIBILITY_WORDS.items()}


def visibility(level: int) -> Visibility:
    """The v4 word for a v3 visibility level (0, 10, 20)."""
    return VISIBILITY_WORDS[level]
