"""`codeyard runner register|run` as processes, without a server: errors are clear, and a runner
whose server does not answer keeps asking."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from codeyard.runner import config

from ..support import free_port


def environment(home) -> dict[str, str]:
    """The tests' environment with HOME at HOME and no runner configuration named."""
    env = {k: v for k, v in os.environ.items() if k not in ("CODEYARD_RUNNER_CONFIG", "XDG_CONFIG_HOME")}
    return {**env, "HOME": str(home)}


def runner(*args, cwd, **kwargs):
    return subprocess.run([sys.executable, "-m", "codeyard", "runner", *args], cwd=cwd, env=environment(cwd / "home"),
                          capture_output=True, text=True, timeout=60, **kwargs)  # fmt: skip


def test_help(tmp_path):
    for command in ([], ["register"], ["run"]):
        result = runner(*command, "--help", cwd=tmp_path)
        assert result.returncode == 0 and "Usage:" in result.stdout
    assert "ON THIS HOST" in runner("--help", cwd=tmp_path).stdout


def test_register_refuses_bad_input_and_an_unreachable_server(tmp_path):
    bad = runner("register", "--url", "ftp://x", "--registration-token", "t", cwd=tmp_path)
    assert bad.returncode != 0 and "must be http" in bad.stderr
    tags = runner("register", "--url", "http://127.0.0.1:1", "--registration-token", "t", "--tags", "a,b\nc", cwd=tmp_path)
    assert tags.returncode != 0 and "invalid tag" in tags.stderr
    down = runner("register", "--url", f"http://127.0.0.1:{free_port()}", "--registration-token", "t", cwd=tmp_path)
    assert down.returncode != 0 and "registration failed" in down.stderr
    default = tmp_path / "home" / ".config" / "codeyard" / "runner.toml"
    assert not default.exists() and not list(tmp_path.glob("*.toml"))
    default.parent.mkdir(parents=True)
    default.write_text("x")
    exists = runner("register", "--url", "http://127.0.0.1:1", "--registration-token", "t", cwd=tmp_path)
    assert exists.returncode != 0 and "already exists" in exists.stderr


def test_run_without_a_configuration(tmp_path):
    result = runner("run", "--config", str(tmp_path / "none.toml"), cwd=tmp_path)
    assert result.returncode != 0 and "runner register" in result.stderr


def _wait_for_output(path, text, count=1, timeout=60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        output = path.read_text(errors="replace")
        if output.count(text) >= count or time.monotonic() > deadline:
            return output
        time.sleep(0.1)


def test_run_keeps_going_while_the_server_is_unreachable_and_stops_on_sigterm(tmp_path):
    """With the default configuration (in the user's configuration directory): run in a checkout, it
    leaves nothing there."""
    home, checkout = tmp_path / "home", tmp_path / "checkout"
    checkout.mkdir()
    directory = home / ".config" / "codeyard"
    config.write(directory / "runner.toml", config.RunnerConfig(url=f"http://127.0.0.1:{free_port()}", token="t" * 30, id=1))
    log = tmp_path / "runner.log"
    process = subprocess.Popen([sys.executable, "-m", "codeyard", "runner", "run", "--poll-interval", "0.1"],
                               cwd=checkout, env=environment(home), stdout=log.open("wb"), stderr=subprocess.STDOUT)  # fmt: skip
    try:
        output = _wait_for_output(log, "asking for a build failed", count=3)
        assert process.poll() is None, output
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    output = log.read_text()
    assert process.returncode == 0, output
    # It backs off: the poll interval after the first error, then 1 s, doubling (up to a minute).
    assert [
        line.rsplit("; ", 1)[1] for line in output.splitlines() if "asking for a build failed" in line
    ][:3] == ["again in 0.1 s", "again in 1.0 s", "again in 2.0 s"]
    assert "ConnectError" in output and "t" * 30 not in output
    assert (directory / "builds").is_dir() and list(checkout.iterdir()) == []
