# Redline: `make run` serves the app on the embedded defaults (runserver); `make serve` runs the
# production server; `make test` runs the suite; `make lint` runs ruff, mypy, import-linter,
# deptry and eslint; `make lock` re-resolves the dependency locks.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
# `make test` runs pytest-xdist workers, one a core by default: PYTEST_WORKERS=0 runs in one
# process, and PYTEST_ARGS adds options (`-k questions`; its own `-n 2` wins too).
PYTEST_WORKERS ?= auto
PYTEST_ARGS ?=

.PHONY: run serve test install lock migrate lint bench clean

# Every third-party package comes from the lock, checked against its SHA-256 (--require-hashes).
# pip installs uv alone (requirements-uv.lock, hashed too); uv then installs the lock, about 20
# times faster than pip, and the project and the Python client (clients/python, package
# `redline`: its tests run in the suite) on top without resolving anything again.
# requirements-dev.lock is requirements.lock plus the tools (tests, lint, `make lock`).
LOCK := requirements-dev.lock
UV := $(VENV)/bin/uv
$(STAMP): requirements.lock requirements-dev.lock requirements-uv.lock pyproject.toml \
		clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements-uv.lock
	$(UV) pip install --quiet --python $(PY) --require-hashes -r $(LOCK)
	$(UV) pip install --quiet --python $(PY) --no-deps -e . -e ./clients/python
	touch $(STAMP)

install: $(STAMP)

# Re-resolves the locks from pyproject.toml (and the client's) after a dependency changes,
# keeping every pin that still fits; `make lock LOCK_ARGS=--upgrade` takes the newest releases.
LOCK_ARGS ?=
UV_COMPILE := $(UV) pip compile --python-version 3.11 --generate-hashes \
	--custom-compile-command 'make lock' --quiet
lock: install
	$(UV_COMPILE) pyproject.toml clients/python/pyproject.toml --extra dev $(LOCK_ARGS) \
		-o requirements-dev.lock
	$(UV_COMPILE) pyproject.toml clients/python/pyproject.toml -c requirements-dev.lock \
		-o requirements.lock
	echo uv | $(UV_COMPILE) - -c requirements-dev.lock -o requirements-uv.lock

migrate: install
	mkdir -p $${REDLINE_DATA_DIR:-var}
	$(PY) manage.py migrate --noinput

run: migrate
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py demo_setup
	$(PY) manage.py runserver $(HOST):$(PORT)

# The production server (docs/operations.md): gunicorn with uvicorn workers over config.asgi,
# on HOST:PORT against the configured database (DATABASE_URL, REDIS_URL, ...; the embedded
# SQLite file without them).
serve: migrate
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(VENV)/bin/gunicorn -c gunicorn.conf.py config.asgi --bind $(HOST):$(PORT)

test: install
	$(PY) -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# eslint for static/js (package.json, eslint.config.js): `npm ci` installs the exact tools of
# package-lock.json into node_modules, again only when package.json or the lock changes.
NODE_STAMP := node_modules/.installed-stamp
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

# ruff (lint rules and formatting), mypy with the Django and DRF plugins over the whole tree,
# import-linter: the dependency rules of docs/architecture.md, the layers inside each app and no
# import circles ([tool.importlinter] in pyproject), deptry ([tool.deptry]): the server's code
# imports only [project].dependencies and uses each; tests and bench/ may use the dev extra too;
# and eslint on the page scripts (static/js, eslint.config.js).
lint: install $(NODE_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/deptry .
	$(VENV)/bin/deptry . --ignore DEP002,DEP004 \
		--exclude '\.venv|\.git|clients|docs|examples|static|templates|var|node_modules'
	npx --no-install eslint static/js

bench: migrate
	$(PY) bench/storage.py
	$(PY) bench/reanchor.py
	$(PY) bench/estimators.py

clean:
	rm -rf $(VENV) var node_modules
