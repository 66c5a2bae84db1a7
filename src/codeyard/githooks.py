"""The git hooks codeyard installs for pushes (`scripts`, written by the smart-HTTP transport).

They run inside `git receive-pack`, which the smart-HTTP transport starts. The server decides the
caller's rights before starting git and hands them over in the environment, so the hooks need no
database and start fast:

- CODEYARD_PUSH_RULES: the caller's abilities (and whether it is an instance admin) and the protected
  branches with their push levels and force push flags, as lines (`push_rules`)
- CODEYARD_PUSH_JOURNAL: the push's journal (services/push_journal.py), a file the server created
  and holds locked; the reference-transaction hook appends the refs git moved to it.

Most pushes are vetted by the server before git starts (`vet`, with the command list the transport
reads from the request): they run with `VETTED_SCRIPT`, a shell pre-receive that refuses any update
the server was not told of and asks git whether each protected branch's update moves forward. The
others (a refusal to explain, shallow lines, a push certificate, a long command list) run the
Python pre-receive.

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

pre-receive is a Python process per push, so its start is kept small (its CPU time before and
after, against a bare `python -I -S -c pass`: docs/MEASUREMENTS.md, git fetch, clone and push): it
runs with `-I -S` (no site-packages, no PYTHON* variables, no current directory on the path) with
only the directory holding the codeyard package added, and imports nothing but the standard
library and codeyard's dependency-free modules (git.refs, policies); git is started with
`os.posix_spawnp`, policies.projects.Access is a named tuple, and the rules are lines, not JSON:
`subprocess`, `dataclasses` (with `inspect`) and `json` (with `re`) were most of its start.
"""

from __future__ import annotations

import functools
import os
import sys
from types import SimpleNamespace

from .git.refs import HEADS, MERGE_REQUESTS, ZERO_SHA, acceptable_ref
from .policies.branches import NO_FORCE_PUSH, applicable, must_move_forward, refusal
from .policies.projects import Access


def descends(old: str, new: str) -> bool:
    """Is NEW a descendant of OLD? (The pushed objects are visible through git's quarantine env.)"""
    quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    command = ["git", "merge-base", "--is-ancestor", "--end-of-options", old, new]
    pid = os.posix_spawnp("git", command, os.environ, file_actions=quiet)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def push_rules(abilities, protected: dict[str, dict], admin: bool = False) -> str:
    """CODEYARD_PUSH_RULES for ABILITIES and PROTECTED (`{branch: {"push_access_level": int,
    "allow_force_push": bool}}`): a line `abilities <ability> ...`, a line `admin` when the caller is
    an instance admin (ADMIN), then a line `protected <push level> <0|1> <branch>` per protected
    branch, the flag saying whether it takes force pushes. Lines, not JSON: importing `json` was a
    quarter of the hook's start. A name with a space or a control character cannot be a branch
    (git's rules) and could forge a line: it is left out, as no pushed ref can match it."""
    lines = ["abilities " + " ".join(sorted(abilities))]
    if admin:
        lines.append("admin")
    for name, flags in sorted(protected.items()):
        if name and all(char > " " and char != "\x7f" for char in name):
            lines.append(f"protected {int(flags['push_access_level'])} {int(bool(flags['allow_force_push']))} {name}")
    return "\n".join(lines)


class Rules:
    """What `push_rules` wrote: the caller's Access, whether it is an instance admin, and the
    protected branches (name -> push_access_level, allow_force_push)."""

    __slots__ = ("access", "admin", "protected")

    def __init__(self, text: str):
        abilities: list[str] = []
        self.admin = False
        self.protected: dict[str, SimpleNamespace] = {}
        for line in text.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "abilities":
                abilities = rest.split()
            elif kind == "admin":
                self.admin = True
            elif kind == "protected":
                level, force, name = [*rest.split(" ", 2), "", ""][:3]
                if level.isdigit() and name:
                    self.protected[name] = SimpleNamespace(push_access_level=int(level), allow_force_push=force == "1")
        self.access = Access(frozenset(abilities))

    def protection(self, ref: str):
        """The protection of the branch REF names (its own and its wildcards'), or None."""
        return applicable(self.protected, ref[len(HEADS) :]) if ref.startswith(HEADS) else None


def parse_rules(text: str) -> tuple[Access, dict[str, SimpleNamespace]]:
    """The caller's Access and the protected branches (name -> levels) of `push_rules`' TEXT."""
    rules = Rules(text)
    return rules.access, rules.protected


