# qoslab: `make run` (main job) and `make test` each do all set-up themselves through `make setup`.
SHELL := /bin/bash
VENV  := .venv
QOSLAB := $(VENV)/bin/qoslab
PYTEST := $(VENV)/bin/pytest

.PHONY: setup setup-run run test test-stages test-unit test-python test-fast test-integration test-java lint docs \
	docs-gen bench clean help venv-check test-integration-concurrent test-integration-paired test-integration-idle test-integration-serial test-pooled \
	lint-timed docs-timed test-java-timed lock
# The unit and client tests in parallel (pytest-xdist, a test file per worker: a client module's
# virtual switch on its own free loopback port). Tests marked `serial` (CPU shares against the wall
# clock) run after the parallel ones, alone. The integration tests in four lanes
# (tests/integration/lanes.py): the modules marked `concurrent` (they wait, SSH, timeouts, kill -9
# and resume, and assert no rate or time) in xdist workers, each worker's testbeds under its own
# name; the `paired` ones (data paths whose rates the kernel sets, the cores mostly idle) two at a
# time; the `idle` ones (no testbed, nothing timed, only computing) at nice 19 beside the paired
# ones; then the others one at a time with nothing beside them (timer-paced floods, CPU, timing:
# one testbed on a 2-core machine). `make test` runs the concurrent lane in the unit and client
# tests' pool (test-pooled, PARALLEL_WORKERS workers), then the paired and idle lanes together,
# then the serial lane; `make test-integration` runs the lanes alone (INTEGRATION_WORKERS workers
# for the first).
XDIST := -n auto --dist loadfile -m "not serial"
INTEGRATION_WORKERS ?= 3
# 4 workers in the pool: its modules wait (SSH, Slurm's time limits, TIME-WAIT) as much as they
# compute; one pool here measured 693 CPU-seconds in its workers' cgroups over 474 s with 3 workers
# on 2 cores, and 490 s -> 462 s going from 3 to 4 (issue 53).
PARALLEL_WORKERS ?= 4
SERIAL_FILES = $(shell grep -rl --include='test_*.py' 'pytest.mark.serial' tests/unit tests/clients)
TIMED := bash scripts/timed.sh
# Python writes the bytecode of the modules it imports, once, into .venv and src (its default; a
# machine may set PYTHONDONTWRITEBYTECODE, and then every import of every process parses source):
# `make setup` no longer compiles the 52,000 files of the test environment ahead (scripts/setup.sh).
unexport PYTHONDONTWRITEBYTECODE
JUNIT := .setup/junit

help:
	@echo "make setup  - install Debian packages, create .venv, build Java modules (idempotent, root)"
	@echo "make run    - the main job: the quick campaign (Table-5 matrix) on the embedded testbed"
	@echo "make test   - all tests: lint (ruff, mypy), the docs site (make docs), JUnit, pytest unit + clients and the"
	@echo "              integration tests that wait (parallel), then those that measure, one at a time (real"
	@echo "              namespaces); prints each stage's time, the total, the 30 slowest tests"
	@echo "make test-unit - lint and the fast unit tests (seconds, no root; needs .venv from make setup)"
	@echo "make docs   - the documentation site (mkdocs --strict) into site/; fails when a generated page drifted"
	@echo "make docs-gen - regenerate the CLI, schema and platform pages and the command outputs (docs/)"
	@echo "make bench  - benchmarks, JSON results in bench/results/"
	@echo "make lock   - requirements/lock.txt: the Python libraries' versions set-up installs (UPGRADE=1: newest)"

setup:
	@bash scripts/setup.sh

setup-run:
	@bash scripts/setup.sh run

run: setup-run
	$(QOSLAB) campaign run playbooks/quick.yaml

# Each stage's wall time and the total are printed at the end (issue 53: <= 20 min on a clean clone).
test:
	@rm -f .setup/test-times.txt $(JUNIT)-*.xml
	@$(TIMED) "make test (total)" $(MAKE) --no-print-directory test-stages; rc=$$?; \
	  $(VENV)/bin/python scripts/slowest.py 30 $(JUNIT)-*.xml; \
	  echo "stage times:"; cat .setup/test-times.txt; exit $$rc

test-stages:
	@$(TIMED) "setup" $(MAKE) --no-print-directory setup
	@$(TIMED) "test-java | lint | docs" $(MAKE) --no-print-directory -j3 test-java-timed lint-timed docs-timed
	@$(TIMED) "unit+clients+concurrent" $(MAKE) --no-print-directory test-pooled
	@$(TIMED) "integration, paired | idle" $(MAKE) --no-print-directory -j2 test-integration-paired test-integration-idle
	@$(TIMED) "integration, serial" $(MAKE) --no-print-directory test-integration-serial

