# One-command setup on a fresh machine with Python 3.11 and pip.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/yahtzee-sim: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# The main job: simulate the default rule set and print the summary.
demo: $(BIN)/yahtzee-sim
	$(BIN)/yahtzee-sim simulate --rules yahtzee --strategy keep-largest --games 1000000 --seed 2026

test: $(BIN)/yahtzee-sim
	$(BIN)/python -m pytest

bench: $(BIN)/yahtzee-sim
	$(BIN)/python benchmarks/bench_simulate.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
