"""The README's shell commands run as written in a fresh checkout after `make serve`: `make` targets
exist, project programs are named by their path in the checkout (`.venv/bin/codeyard`, nothing
puts them on the PATH), and their subcommands and options exist."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Programs the README may assume on the PATH; everything else is the project's own.
SYSTEM_PROGRAMS = {"make", "curl", "git"}


def readme_commands() -> list[list[str]]:
    """The words of every line of the README's ```sh blocks, without comments."""
    blocks = re.findall(r"^```sh\n(.*?)^```", (ROOT / "README.md").read_text(), flags=re.S | re.M)
    lines = [line for block in blocks for line in block.splitlines()]
    return [words for line in lines if (words := shlex.split(line, comments=True))]


def problem(words: list[str]) -> str | None:
    """Why WORDS would not run in the checkout, or None."""
    program = words[0]
    if program == "make":
        targets = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        dry_run = subprocess.run(["make", "-n", "-C", str(ROOT), *targets], capture_output=True, text=True, timeout=60)
        return None if dry_run.returncode == 0 else dry_run.stderr
    if program in SYSTEM_PROGRAMS:
        return None
    if "/" not in program:
        return f"`{program}` is not on the PATH of a fresh checkout; name it by its path (.venv/bin/{program})"
    path = ROOT / program
    if not path.is_file():
        return f"{program} does not exist in the checkout"
    return _unknown_words(path, words[1:])


def _unknown_words(path: Path, args: list[str]) -> str | None:
    """The subcommands in ARGS (the words before the first option) must exist, and so must its options."""
    subcommands = args[: next((i for i, word in enumerate(args) if word.startswith("-")), len(args))]
    shown = subprocess.run([str(path), *subcommands, "--help"], capture_output=True, text=True, timeout=60)
    if shown.returncode != 0:
        return f"{path.name} {' '.join(subcommands)}: {shown.stderr.strip()}"
    unknown = [word for word in args if word.startswith("--") and word.split("=")[0] not in shown.stdout]
    return f"{path.name} {' '.join(subcommands)} has no {', '.join(unknown)}" if unknown else None


COMMANDS = readme_commands()


def test_the_readme_has_shell_commands():
    assert [words[:2] for words in COMMANDS][:2] == [["make", "serve"], ["make", "test"]]
    assert any(words[0] == ".venv/bin/codeyard" for words in COMMANDS)


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(words[:3]) for words in COMMANDS])
def test_every_readme_command_runs_as_written(words):
    found = problem(words)
    assert found is None, found


def test_an_unrunnable_command_is_caught():
    assert "not on the PATH" in problem(["codeyard", "runner", "run"])
    assert "has no --nope" in problem([".venv/bin/codeyard", "runner", "run", "--nope"])
    assert "No such command" in problem([".venv/bin/codeyard", "runners", "run"])
    assert "does not exist" in problem(["./bin/codeyard", "serve"])
    assert problem(["make", "no-such-target"])
