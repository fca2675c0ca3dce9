# Redline: `make run` serves the app on the embedded defaults (runserver); `make serve` runs the
# production server; `make test` runs the suite;
# `make lint` runs ruff, mypy and import-linter.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=

.PHONY: run serve test install migrate lint bench clean

# The Python client (clients/python, package `redline`) is installed too: its tests run in the suite.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m pip install --quiet -e ./clients/python
	touch $(STAMP)

install: $(STAMP)

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
	$(PY) -m pytest $(PYTEST_ARGS)

# ruff (lint rules and formatting), mypy with the Django and DRF plugins over the whole tree,
# and import-linter: the layer rules of docs/architecture.md ([tool.importlinter] in pyproject).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports

bench: migrate
	$(PY) bench/storage.py
	$(PY) bench/reanchor.py
	$(PY) bench/estimators.py

clean:
	rm -rf $(VENV) var
