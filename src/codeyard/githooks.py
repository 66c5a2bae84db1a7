"""The git hooks codeyard installs for pushes (`scripts`, written by the smart-HTTP transport).

They run inside `git receive-pack`, which the smart-HTTP transport starts. The server decides the
caller's rights before starting git and hands them over in the environment, so the hooks need no
database and start fast:

- CODEYARD_PUSH_RULES: JSON `{"abilities": [...], "protected": {"<branch>": {"developers_can_push": bool}}}`
- CODEYARD_PUSH_JOURNAL: the push's journal (services/push_journal.py), a file the server created
  and holds locked; the reference-transaction hook appends the refs git moved to it.

pre-receive (`python -m codeyard.githooks pre-receive`) refuses the whole push (git's rule: a refused
update changes no ref) when any update breaks `policies.branches.refusal` or creates or moves a ref
whose name codeyard refuses (git itself takes `-x` or `HEAD` as branch names; the API and git's
command line would not), printing the reasons, which git shows as `remote:` lines. Deleting a ref of
such a name is allowed.

reference-transaction runs inside every ref transaction of receive-pack, before it reports to the
client (post-receive runs only after the report is sent, too late for a server that dies meanwhile).
In state `committed` it appends git's `<old> <new> <ref>` lines to the journal and syncs the file to
disk (`dd conv=fsync`; `nocreat`: a journal the server no longer has is not made anew). It is a
shell script, not Python: receive-pack runs it twice per ref transaction (`prepared`, `committed`)
and, unless the push is atomic, runs one transaction per ref; the other states return at once.
Its exit status is ignored by git in state `committed`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

from .git.refs import HEADS, MERGE_REQUESTS, ZERO_SHA, acceptable_ref
from .policies.branches import refusal
from .policies.projects import Access


def descends(old: str, new: str) -> bool:
    """Is NEW a descendant of OLD? (The pushed objects are visible through git's quarantine env.)"""
    result = subprocess.run(["git", "merge-base", "--is-ancestor", "--end-of-options", old, new], capture_output=True)
    return result.returncode == 0


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


JOURNAL_SCRIPT = """#!/bin/sh
# codeyard: the refs a committed ref transaction moved, appended to the push's journal and synced.
[ "$1" = committed ] && [ -n "$CODEYARD_PUSH_JOURNAL" ] || exit 0
exec dd of="$CODEYARD_PUSH_JOURNAL" oflag=append conv=notrunc,nocreat,fsync status=none
"""


def scripts(python: str) -> dict[str, str]:
    """The hook files codeyard installs, by name, for the Python interpreter PYTHON."""
    return {
        "pre-receive": f"#!/bin/sh\nexec '{python}' -m codeyard.githooks pre-receive\n",
        "reference-transaction": JOURNAL_SCRIPT,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] != "pre-receive":
        print("usage: python -m codeyard.githooks pre-receive", file=sys.stderr)
        return 2
    return pre_receive()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
