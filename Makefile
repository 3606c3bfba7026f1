# Set-up and run: `make demo` (the main job) and `make test` (the test suite);
# `make docs`, `make figures`, `make tutorials` and `make dist` build the site, the docs' figures,
# the notebooks' outputs, the wheel (the library only: bandit_experiments/ runs from the clone).
# Each creates the virtual environment in .venv on first use and installs the package.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# CPU build of torch (on this project's machines it installs from local disk);
# override for another platform, e.g. `make test TORCH_SPEC=torch`.
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: demo test docs figures tutorials dist lint format clean

$(STAMP): pyproject.toml Makefile
	@echo "Creating $(VENV) and installing torch, BoTorch, Ax and the package (a few minutes)..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	@# setuptools warns in a box that ./botorch_bandits could shadow the installed package:
	@# here it is that package (the editable install points at it), so the warning is dropped
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet -e ".[dev,ax]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/botorch-bandits demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest

# the documentation site, warnings as errors (the tests build it too)
docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "open docs/_build/html/index.html"

# the docs' figures rendered again from docs/data (a research command of bandit_experiments/)
figures: $(STAMP)
	$(BIN)/python -m bandit_experiments docs-figures

# run every tutorial at full size and store its outputs in the notebook
tutorials: $(STAMP)
	$(BIN)/python tutorials/execute.py

# a wheel and an sdist in dist/
dist: $(STAMP)
	$(BIN)/python -m build --outdir dist .

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache docs/_build build dist
