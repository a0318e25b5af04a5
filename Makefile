# One-command setup on a fresh machine with Python 3.11 and pip.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo check test test-fast bench bench-startup reports clean

# A dropped connection to the package index should not fail the set-up: pip resumes a cut
# download (PIP_RESUME_RETRIES; older pips ignore it) and the install is tried three times.
$(BIN)/yahtzee-sim: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	export PIP_RESUME_RETRIES=20; \
	for attempt in 1 2 3; do \
	    $(BIN)/pip install --quiet --retries 10 --upgrade pip \
	    && $(BIN)/pip install --quiet --retries 10 -e '.[test]' && break; \
	    [ $$attempt = 3 ] && exit 1; echo "install failed (attempt $$attempt of 3), retrying" >&2; sleep 10; \
	done
	$(BIN)/python -m yahtzee_sim.exact.compile_ahead   # the numba kernels, on both cores (a wheel has them built in)
	touch $@

# The main job: check the source documents' claims and compare the strategies; writes reports/.
demo: $(BIN)/yahtzee-sim
	$(BIN)/yahtzee-sim run experiments/claims.toml experiments/strategies.toml

# The linter (ruff) and the type checker of the public API (mypy); both are configured
# in pyproject.toml.
check: $(BIN)/yahtzee-sim
	$(BIN)/ruff check yahtzee_sim tests benchmarks
	$(BIN)/mypy

# The checks, then the whole suite, doctests included (what CI runs), on every core (pytest-xdist).
test: check
	$(BIN)/python -m pytest -n auto --dist worksteal --durations=25

# The same without the large statistical checks marked slow: for a quick run while working.
test-fast: $(BIN)/yahtzee-sim
	$(BIN)/python -m pytest -n auto --dist worksteal -m "not slow"

bench: $(BIN)/yahtzee-sim
	$(BIN)/pip install --quiet -e '.[test,bench]'   # yatzy-solver, for the side-by-side solve
	$(BIN)/python benchmarks/bench_simulate.py
	$(BIN)/python benchmarks/bench_solver.py

bench-startup: $(BIN)/yahtzee-sim
	$(BIN)/python benchmarks/bench_startup.py

# Regenerate every committed report.
reports: $(BIN)/yahtzee-sim
	$(BIN)/yahtzee-sim run experiments/*.toml experiments/exact/*.toml
	$(BIN)/yahtzee-sim benchmark heuristic --against optimal --seed 1 --out reports/benchmark

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
