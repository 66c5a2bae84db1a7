"""The git hooks codeyard installs for pushes: `python -m codeyard.githooks pre-receive|post-receive`.

They run inside `git receive-pack`, which the smart-HTTP transport starts. The server decides the
caller's rights before starting git and hands them over in the environment, so the hooks need no
database and start fast:

- CODEYARD_PUSH_RULES: JSON `{"abilities": [...], "protected": {"<branch>": {"developers_can_push": bool}}}`
- CODEYARD_PUSH_LOG: a file post-receive appends the updated refs to (`<old> <new> <ref>` lines).

pre-receive refuses the whole push (git's rule: a refused update changes no ref) when any update
breaks `policies.branches.refusal` or creates or moves a ref whose name codeyard refuses (git itself
takes `-x` or `HEAD` as branch names; the API and git's command line would not), printing the
reasons, which git shows as `remote:` lines. Deleting a ref of such a name is allowed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

from .git.refs import HEADS, MERGE_REQUESTS, TAGS, ZERO_SHA, is_branch_name, is_ref_name, is_tag_name
from .policies.branches import refusal
from .policies.projects import Access


def descends(old: str, new: str) -> bool:
    """Is NEW a descendant of OLD? (The pushed objects are visible through git's quarantine env.)"""
    result = subprocess.run(["git", "merge-base", "--is-ancestor", "--end-of-options", old, new], capture_output=True)
    return result.returncode == 0


def acceptable_ref(ref: str) -> bool:
    """May a push create or move REF (a full name)?"""
    if ref.startswith(HEADS):
        return is_branch_name(ref[len(HEADS) :])
    if ref.startswith(TAGS):
        return is_tag_name(ref[len(TAGS) :])
    return ref.startswith("refs/") and is_ref_name(ref[len("refs/") :])


def check(lines: list[str], rules: dict) -> list[str]:
    access = Access(frozenset(rules.get("abilities", ())))
    protected = {name: SimpleNamespace(**flags) for name, flags in rules.get("protected", {}).items()}
    reasons = []
    for line in lines:
        old, new, ref = line.split()
        if ref.startswith(MERGE_REQUESTS):  # the server keeps them; a pushed one would change what is merged
            reasons.append(f"You are not allowed to change merge request refs ({ref})")
            continue
        if new != ZERO_SHA and not acceptable_ref(ref):
            reasons.append(f"The ref name is invalid: {ref}")
            continue
        protection = protected.get(ref[len(HEADS) :]) if ref.startswith(HEADS) else None
        forced = bool(protection) and old != ZERO_SHA and new != ZERO_SHA and not descends(old, new)
        reason = refusal(access, ref, old, new, protection, forced)
        if reason:
            reasons.append(f"{reason} ({ref})")
    return reasons


def pre_receive() -> int:
    lines = [line for line in sys.stdin.read().splitlines() if line.strip()]
    reasons = check(lines, json.loads(os.environ.get("CODEYARD_PUSH_RULES", "{}")))
    for reason in reasons:
        print(f"codeyard: {reason}", file=sys.stderr)
    return 1 if reasons else 0


def post_receive() -> int:
    log = os.environ.get("CODEYARD_PUSH_LOG")
    data = sys.stdin.read()
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(data)
    return 0


def main(argv: list[str]) -> int:
    hooks = {"pre-receive": pre_receive, "post-receive": post_receive}
    if len(argv) != 2 or argv[1] not in hooks:
        print("usage: python -m codeyard.githooks pre-receive|post-receive", file=sys.stderr)
        return 2
    return hooks[argv[1]]()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
