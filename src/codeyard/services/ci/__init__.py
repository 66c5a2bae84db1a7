"""CI: .gitlab-ci.yml, pipelines, builds, traces (and the runners' side beside them)."""
