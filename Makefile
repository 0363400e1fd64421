# The two commands of the README: `make run` and `make test`.
# Both set themselves up on a fresh machine with only Python 3.11.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/pip --quiet --disable-pip-version-check
# The lock tool, pinned: `make lock` writes requirements/*.txt from pyproject.toml.
UV     := uv==0.13.9
SETS   := run test lint bench docs

.PHONY: run test drill fuzz lint helm-check bench soak docs lock clean

# One install set per target, each from its lock: requirements/<set>.txt pins every
# package with its hashes (the runtime dependencies plus the set's extra). A set is
# installed again when its lock or pyproject.toml changes; production installs only
# the runtime dependencies (pyproject's `dependencies`). A cold install takes minutes: pip
# says what it fetches as it goes (not --quiet), and each step ends with a line giving its
# time, so the screen is never silent for long.
stamp = $(VENV)/.installed-$(1)-$(shell cat requirements/$(1).txt pyproject.toml | cksum | cut -d' ' -f1)
# `timed step command…`: the command, then one line with what it was and how long it took.
timed = start=$$$$(date +%s) && $(2) && echo "make: $(1) ($$$$(( $$$$(date +%s) - start )) s)"

define install_set
$(call stamp,$(1)): requirements/$(1).txt pyproject.toml
	@test -d $(VENV) || { $(call timed,created $(VENV),$(PYTHON) -m venv $(VENV)); }
	@echo "make: installing the locked '$(1)' set (requirements/$(1).txt) into $(VENV)"
	@$(call timed,installed the '$(1)' set,$(BIN)/pip install --disable-pip-version-check --require-hashes -r requirements/$(1).txt)
	@$(call timed,installed this checkout (pip install -e .),$(PIP) install --no-deps -e .)
	@rm -f $(VENV)/.installed-$(1)-* && touch $$@
endef
$(foreach set,$(SETS),$(eval $(call install_set,$(set))))

# The development settings file of this checkout (in PETSTORE_VAR_DIR when that is set),
# passed explicitly to `make run`'s processes; a second terminal exports the same name.
# The ports are devtools/devserver.py's (petstore/ports.py's defaults): a port named on the
# command line (`make run PORT=8001 HTTPS_PORT=8444`) reaches it in the environment, as make
# passes its command line's variables on.
LOCAL_ENV := $(or $(PETSTORE_VAR_DIR),$(CURDIR)/var)/local.env
RUN_ENV := PETSTORE_ENV_FILE=$(LOCAL_ENV)

# The service on embedded defaults as production serves it (granian behind the Caddy TLS edge,
# petstore/Procfile), with its workers, beat and the dev DNS server, on PostgreSQL and Redis
# from their wheels (devtools/embedded.py: data in var/, unix sockets, stopped with the rest;
# none starts where DATABASE_URL or REDIS_URL names a server). devtools/devserver.py `run`:
# one run per checkout; first the settings file (devtools/localenv.py: DEBUG=1, a key of this
# checkout's own that seals its certificates' private keys, a metrics token, and this run's
# ports, so `manage.py` in another terminal uses them), then it stops at once, in one line
# with a command to try, if one of its ports is taken; then the servers, migrate, the demo
# rows, and honcho.
run: $(call stamp,run)
	$(RUN_ENV) $(BIN)/python -m devtools.devserver run

# The whole suite. Without DATABASE_URL/REDIS_URL it starts its own PostgreSQL and Redis from
# their wheels (tests/settings.py); .ci/run points it at the machine's. On three pytest-xdist
# workers, each with its own test database and Redis databases (tests/settings.py): the tests
# wait on the servers, workers and browsers they start, so a third worker on two cores fills
# those waits (docs/adr/0022-the-suite-on-three-workers.md). No test may rely on
# `xdist_group`: with pytest 9.2, xdist 3.8's loadgroup spreads a group over the workers
# (pytest-dev/pytest-xdist#1386); `make drill` runs its module in one process.
# Here rather than in pyproject's addopts, so that `.venv/bin/pytest tests/some_file.py` runs
# in one process; `make test PYTEST_XDIST=` runs the whole suite so too.
PYTEST_XDIST ?= -n 3 --dist loadgroup
# The units' boot drill (tests/deploy/test_systemd_boot.py: systemd 252 in systemd-nspawn,
# root only) is `make drill`'s, not the suite's: it boots a whole platform for minutes.
PYTEST_MARKERS ?= -m "not systemd"
# The slowest tests named at the end of each run, where the suite's time is spent.
PYTEST_DURATIONS ?= --durations=25
test: $(call stamp,test)
	$(BIN)/pytest $(PYTEST_XDIST) $(PYTEST_MARKERS) $(PYTEST_DURATIONS) $(PYTEST_ARGS)

