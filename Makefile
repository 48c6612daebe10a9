# vnetbench — the two entry points: `make demo` (main job) and `make test`.
# Both install what they need (apt packages, a Python venv with the package and its Rust probe)
# and are idempotent: re-running skips what is already in place.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
VNB := $(VENV)/bin/vnetbench
APT_PACKAGES := iperf3 iputils-ping ethtool openvswitch-switch tcpdump iproute2 procps openssh-server openssh-client chromium postgresql
INSTALL_STAMP := $(VENV)/.installed
DEMO_DB ?= out/demo.db

.PHONY: demo dashboard test test-stress setup apt-deps lint clippy bench clean-leftovers constraints help

help:
	@echo "make demo   - install everything, run the quickstart campaign here, write its report"
	@echo "make dashboard - serve the live dashboard of the demo's store on http://127.0.0.1:8765/"
	@echo "make test   - install everything, run the test suite (integration tests need root)"
	@echo "make lint   - ruff, the import layers (lint-imports), cargo clippy"
	@echo "make test-stress [RUNS=5 STRESSED_RUNS=3] - the suite N times, then M times beside stress-ng; tallies failures"
	@echo "make bench  - run the benchmarks in benchmarks/"
	@echo "make constraints - re-pin constraints.txt (the Python versions make setup installs) to the newest allowed"

demo: setup
	$(VNB) scenarios run quickstart --db $(DEMO_DB) --report reports/quickstart
	@echo "open reports/quickstart/index.html, or the live dashboard: make dashboard"

dashboard: setup
	$(VNB) dashboard --db $(DEMO_DB) --report reports

# cargo test without --quiet: the pretty format prints every ignored test with its reason
# (probe/tests/kernel_features.rs), so a CI log shows what was not tested here and why.
# Test files run in parallel workers (pytest-xdist): every test builds its namespaces under its own
# campaign id and mostly waits on real traffic, so 3 workers on 2 cores take about half the time of
# one; a file's tests stay on one worker (--dist loadfile), so a module's fixture is built once.
# Tests marked `timing` (the precision of emulated delay, jitter and shaped rates) then run alone:
# beside two other workers a delay node's replies came 0.3 ms late. PYTEST_ARGS="-p no:xdist" runs
# the first phase one test at a time.
PYTEST_ARGS ?= -n 3 --dist loadfile
test: setup
	$(PY) -m pytest -q -rs $(PYTEST_ARGS) -m "not timing" tests
	$(PY) -m pytest -q -rs -p no:xdist -m timing tests
	cd probe && cargo test --release

# Flakiness check: the whole suite RUNS times back to back, then STRESSED_RUNS times while
# stress-ng keeps STRESS_CPUS cores busy; prints a row per run and every test that ever failed.
RUNS ?= 5
STRESSED_RUNS ?= 3
STRESS_CPUS ?= 1
test-stress: setup
	$(PY) scripts/test_stress.py --runs $(RUNS) --stressed-runs $(STRESSED_RUNS) --stress-cpus $(STRESS_CPUS)

lint: setup clippy
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/ruff format --check src tests benchmarks scripts
	$(VENV)/bin/lint-imports
	cd probe && cargo clippy --all-targets --quiet -- -D warnings

# clippy: from rustup where cargo came from rustup, else Debian's package
clippy:
	@cargo clippy --version >/dev/null 2>&1 || { command -v rustup >/dev/null 2>&1 && rustup component add clippy; } \
	  || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq --no-install-recommends rust-clippy >/dev/null; }

setup: apt-deps $(INSTALL_STAMP)

# apt: only when a tool is missing (apt-get update once, then install)
apt-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if ! command -v cargo >/dev/null 2>&1; then missing="$$missing cargo rustc"; fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The venv is rebuilt when the package's metadata, the pinned versions or the probe's sources change.
# constraints.txt pins every Python package to the version the suite last passed with, so a fresh
# clone installs what CI tested (a new ruff or pandas release cannot change lint or numbers
# unannounced); pyproject.toml's ranges stay for installing vnetbench into an environment of yours.
$(INSTALL_STAMP): pyproject.toml constraints.txt probe/Cargo.toml $(shell find probe/src -name '*.rs' 2>/dev/null)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	touch $@

# Re-pin constraints.txt to the newest releases pyproject.toml allows, in a throw-away venv;
# run `make test` on the result before committing it.
PIN_VENV := .venv-pin
constraints:
	rm -rf $(PIN_VENV) && python3 -m venv $(PIN_VENV)
	$(PIN_VENV)/bin/python -m pip install -q --upgrade pip
	$(PIN_VENV)/bin/python -m pip install -q -e '.[dev]'
	{ echo "# Every Python package make setup installs, at the version the suite passed with (see Makefile)."; \
	  echo "# Regenerate with: make constraints"; \
	  $(PIN_VENV)/bin/python -m pip freeze --exclude-editable; } > constraints.txt
	rm -rf $(PIN_VENV)

bench: setup
	$(PY) benchmarks/run_all.py

clean-leftovers: setup
	$(VNB) clean
