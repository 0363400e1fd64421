# The two commands of the README: `make run` and `make test`.
# Both set themselves up on a fresh machine with only Python 3.11.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
PORT   ?= 8000

.PHONY: run test lint bench soak clean

$(STAMP): pyproject.toml
	@test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e ".[dev]"
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

# The service on embedded defaults (SQLite, filesystem broker) with its worker and beat.
# Its development settings (var/local.env, DEBUG=1) apply only where PETSTORE_ENV_FILE
# names them: here, and in a terminal that exports it (README, First steps).
run: export PETSTORE_ENV_FILE := var/local.env
run: $(STAMP) var/local.env
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py loaddemo
	PORT=$(PORT) $(BIN)/python manage.py loaddomainsdemo
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/honcho --procfile petstore/Procfile --app-root . start --port $(PORT)

var/local.env:
	@mkdir -p var
	@printf '# Development settings for this checkout, written by `make run`.\nDEBUG=1\n' > $@

# The whole suite. Without DATABASE_URL/REDIS_URL it runs on SQLite and skips
# only the tests that need a server, saying why; .ci/run points it at both.
test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

# Benchmarks against their floors on the local PostgreSQL and Redis; writes bench/results.md.
bench: $(STAMP)
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# A bounded soak on loopback (about 2 minutes; SOAK_SECONDS, SOAK_RATE): gunicorn, a real
# worker and the loopback DNS server on PostgreSQL `soak` and Redis 12/13; writes docs/soak.md.
soak: $(STAMP)
	$(BIN)/python bench/soak.py

# The gates before a commit (also in .pre-commit-config.yaml) and in CI: lint, format,
# types, Django's checks, and no model change without its migration. The settings
# must import (mypy's Django plugin loads them), on a throwaway secret and without
# this checkout's var/local.env.
LINT_ENV := SECRET_KEY=lint DEBUG=1 PETSTORE_ENV_FILE=

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(LINT_ENV) $(BIN)/mypy
	$(LINT_ENV) $(BIN)/python manage.py check
	$(LINT_ENV) $(BIN)/python manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) var