# The units booted under a real systemd: needs root, systemd-nspawn and the drill's root file
# system (.ci/systemd-drill-image /var/lib/machines/petstore-drill makes it). One container,
# in this one process (no -n: xdist stays loaded for the module's xdist_group marker); -rA
# prints each scenario's counts (requests answered through the edge, retries), and the last
# line its wall time, failed or not.
drill: $(call stamp,test)
	@start=$$(date +%s); \
	$(BIN)/pytest -rA -m systemd tests/deploy/test_systemd_boot.py $(PYTEST_ARGS); status=$$?; \
	echo "make: drill ($$(( $$(date +%s) - start )) s)"; exit $$status

# The fuzzers' long search (tests/security/test_fuzz.py): the suite runs each API fuzzer on
# a few examples; this runs FUZZ_EXAMPLES of each, with no per-test timeout.
FUZZ_EXAMPLES ?= 500
fuzz: $(call stamp,test)
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest tests/security/test_fuzz.py --timeout=0 $(PYTEST_ARGS)

# Benchmarks on the local PostgreSQL and Redis: the API on production's web line against the
# bare-Django floor and the FastAPI peer, the server table (gunicorn, granian, the peer), the
# domain sweep (its zone served by Debian's Knot DNS) and the TLS edge (with Debian's Pebble as
# the ACME CA); writes bench/results.md and prints every target with its ratio, met or MISSED.
bench: $(call stamp,bench)
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	@test -x /usr/bin/pebble || (apt-get update -qq && apt-get install -y -qq pebble)
	@test -x /usr/sbin/knotd || (apt-get update -qq && apt-get install -y -qq knot)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# A bounded soak on loopback (about 2 minutes; SOAK_SECONDS, SOAK_RATE): gunicorn, a real
# worker and the loopback DNS server on PostgreSQL `soak` and Redis 12/13; writes docs/soak.md.
soak: $(call stamp,bench)
	$(BIN)/python bench/soak.py

# The gates before a commit (also in .pre-commit-config.yaml) and in CI: lint, format,
# types, the import contracts (pyproject's [tool.importlinter]), Django's checks, no model
# change without its migration, and every migration's SQL through squawk
# (devtools/migrationlint.py, on a scratch database). The settings
# must import (mypy's Django plugin loads them), on a throwaway secret and without
# this checkout's var/local.env.
LINT_ENV := SECRET_KEY=lint DEBUG=1 PETSTORE_ENV_FILE=

# mypy reads the tests too, so lint installs their set beside its own (the locks pin the
# same versions).
lint: $(call stamp,lint) $(call stamp,test)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(LINT_ENV) $(BIN)/mypy
	$(BIN)/lint-imports
	$(LINT_ENV) $(BIN)/python manage.py check
	$(LINT_ENV) $(BIN)/python manage.py makemigrations --check --dry-run
	$(LINT_ENV) $(BIN)/python -m devtools.migrationlint

# The Helm chart (deploy/helm/petstore) rendered by Helm's engine offline, `helm lint --strict`,
# and every manifest checked against a pinned Kubernetes version's schemas
# (devtools/helmcheck.py); no cluster, no helm binary.
helm-check: $(call stamp,test)
	$(BIN)/python -m devtools.helmcheck

# The documentation site (mkdocs.yml, docs/) into site/, every warning an error: a broken
# link or anchor, or a page the nav leaves out, fails the build. The API reference page draws
# the OpenAPI document, written first from the code beside it (docs/openapi.json, not
# committed), on the same settings as lint.
docs: $(call stamp,docs)
	$(LINT_ENV) LOG_LEVEL=ERROR $(BIN)/python manage.py spectacular --format openapi-json --validate --fail-on-warn --file docs/openapi.json
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Rewrite the locks after a change to pyproject.toml: the full set first, then each
# install set within it, so that every set pins the same versions; then production's, the
# runtime dependencies alone (docs/operators/production.md; the Dockerfile), and last the
# build backend production builds the project with (requirements/build.in: pyproject's
# [build-system] requires), so that `pip install --no-build-isolation .` downloads nothing.
UV_COMPILE = $(BIN)/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes

lock:
	@test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PIP) install $(UV)
	$(UV_COMPILE) --all-extras -o requirements/dev.txt pyproject.toml
	for set in $(SETS); do \
	  $(UV_COMPILE) --extra $$set -c requirements/dev.txt -o requirements/$$set.txt pyproject.toml || exit 1; \
	done
	$(UV_COMPILE) -c requirements/dev.txt -o requirements/production.txt pyproject.toml
	$(UV_COMPILE) -c requirements/dev.txt -o requirements/build.txt requirements/build.in

clean:
	rm -rf $(VENV) var site docs/openapi.json
