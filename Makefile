# qoslab: `make run` (main job) and `make test` each do all set-up themselves through `make setup`.
SHELL := /bin/bash
VENV  := .venv
QOSLAB := $(VENV)/bin/qoslab
PYTEST := $(VENV)/bin/pytest

.PHONY: setup setup-run run test test-unit test-python test-java lint docs docs-gen bench clean help

help:
	@echo "make setup  - install Debian packages, create .venv, build Java modules (idempotent, root)"
	@echo "make run    - the main job: the quick campaign (Table-5 matrix) on the embedded testbed"
	@echo "make test   - all tests: lint (ruff, mypy), the docs site (make docs), JUnit, pytest unit + integration in real namespaces"
	@echo "make test-unit - lint and the fast unit tests (seconds, no root; needs .venv from make setup)"
	@echo "make docs   - the documentation site (mkdocs --strict) into site/; fails when a generated page drifted"
	@echo "make docs-gen - regenerate the CLI, schema and platform pages and the command outputs (docs/)"
	@echo "make bench  - benchmarks, JSON results in bench/results/"

setup:
	@bash scripts/setup.sh

setup-run:
	@bash scripts/setup.sh run

run: setup-run
	$(QOSLAB) campaign run playbooks/quick.yaml

test: setup lint docs test-java test-python

# The fast tests: no namespaces, no root (the .venv comes from one `make setup` as root).
test-unit: venv-check lint
	$(PYTEST) -q tests/unit

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

docs-gen: venv-check
	$(VENV)/bin/python scripts/docs_gen.py

test-java:
	mvn -B -q test

test-python:
	$(PYTEST) -q --durations=30 tests

bench: setup
	$(VENV)/bin/python bench/run_benchmarks.py

clean:
	rm -rf $(VENV) .setup
	mvn -q -B clean || true
