"""`make test` says which databases the suite ran on: SQLite always, PostgreSQL when it answered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import HAVE_POSTGRES, POSTGRES_URL
from .support import free_port

ROOT = Path(__file__).resolve().parents[1]


def suite_output(postgres_url: str) -> str:
    """The output of a one-test run of the suite (its `-q`, as `make test` runs it): a test that runs no
    git and no database, for the run's start-up and summary are what is read."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEYARD_TEST_", "PYTEST_"))}
    # Without the installed plugins (hypothesis, schemathesis, xdist): the lines come from
    # tests/conftest.py, and importing those was most of the run's start.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/unit/test_refs.py::test_head_is_a_revision_not_a_branch_name"],
        cwd=ROOT, env={**env, "CODEYARD_TEST_POSTGRES_URL": postgres_url}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


def test_a_run_without_postgresql_says_so():
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/test"
    assert f"databases: SQLite only (no PostgreSQL answers at {url})" in suite_output(url)


@pytest.mark.skipif(not HAVE_POSTGRES, reason="no PostgreSQL answers")
def test_a_run_with_postgresql_names_both():
    assert f"databases: SQLite and PostgreSQL ({POSTGRES_URL})" in suite_output(POSTGRES_URL)
