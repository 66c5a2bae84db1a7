"""Settings read from the environment."""

from __future__ import annotations

import os

import pytest

from codeyard import config


def test_archive_cache_settings(tmp_path):
    loaded = config.load({"CODEYARD_DATA_DIR": str(tmp_path), "CODEYARD_ARCHIVE_CACHE_MB": "5"})
    assert loaded.archive_cache_mb == 5 and loaded.archive_cache_dir == tmp_path / "cache" / "archives"
    assert config.load(config.to_env(loaded)) == loaded
    assert config.load({"CODEYARD_DATA_DIR": str(tmp_path)}).archive_cache_mb == 1024


def test_server_processes_follow_the_usable_cores(tmp_path):
    base = {"CODEYARD_DATA_DIR": str(tmp_path)}
    assert config.load(base).workers == len(os.sched_getaffinity(0)) == config.usable_cores()
    loaded = config.load({**base, "CODEYARD_WORKERS": "3"})
    assert loaded.workers == 3 and config.load(config.to_env(loaded)) == loaded
    assert config.load({**base, "CODEYARD_WORKERS": " "}).workers == config.usable_cores()
    assert config.load(base, workers=5).workers == 5
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(ValueError, match="CODEYARD_WORKERS"):
            config.load({**base, "CODEYARD_WORKERS": bad})
