"""The runner talks to the server only over HTTP: its package imports nothing else of codeyard, and
the server's import graph does not load it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import codeyard.runner

PACKAGE = Path(codeyard.runner.__file__).parent


def _imports(path: Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield 0, alias.name
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or ""


def test_runner_modules_import_nothing_of_the_server():
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 8
    for path in modules:
        for level, name in _imports(path):
            assert level <= 1, f"{path.name} imports from outside the runner package (level {level} {name})"
            if level == 0:
                assert name.split(".")[0] != "codeyard" or name.startswith("codeyard.runner"), f"{path.name} imports {name}"


def test_loading_the_runner_loads_no_server_module():
    code = (
        "import sys, pkgutil, importlib, codeyard.runner as r\n"
        "for m in pkgutil.iter_modules(r.__path__): importlib.import_module('codeyard.runner.' + m.name)\n"
        "print(sorted(n for n in sys.modules if n.startswith('codeyard') and not n.startswith('codeyard.runner')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "['codeyard']"


def test_the_server_does_not_load_the_runner():
    code = "import sys, codeyard.cli, codeyard.app; print(any(n.startswith('codeyard.runner') for n in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
