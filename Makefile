# codeyard — the two commands: `make serve` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# Today's python-gitlab, for the v4 tests, beside 1.4.0 (v3's, in the virtualenv): both are the
# package `gitlab`, so this one lives in a directory of its own that tests/v4 imports from.
GITLAB8 := $(VENV)/clients/python-gitlab-8
GITLAB8_PINS := python-gitlab==8.6.0 requests-toolbelt==1.0.0
# gitbeaker, today's Node.js client, for tests/v4/test_gitbeaker.py where npm is found (skipped elsewhere).
GITBEAKER := $(VENV)/clients/gitbeaker
HOST   ?= 127.0.0.1
PORT   ?= 8080
DATA   ?= ./data
# Server processes; empty: one per usable core (or CODEYARD_WORKERS).
WORKERS ?=
# Test processes: 3 on the 2 cores the suite is sized for, since about a quarter of the time
# tests wait (servers starting, retries, timeouts) and a third process fills it.
JOBS   ?= 3
# Python may keep compiled modules: some machines set PYTHONDONTWRITEBYTECODE, and then every
# process (each test worker, server, CLI call and git hook) compiles codeyard, its tests and
# pytest's rewritten plugins again from source.
unexport PYTHONDONTWRITEBYTECODE
# The worker that finishes first takes tests from the other.
PYTEST_PROCESSES = -n $(JOBS) --dist worksteal

.PHONY: install serve test coverage lint lock clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

$(GITLAB8)/.stamp: $(STAMP) Makefile
	rm -rf $(GITLAB8)
	$(BIN)/python -m pip install -q --no-deps --target $(GITLAB8) $(GITLAB8_PINS)
	touch $@

$(GITBEAKER)/.stamp: tests/v4/gitbeaker/package.json tests/v4/gitbeaker/package-lock.json
	rm -rf $(GITBEAKER) && mkdir -p $(GITBEAKER)
	if command -v npm >/dev/null 2>&1; then \
	  cp tests/v4/gitbeaker/package.json tests/v4/gitbeaker/package-lock.json $(GITBEAKER)/ && \
	  npm ci --prefix $(GITBEAKER) --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: tests/v4/test_gitbeaker.py will be skipped"; fi
	touch $@

install: $(STAMP)

# exec: the server is make's own child; --exit-with: it stops (as on SIGTERM) when make ends,
# even when make is killed with SIGKILL, which make cannot pass on.
serve: install
	exec $(BIN)/codeyard serve --host $(HOST) --port $(PORT) --data-dir $(DATA) $(if $(WORKERS),--workers $(WORKERS)) --exit-with $$PPID

# ruff, and the import layers of pyproject.toml's [tool.importlinter].
lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/lint-imports

test: install lint $(GITLAB8)/.stamp $(GITBEAKER)/.stamp
	$(BIN)/python -m pytest $(PYTEST_PROCESSES) $(PYTEST_ARGS)

# The suite under coverage.py, with the line coverage report (fails under 90 %). Not part of
# `make test`: on Python 3.11 tracing more than doubles the suite's CPU time.
coverage: install $(GITLAB8)/.stamp $(GITBEAKER)/.stamp
	rm -f .coverage .coverage.*
	$(BIN)/coverage run -m pytest $(PYTEST_PROCESSES) $(PYTEST_ARGS)
	$(BIN)/coverage combine -q
	$(BIN)/coverage report

# Regenerate the pinned versions from a fresh resolution of pyproject.toml.
lock:
	rm -rf .lockenv && $(PYTHON) -m venv .lockenv
	.lockenv/bin/python -m pip install -q --upgrade pip
	.lockenv/bin/python -m pip install -q '.[dev]'
	.lockenv/bin/python -m pip freeze --exclude-editable | grep -v '^codeyard' > constraints.txt
	rm -rf .lockenv

clean:
	rm -rf $(VENV) .coverage .coverage.* .pytest_cache .ruff_cache
