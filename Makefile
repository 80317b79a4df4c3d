# The Quick start: `make run` opens the workbench, `make test` runs the tests.
# Both create .venv on first use (Python 3.11+, packages from PyPI only).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test sweep bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[test]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/gpu-workbench

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

sweep: $(STAMP)
	$(BIN)/gpu-workbench run --workload source_terms --sizes 2^10:2^24:x4 --out results.csv --force

bench: $(STAMP)
	$(BIN)/python benchmarks/fidelity_cpu.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/gui_responsiveness.py

clean:
	rm -rf $(VENV) build *.egg-info
