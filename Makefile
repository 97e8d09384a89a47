# qoslab: `make run` (main job) and `make test` each do all set-up themselves through `make setup`.
SHELL := /bin/bash
VENV  := .venv
QOSLAB := $(VENV)/bin/qoslab
PYTEST := $(VENV)/bin/pytest

.PHONY: setup run test test-python test-java bench clean help

help:
	@echo "make setup  - install Debian packages, create .venv, build Java modules (idempotent, root)"
	@echo "make run    - the main job: the quick campaign (Table-5 matrix) on the embedded testbed"
	@echo "make test   - all tests (unit + integration in real namespaces + JUnit)"
	@echo "make bench  - benchmarks, JSON results in bench/results/"

setup:
	@bash scripts/setup.sh

run: setup
	$(QOSLAB) campaign run playbooks/quick.yaml

test: setup test-java test-python

test-java:
	mvn -B -q test

test-python:
	$(PYTEST) -q tests

bench: setup
	$(VENV)/bin/python bench/run_benchmarks.py

clean:
	rm -rf $(VENV) .setup
	mvn -q -B clean || true