def check(lines: list[str], rules: str, descends=descends) -> list[str]:
    """Why the updates of LINES (`<old> <new> <ref>`) are refused under RULES; none when allowed.
    DESCENDS(old, new) answers whether an update of a protected branch moves it forward."""
    parsed = Rules(rules)
    reasons = []
    for line in lines:
        old, new, ref = line.split()
        if ref.startswith(MERGE_REQUESTS):  # the server keeps them; a pushed one would change what is merged
            reasons.append(f"You are not allowed to change merge request refs ({ref})")
            continue
        if new != ZERO_SHA and not acceptable_ref(ref):
            reasons.append(f"The ref name is invalid: {ref}")
            continue
        protection = parsed.protection(ref)
        forced = must_move_forward(old, new, protection) and not descends(old, new)
        reason = refusal(parsed.access, ref, old, new, protection, forced, parsed.admin)
        if reason:
            reasons.append(f"{reason} ({ref})")
    return reasons


def vet(lines: list[str], rules: str) -> tuple[list[str], list[str]] | None:
    """What the server decides from a push's commands before git has its pack (transport reads them
    from the request): `check` with every protected branch's update assumed to move it forward.
    None when that refuses some update (the Python hook then runs and says why); otherwise the
    lines, and those of them whose protected branch must move forward, which only git can tell
    once the pack is in: the vetted hook (`VETTED_SCRIPT`) asks it, and refuses any update that is
    not one of the lines."""
    if check(lines, rules, descends=lambda old, new: True):
        return None
    parsed = Rules(rules)
    must = []
    for line in lines:
        old, new, ref = line.split()
        if must_move_forward(old, new, parsed.protection(ref)):
            must.append(line)
    return lines, must


def pre_receive() -> int:
    lines = [line for line in sys.stdin.read().splitlines() if line.strip()]
    reasons = check(lines, os.environ.get("CODEYARD_PUSH_RULES", ""))
    for reason in reasons:
        print(f"codeyard: {reason}", file=sys.stderr)
    return 1 if reasons else 0


JOURNAL_SCRIPT = """#!/bin/sh
# codeyard: the refs a committed ref transaction moved, appended to the push's journal and synced.
[ "$1" = committed ] && [ -n "$CODEYARD_PUSH_JOURNAL" ] || exit 0
exec dd of="$CODEYARD_PUSH_JOURNAL" oflag=append conv=notrunc,nocreat,fsync status=none
"""


VETTED_SCRIPT = f"""#!/bin/sh
# codeyard: the pre-receive of a push the server vetted from its commands (githooks.vet): every
# update must be one of CODEYARD_VETTED, and those in CODEYARD_FAST_FORWARD must move forward.
nl='
'
status=0
while read -r old new ref; do
  line="$old $new $ref"
  case "$nl$CODEYARD_VETTED$nl" in
    *"$nl$line$nl"*) ;;
    *) echo "codeyard: this update was not among the push's commands ($ref)" >&2; status=1; continue ;;
  esac
  case "$nl$CODEYARD_FAST_FORWARD$nl" in
    *"$nl$line$nl"*)
      git merge-base --is-ancestor --end-of-options "$old" "$new" >/dev/null 2>&1 ||
        {{ echo "codeyard: {NO_FORCE_PUSH} ($ref)" >&2; status=1; }} ;;
  esac
done
exit $status
"""


@functools.cache
def scripts(python: str) -> dict[str, str]:
    """The hook files codeyard installs, by name, for the Python interpreter PYTHON. (Run by the
    server: what it imports does not slow the hooks.)"""
    import shlex

    package_root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # site-packages, or src/
    start = f"import sys; sys.path.insert(0, {package_root!r}); from codeyard.githooks import main; sys.exit(main(sys.argv))"
    return {
        "pre-receive": f"#!/bin/sh\nexec {shlex.quote(python)} -I -S -c {shlex.quote(start)} pre-receive\n",
        "reference-transaction": JOURNAL_SCRIPT,
    }


VETTED_SCRIPTS = {"pre-receive": VETTED_SCRIPT, "reference-transaction": JOURNAL_SCRIPT}


def main(argv: list[str]) -> int:
    """ARGV is `sys.argv`: the program (or `-c`) and `pre-receive`."""
    if len(argv) != 2 or argv[1] != "pre-receive":
        print("usage: python -m codeyard.githooks pre-receive", file=sys.stderr)
        return 2
    return pre_receive()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
