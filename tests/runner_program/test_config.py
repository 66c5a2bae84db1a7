"""The runner's configuration file."""

from __future__ import annotations

import stat

import pytest

from codeyard.runner import config


def test_written_private_and_read_back(tmp_path):
    path = tmp_path / "conf" / "runner.toml"
    runner = config.RunnerConfig(url="http://host:8080", token='t"ok\\en', id=7, description="büild \x7f box\n",
                                 tags=("docker", "linux"))  # fmt: skip
    config.write(path, runner)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert config.load(path) == runner
    assert runner.builds_path(path) == tmp_path / "conf" / "builds"


def test_an_existing_file_is_never_replaced(tmp_path):
    path = tmp_path / "runner.toml"
    path.write_text("keep")
    with pytest.raises(config.ConfigError, match="already exists"):
        config.write(path, config.RunnerConfig(url="http://h", token="t"))
    assert path.read_text() == "keep"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("url = 'http://h'\n", "`token` is missing"),
        ("token = 'x'\n", "`url` is missing"),
        ("url = 'http://h'\ntoken = 'x'\ntags = 'a'\n", "`tags` must be a list"),
        ("url = 'http://h'\ntoken = 'x'\nid = 'a'\n", "`id` must be an integer"),
        ("url = \n", "Invalid value"),
        ("url = 'ftp://h'\ntoken = 'x'\n", "must be http"),
    ],
)
def test_bad_files_are_refused_clearly(tmp_path, content, message):
    path = tmp_path / "runner.toml"
    path.write_text(content)
    with pytest.raises(config.ConfigError, match=message):
        config.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(config.ConfigError, match="runner register"):
        config.load(tmp_path / "none.toml")


def test_server_url_and_tags():
    assert config.server_url(" https://code.example.com/ci/ ") == "https://code.example.com"
    assert config.server_url("http://h:8080/prefix") == "http://h:8080/prefix"
    for bad in ("h:8080", "file:///etc", "http://", "http://h/x?y", "ext::sh -c id"):
        with pytest.raises(config.ConfigError):
            config.server_url(bad)
    assert config.parse_tags(" a, b,,a ,c ") == ("a", "b", "c")
    assert config.parse_tags("") == ()


def test_default_path_is_in_the_users_configuration_directory(monkeypatch, tmp_path):
    """Not the working directory: run in a checkout, the file with its secret and the builds beside it
    would sit in the source tree."""
    monkeypatch.delenv("CODEYARD_RUNNER_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config.default_path() == tmp_path / "home" / ".config" / "codeyard" / "runner.toml"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config.default_path() == tmp_path / "xdg" / "codeyard" / "runner.toml"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # the XDG spec: relative paths are ignored
    assert config.default_path() == tmp_path / "home" / ".config" / "codeyard" / "runner.toml"
    monkeypatch.setenv("CODEYARD_RUNNER_CONFIG", "/etc/x.toml")
    assert str(config.default_path()) == "/etc/x.toml"
