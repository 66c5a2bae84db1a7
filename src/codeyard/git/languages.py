"""A commit's languages: the share of bytes of each language among its files, told by their
extensions and sized from the blobs' headers (no content is read), and the size of a repository
on disk. Bounded: at most MAX_ENTRIES tree entries are looked at, and no deeper than MAX_DEPTH.

Paths in, plain data out; no imports of the app.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pygit2

from .repo import NotInRepository, open_repository, resolve

MAX_ENTRIES = 20_000
MAX_DEPTH = 32
MAX_FILES_ON_DISK = 100_000

LANGUAGES = {
    ".py": "Python", ".rb": "Ruby", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
    ".ts": "TypeScript", ".tsx": "TypeScript", ".jsx": "JavaScript", ".go": "Go", ".rs": "Rust",
    ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".hh": "C++",
    ".java": "Java", ".kt": "Kotlin", ".kts": "Kotlin", ".scala": "Scala", ".swift": "Swift",
    ".m": "Objective-C", ".cs": "C#", ".fs": "F#", ".php": "PHP", ".pl": "Perl", ".pm": "Perl",
    ".sh": "Shell", ".bash": "Shell", ".zsh": "Shell", ".ps1": "PowerShell", ".lua": "Lua",
    ".r": "R", ".jl": "Julia", ".hs": "Haskell", ".ml": "OCaml", ".ex": "Elixir", ".exs": "Elixir",
    ".erl": "Erlang", ".clj": "Clojure", ".dart": "Dart", ".vue": "Vue", ".svelte": "Svelte",
    ".html": "HTML", ".htm": "HTML", ".css": "CSS", ".scss": "SCSS", ".sass": "Sass", ".less": "Less",
    ".sql": "SQL", ".tf": "HCL", ".nix": "Nix", ".zig": "Zig", ".vim": "Vim Script",
    ".el": "Emacs Lisp", ".lisp": "Common Lisp", ".scm": "Scheme", ".groovy": "Groovy",
    ".mk": "Makefile", ".cmake": "CMake", ".dockerfile": "Dockerfile",
}  # fmt: skip
NAMED = {"Makefile": "Makefile", "Dockerfile": "Dockerfile", "Rakefile": "Ruby", "Gemfile": "Ruby"}


def language_of(name: str) -> str | None:
    return NAMED.get(name) or LANGUAGES.get(PurePosixPath(name).suffix.lower())


def languages(path: Path, ref: str) -> dict[str, float]:
    """{language: percent of the bytes of recognised files}, largest first, two decimals."""
    repository = open_repository(path)
    try:
        tree = resolve(repository, ref).tree
    except (NotInRepository, KeyError, ValueError):
        return {}
    sizes: dict[str, int] = {}
    pending, seen = [(tree, 0)], 0
    while pending and seen < MAX_ENTRIES:
        current, depth = pending.pop()
        for entry in current:
            seen += 1
            if seen > MAX_ENTRIES:
                break
            if entry.type == pygit2.enums.ObjectType.TREE:
                if depth < MAX_DEPTH:
                    pending.append((repository[entry.id], depth + 1))
            elif entry.type == pygit2.enums.ObjectType.BLOB and entry.filemode != pygit2.enums.FileMode.LINK:
                language = language_of(entry.name)
                if language is not None:
                    sizes[language] = sizes.get(language, 0) + repository.odb.read_header(entry.id)[1]
    total = sum(sizes.values())
    if not total:
        return {}
    ranked = sorted(sizes.items(), key=lambda item: (-item[1], item[0]))
    return {language: round(100 * size / total, 2) for language, size in ranked}


def size_on_disk(path: Path) -> int:
    """The bytes of the files of the repository at PATH (at most MAX_FILES_ON_DISK files counted)."""
    total, counted = 0, 0
    for directory, _dirs, files in os.walk(path):
        for name in files:
            counted += 1
            if counted > MAX_FILES_ON_DISK:
                return total
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                continue
    return total