# make test runs the Java tests (mvn test: the RayTracer's renders, 64 CPU-seconds, 47 s here) beside
# lint (ruff, mypy: one core) and the docs site (docs_gen --check, mkdocs: one core), each with its
# own [time] line, after a set-up that builds the Java modules without their tests beside uv's
# install of the Python environment without bytecode (8 s and 7 s on a clean clone here). Before
# (issue 53): the Java tests in the set-up beside uv compiling 52,000 files' bytecode (1m28s-1m42s),
# then lint | docs (13 s). `make test-java` runs them alone.
test-java-timed:
	@$(TIMED) test-java $(MAKE) --no-print-directory test-java

lint-timed:
	@$(TIMED) lint $(MAKE) --no-print-directory lint

docs-timed:
	@$(TIMED) docs $(MAKE) --no-print-directory docs

# The fast tests: no namespaces, no root (the .venv comes from one `make setup` as root), in parallel.
test-unit: venv-check lint
	$(PYTEST) -q $(XDIST) tests/unit
	$(if $(filter tests/unit/%,$(SERIAL_FILES)),$(PYTEST) -q -m serial $(filter tests/unit/%,$(SERIAL_FILES)))

venv-check:
	@test -x $(PYTEST) || { echo "error: no .venv: run 'make setup' once (as root)" >&2; exit 2; }

lint: venv-check
	$(VENV)/bin/ruff check src tests bench analysis/notebooks
	$(VENV)/bin/mypy
	MYPYPATH=src $(VENV)/bin/mypy analysis/notebooks/report.py

# The site: the generated pages must match the code (scripts/docs_gen.py --check), then a strict build.
docs: venv-check
	$(VENV)/bin/python scripts/docs_gen.py --check
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# requirements/lock.txt: every Python library's version, as scripts/setup.sh installs them (uv); the
# pins already there are kept (UPGRADE=1: the newest that pyproject.toml allows), for Debian 12's python3.
lock: venv-check
	$(VENV)/bin/uv pip compile -q pyproject.toml --extra test --extra cluster --python /usr/bin/python3 \
	  $(if $(UPGRADE),--upgrade) --custom-compile-command "make lock" -o requirements/lock.txt

docs-gen: venv-check
	$(VENV)/bin/python scripts/docs_gen.py

test-java:
	mvn -B -q test

test-python: test-fast test-integration

test-fast: venv-check
	@mkdir -p .setup
	$(PYTEST) -q $(XDIST) --durations=30 --junitxml=$(JUNIT)-fast.xml tests/unit tests/clients
	$(if $(SERIAL_FILES),$(PYTEST) -q -m serial --junitxml=$(JUNIT)-serial.xml $(SERIAL_FILES))

# make test's parallel stage: the unit and client tests and the integration tests' concurrent lane in
# one pool of PARALLEL_WORKERS xdist workers (the integration modules handed out first, longest
# first: they wait on SSH, leases and TIME-WAIT while the unit tests use the cores); then the
# `serial` unit tests alone.
test-pooled: venv-check
	@mkdir -p .setup
	$(PYTEST) -q -n $(PARALLEL_WORKERS) --dist loadfile --no-loadscope-reorder -m "not serial and (concurrent or not integration)" \
	  --durations=30 --junitxml=$(JUNIT)-pooled.xml tests/integration tests/unit tests/clients
	$(if $(SERIAL_FILES),$(PYTEST) -q -m serial --junitxml=$(JUNIT)-serial.xml $(SERIAL_FILES))

test-integration: test-integration-concurrent test-integration-paired test-integration-idle test-integration-serial

test-integration-concurrent: venv-check
	@mkdir -p .setup
	$(PYTEST) -q -n $(INTEGRATION_WORKERS) --dist loadfile --no-loadscope-reorder -m concurrent --durations=30 \
	  --junitxml=$(JUNIT)-integration-concurrent.xml tests/integration

# The paired lane (tests/integration/lanes.py PAIRED): data-path modules whose rates the kernel sets
# and that leave the cores mostly idle, two at a time (243 s one at a time, 143-145 s paired here).
test-integration-paired: venv-check
	@mkdir -p .setup
	$(PYTEST) -q -n 2 --dist loadfile --no-loadscope-reorder -m paired --durations=30 \
	  --junitxml=$(JUNIT)-integration-paired.xml tests/integration

# The idle lane (tests/integration/lanes.py IDLE): modules with no testbed and nothing timed that only
# compute, at nice 19 beside the paired lane, on the cycles its modules leave idle.
test-integration-idle: venv-check
	@mkdir -p .setup
	nice -n 19 $(PYTEST) -q -m idle --durations=30 --junitxml=$(JUNIT)-integration-idle.xml tests/integration

test-integration-serial: venv-check
	@mkdir -p .setup
	$(PYTEST) -q -m "not concurrent and not paired and not idle" --durations=30 --junitxml=$(JUNIT)-integration.xml tests/integration

bench: setup
	$(VENV)/bin/python bench/run_benchmarks.py

clean:
	rm -rf $(VENV) .setup
	mvn -q -B clean || true
