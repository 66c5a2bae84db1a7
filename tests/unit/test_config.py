"""Settings read from the environment."""

from __future__ import annotations

from codeyard import config


def test_archive_cache_settings(tmp_path):
    loaded = config.load({"CODEYARD_DATA_DIR": str(tmp_path), "CODEYARD_ARCHIVE_CACHE_MB": "5"})
    assert loaded.archive_cache_mb == 5 and loaded.archive_cache_dir == tmp_path / "cache" / "archives"
    assert config.load(config.to_env(loaded)) == loaded
    assert config.load({"CODEYARD_DATA_DIR": str(tmp_path)}).archive_cache_mb == 1024
