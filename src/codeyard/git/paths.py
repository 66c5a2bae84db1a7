"""Which file paths from users may be written into a tree: git's own rules for paths it checks out
(read-cache.c `verify_path`, with core.protectHFS and core.protectNTFS on, as git sets them for
pushes checked by receive.fsckObjects). A path refused here could overwrite the repository's own
files when checked out on some file system (`.git`, `.GIT.`, `git~1`, `.g\\u200cit`), or is not a
path at all (empty, `.`, `..` components, control characters).

No imports: the API checks paths before it opens any repository.
"""

from __future__ import annotations

# Code points HFS+ ignores when comparing names (git's utf8.c next_hfs_char).
_HFS_IGNORED = frozenset([*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])


def is_hfs_dotgit(component: str) -> bool:
    """Does HFS+ read COMPONENT as `.git` (case-insensitive, ignoring some invisible code points)?"""
    visible = "".join(char for char in component if ord(char) not in _HFS_IGNORED)
    return visible.isascii() and visible.lower() == ".git"


def is_ntfs_dotgit(component: str) -> bool:
    """Does NTFS read COMPONENT as `.git`: `.git` or its short name `git~1`, in any case, followed by
    any run of dots and spaces, optionally then an alternate data stream (`:...`)?"""
    lowered = component.lower() if component.isascii() else component
    for name in (".git", "git~1"):
        if lowered.startswith(name):
            rest = lowered[len(name) :].split(":", 1)[0]
            return all(char in ". " for char in rest)
    return False


def _component_ok(component: str) -> bool:
    if component in ("", ".", ".."):
        return False
    if is_hfs_dotgit(component):
        return False
    # NTFS also separates components with backslashes.
    return not any(is_ntfs_dotgit(part) for part in component.split("\\"))


def is_file_path(path: str) -> bool:
    """May PATH (relative, `/`-separated, no leading or trailing slash) name a file in a tree?"""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    if any(char < " " or char == "\x7f" for char in path):
        return False
    return all(_component_ok(component) for component in path.split("/"))
