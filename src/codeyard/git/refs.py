"""How git names things: ref namespaces, the null SHA, the branch a new repository starts on, and
which names and revisions from users are acceptable (checked before git or libgit2 sees them).

No imports: policies and models read these too, without loading pygit2.
"""

HEADS = "refs/heads/"
TAGS = "refs/tags/"
MERGE_REQUESTS = "refs/merge-requests/"  # heads of merge requests: written by the server only
ZERO_SHA = "0" * 40  # the "before" of a created ref, the "after" of a deleted one

MAX_NAME_BYTES = 255  # a whole branch or tag name (GitLab's column, and far below git's own limits)
MAX_COMPONENT_BYTES = 250  # one slash-separated part: file systems cap a name at 255 bytes
_FORBIDDEN = frozenset(" ~^:?*[\\\x7f")
_HEX = frozenset("0123456789abcdefABCDEF")


def _component_ok(part: str) -> bool:
    return (
        bool(part)
        and not part.startswith(".")
        and not part.endswith(".lock")
        and len(part.encode("utf-8")) <= MAX_COMPONENT_BYTES
    )


def is_ref_name(name: str) -> bool:
    """Is NAME (below refs/, or a full ref name) one `git check-ref-format` accepts, in canonical
    form (no leading, trailing or doubled slash), valid UTF-8 and not read as an option by git?"""
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # lone surrogates: bytes that were not UTF-8
        return False
    if not 0 < size <= MAX_NAME_BYTES or name.startswith("-") or name in ("@", "HEAD"):
        return False
    if ".." in name or "@{" in name or name.endswith("."):
        return False
    if any(char < " " or char in _FORBIDDEN for char in name):
        return False
    return all(_component_ok(part) for part in name.split("/"))


def is_branch_name(name: str) -> bool:
    """A name `git check-ref-format --branch` accepts as is, and that git never takes for an option
    or for HEAD."""
    return is_ref_name(name)


def is_tag_name(name: str) -> bool:
    return is_ref_name(name)


def acceptable_ref(ref: str) -> bool:
    """May a push create or move REF (a full name)? (What pre-receive lets through, and what a
    push's journal is trusted to name.)"""
    if ref.startswith(HEADS):
        return is_branch_name(ref[len(HEADS) :])
    if ref.startswith(TAGS):
        return is_tag_name(ref[len(TAGS) :])
    return ref.startswith("refs/") and is_ref_name(ref[len("refs/") :])


def _without_ancestry(text: str) -> str:
    """TEXT without trailing `~n` / `^n` steps (`master~2^1` -> `master`)."""
    end = len(text)
    while end > 0:
        digits = end
        while digits > 0 and text[digits - 1].isascii() and text[digits - 1].isdigit():
            digits -= 1
        if digits > 0 and text[digits - 1] in "~^":
            end = digits - 1
        else:
            break
    return text[:end]


def is_sha_prefix(text: str) -> bool:
    return 4 <= len(text) <= 40 and all(char in _HEX for char in text)


def is_revision(text: str) -> bool:
    """Is TEXT a revision the API accepts from users: a branch or tag name (possibly a full
    `refs/...` name), HEAD, or 4 to 40 hex digits, each optionally followed by `~n`/`^n` steps?
    Everything else (options, `@{...}`, `:path`, ranges) is refused before git sees it."""
    base = _without_ancestry(text)
    return base == "HEAD" or is_sha_prefix(base) or is_ref_name(base)
