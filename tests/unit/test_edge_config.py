"""The HTTP edge settings: read from the environment and handed on to server processes."""

from __future__ import annotations

from codeyard import config as config_module


def test_edge_limits_have_defaults_and_come_from_the_environment(tmp_path):
    default = config_module.load({"CODEYARD_DATA_DIR": str(tmp_path)})
    assert (default.header_timeout, default.body_timeout, default.max_connections) == (20.0, 60.0, 512)
    env = {"CODEYARD_DATA_DIR": str(tmp_path), "CODEYARD_HEADER_TIMEOUT": "2.5", "CODEYARD_BODY_TIMEOUT": "7",
           "CODEYARD_MAX_CONNECTIONS": "64"}
    config = config_module.load(env)
    assert (config.header_timeout, config.body_timeout, config.max_connections) == (2.5, 7.0, 64)
    assert config_module.load(config_module.to_env(config)) == config
