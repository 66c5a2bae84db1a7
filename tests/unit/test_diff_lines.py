"""Lines of a diff as GitLab 8 numbered them (commit comments on a line), and contributors from git."""

from __future__ import annotations

import os
import subprocess

from codeyard.git import diffs, repo

PATCH = """--- a/a.txt
+++ b/a.txt
@@ -1,4 +1,4 @@
 one
-two
+TWO
 three
-four
\\ No newline at end of file
+four
@@ -10 +10,2 @@ a function
-ten
+TEN
+eleven"""


def test_line_positions():
    assert diffs.line_position(PATCH, 2, "new") == (3, 2)  # after the removed "two"
    assert diffs.line_position(PATCH, 2, "old") == (2, 2)  # a removed line takes the next line's new number
    assert diffs.line_position(PATCH, 4, "old") == (4, 4)
    assert diffs.line_position(PATCH, 4, "new") == (5, 4)  # the "\\ No newline" marker counts for nothing
    assert diffs.line_position(PATCH, 10, "old") == (10, 10)
    assert diffs.line_position(PATCH, 11, "new") == (11, 11)
    for line, kind in ((1, "new"), (1, "old"), (3, "new"), (12, "new"), (0, "new")):
        assert diffs.line_position(PATCH, line, kind) is None  # context lines and lines beyond
    assert diffs.line_position("--- a/x\n+++ b/x\n", 1, "new") is None
    assert diffs.line_position("Binary files a/x and b/x differ", 1, "new") is None
    assert diffs.line_position("--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+--- not a header\n", 1, "new") == (0, 1)


def test_contributors_read_names_from_the_objects(tmp_path):
    """A name git would happily print with a separator in it cannot split a record."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "HOME": str(tmp_path),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com"}  # fmt: skip
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], env=env, check=True)
    for name, email, file in (("Odd\x1e\x1fName", "odd@example.com", "tab\there.txt"), ("Ev", "ev@example.com", "é.txt")):
        (work / file).write_text("x\ny\n")
        subprocess.run(["git", "add", "."], cwd=work, env=env, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "c"], cwd=work, check=True,
                       env={**env, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email})  # fmt: skip
    found = repo.contributors(work / ".git", "main")
    assert [(c.name, c.email, c.commits, c.additions, c.deletions) for c in found] == [
        ("Ev", "ev@example.com", 1, 2, 0),
        ("Odd\x1e\x1fName", "odd@example.com", 1, 2, 0),
    ]
    assert repo.contributors(work / ".git", "main", bound=1)[0].email == "ev@example.com"
